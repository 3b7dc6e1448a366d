// The boundary table: one BoundaryRow per judged (pass, boundary), in execution order, built
// from the gate's verdicts. The verdict is always the gate's (it weighs both oracles); the oracle
// choice only selects which comparison the numeric columns, the contract and the badges show:
// native vs the reference ('reference') or native vs the fp64 oracle ('fp64').
//
// A row depends only on its own verdict, the bundles and whether it is the first divergence, so
// judging a later pass never changes an earlier row: the first divergence can only move from
// "none" to a new row. That is what lets getRows send a step's rows alone (rows-log.ts), and the
// session build only the rows appended since it last built them.
import { toWire, type BoundaryRef, type BoundaryRow, type OracleChoice } from '../../protocol/inspector-api.ts';
import { pcmStreams } from '../core/audio/pcm-boundary.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { BoundaryEntry, Contract } from '../core/bundle/manifest-schema.ts';
import { emptyCounts, type VerdictCounts } from '../core/gate/gate-types.ts';
import type { RowComparison, SessionVerdict } from './judge-messages.ts';

export interface RowSources {
  reference: TraceBundle;
  oracle: TraceBundle | null;
  native: TraceBundle | null;
  oracleChoice: OracleChoice;
  /** Contracts by id, as judgeCase filled them in. */
  contracts: Readonly<Record<string, Contract>>;
}

const isDivergence = (verdict: SessionVerdict): boolean => verdict.verdict === 'FAIL' || verdict.verdict === 'REVIEW_REQUIRED';

/** A tolerance as people write it: 1e-6, 0.5, 2.4e-7. */
function tolerance(value: number): string {
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude < 1e-3 || magnitude >= 1e4) {
    const [mantissa = '', exponent = ''] = value.toExponential(2).split('e');
    return `${mantissa.replace(/\.?0+$/, '')}e${exponent.replace('+', '')}`;
  }
  return String(Number(value.toPrecision(3)));
}

function contractText(contract: Contract | null): string {
  if (contract === null) return 'none';
  if (contract.kind === 'bit_exact') return 'bit_exact';
  const parts = [`faithful abs ${tolerance(contract.abs)} rel ${tolerance(contract.rel)}`];
  if (contract.max_ulp !== null) parts.push(`ulp ${contract.max_ulp}`);
  if (contract.oracle_rel !== null) parts.push(`oracle_rel ${tolerance(contract.oracle_rel)}`);
  return parts.join(' ');
}

function shownComparison(verdict: SessionVerdict, choice: OracleChoice): RowComparison | null {
  return choice === 'fp64' ? verdict.oracle : verdict.reference;
}

// A bundle's entries by pass and name: TraceBundle.boundary() searches the pass's list, and a
// 50k-row run asks 50k times (a pass of a real model holds hundreds of boundaries).
const entryIndexes = new WeakMap<TraceBundle, Map<number, Map<string, BoundaryEntry>>>();

function entryOf(bundle: TraceBundle | null, pass: number, name: string): BoundaryEntry | undefined {
  if (bundle === null) return undefined;
  let byPass = entryIndexes.get(bundle);
  if (byPass === undefined) {
    byPass = new Map();
    entryIndexes.set(bundle, byPass);
  }
  let byName = byPass.get(pass);
  if (byName === undefined) {
    byName = new Map();
    // The first entry of a name wins, as in boundary().
    for (const entry of bundle.passes[pass]?.boundaries ?? []) if (!byName.has(entry.name)) byName.set(entry.name, entry);
    byPass.set(pass, byName);
  }
  return byName.get(name);
}

/** The contract the shown comparison used, else the one its base bundle declares. */
function contractOf(verdict: SessionVerdict, sources: RowSources, shown: RowComparison | null): Contract | null {
  if (shown !== null) return sources.contracts[shown.contractId] ?? null;
  const base = sources.oracleChoice === 'fp64' ? sources.oracle : sources.reference;
  return entryOf(base, verdict.pass, verdict.boundary)?.contract ?? null;
}

/**
 * The rows of the run's verdicts (in execution order) from index `from` on, given those verdicts
 * and the index of the run's first divergence (-1: none): rows before `from` do not depend on the
 * ones after (see above), so a caller holding them appends.
 */
export function buildRows(verdicts: readonly SessionVerdict[], sources: RowSources, from = 0, first = verdicts.findIndex(isDivergence)): BoundaryRow[] {
  // From the reference whichever oracle is shown: it is what the audio panel plays.
  const pcm = pcmStreams(sources.reference);
  return verdicts.map((verdict, at): BoundaryRow => {
    const order = from + at;
    const shown = shownComparison(verdict, sources.oracleChoice);
    const entry = entryOf(sources.reference, verdict.pass, verdict.boundary) ?? entryOf(sources.native, verdict.pass, verdict.boundary) ?? null;
    const passEntry = sources.reference.passes[verdict.pass] ?? sources.native?.passes[verdict.pass];
    const contract = contractOf(verdict, sources, shown);
    // A structural failure compared no values: its zero statistics would read as "exact".
    const measured = shown !== null && shown.structural === null;
    const census = shown?.census;
    return {
      id: `${verdict.pass}:${verdict.boundary}`,
      order,
      pass: verdict.pass,
      passKind: passEntry?.kind ?? (verdict.pass === 0 ? 'prefill' : 'decode'),
      boundary: verdict.boundary,
      stage: verdict.stage,
      dtype: shown?.dtype ?? entry?.dtype ?? '',
      shape: [...(shown?.shape ?? entry?.shape ?? [])],
      contract: contractText(contract),
      contractKind: contract === null ? 'none' : contract.kind,
      verdict: verdict.verdict,
      kind: verdict.kind,
      reason: verdict.reason,
      maxAbs: measured ? toWire(shown.maxAbs) : null,
      maxUlp: measured ? toWire(shown.maxUlp) : null,
      mismatches: shown?.mismatches ?? 0,
      elements: shown?.elements ?? 0,
      badges: {
        nan: census !== undefined && census.native.nan + census.reference.nan > 0,
        inf: census !== undefined && census.native.posInf + census.native.negInf + census.reference.posInf + census.reference.negInf > 0,
        negZero: census !== undefined && census.native.negZero + census.reference.negZero > 0,
        tie: shown?.ties !== null && shown?.ties !== undefined,
      },
      firstDivergence: order === first,
      pcm: pcm.has(verdict.boundary),
    };
  });
}

export function countVerdicts(verdicts: readonly SessionVerdict[]): VerdictCounts {
  const counts = emptyCounts();
  for (const verdict of verdicts) counts[verdict.verdict] += 1;
  return counts;
}

export function firstDivergenceOf(verdicts: readonly SessionVerdict[]): BoundaryRef | null {
  const found = verdicts.find(isDivergence);
  return found === undefined ? null : { pass: found.pass, boundary: found.boundary };
}

/** The execution-order index of the first FAIL or REVIEW_REQUIRED in `passes` (in order), -1 when none. */
export function firstDivergenceIndex(passes: Iterable<readonly SessionVerdict[]>): number {
  let offset = 0;
  for (const verdicts of passes) {
    const at = verdicts.findIndex(isDivergence);
    if (at !== -1) return offset + at;
    offset += verdicts.length;
  }
  return -1;
}

export function hasDivergence(verdicts: readonly SessionVerdict[]): boolean {
  return verdicts.some(isDivergence);
}

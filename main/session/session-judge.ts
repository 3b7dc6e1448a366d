// Judging a session's run with the gate's own judgement (judgeCase), one pass at a time: each
// Step judges only the pass it ran, so a long run costs the same per step at pass 300 as at
// pass 3. Verdicts of different passes are independent, so the per-pass results, concatenated
// in pass order, are exactly what the gate would say about the same native bundle — with one
// exception the code below handles: a contract's audio bounds also hold over the whole PCM
// stream, which no single pass sees. So each step judges the stream of every pass judged so far
// and, as the gate does for a run that ended there, puts a broken stream bound on the newest
// pass's row.
import type { EngineDescription } from '../engine-host/engine-description.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { Contract, RunOutcome } from '../core/bundle/manifest-schema.ts';
import { applyAudioStream, judgeAudioStreams } from '../core/gate/audio-stream-verdicts.ts';
import { judgeCase, type RunStop } from '../core/gate/case-verdicts.ts';
import { emptyCounts, type BoundaryVerdict, type LedgerEntry } from '../core/gate/gate-types.ts';

export interface JudgeContext {
  caseId: string;
  reference: TraceBundle;
  oracle: TraceBundle | null;
  description: EngineDescription;
  ledger: readonly LedgerEntry[];
  /** Filled in as comparisons are made (rows look contracts up here). */
  contracts: Record<string, Contract>;
}

export async function judgePasses(
  context: JudgeContext,
  native: TraceBundle | null,
  passes: readonly number[],
  stop: RunStop | null,
  nativeUnreadable: string | null = null,
  /** Verdicts of the passes judged before these (the stream's earlier part). */
  earlier: readonly BoundaryVerdict[] = [],
): Promise<Map<number, BoundaryVerdict[]>> {
  const judged = await judgeCase({
    caseId: context.caseId,
    reference: context.reference,
    native,
    oracle: context.oracle,
    description: context.description,
    ledger: context.ledger,
    stop,
    nativeUnreadable,
    contracts: context.contracts,
    passes,
    audioStreams: false,
  });
  if (native !== null && nativeUnreadable === null) {
    // Counts are recomputed from the rows by the session; applyAudioStream's are not kept.
    const scratch = emptyCounts();
    const judgedPasses = new Set(passes);
    for (const stream of await judgeAudioStreams(context.reference, native, [...earlier, ...judged.verdicts])) {
      if (judgedPasses.has(stream.verdictPass)) applyAudioStream(judged.verdicts, scratch, stream);
    }
  }
  const byPass = new Map<number, BoundaryVerdict[]>(passes.map((pass) => [pass, []]));
  for (const verdict of judged.verdicts) byPass.get(verdict.pass)?.push(verdict);
  return byPass;
}

/**
 * The boundary order every pass of the reference agrees with: the passes record different
 * subsets (text passes lack the audio boundaries), so the order of first appearance can put a
 * late-appearing boundary after ones it precedes. Boundaries consecutive in a pass give an edge;
 * a topological sort (ties broken by first appearance) merges them. Never throws: a pair the
 * passes order both ways keeps first-appearance order.
 */
function mergedOrder(reference: TraceBundle): string[] {
  const first = new Map<string, number>();
  const after = new Map<string, Set<string>>();
  const before = new Map<string, number>();
  for (const pass of reference.passes) {
    pass.boundaries.forEach((entry, i) => {
      if (!first.has(entry.name)) {
        first.set(entry.name, first.size);
        after.set(entry.name, new Set());
        before.set(entry.name, 0);
      }
      const previous = pass.boundaries[i - 1]?.name;
      if (previous === undefined || after.get(previous)?.has(entry.name)) return;
      after.get(previous)?.add(entry.name);
      before.set(entry.name, (before.get(entry.name) ?? 0) + 1);
    });
  }
  const order: string[] = [];
  const done = new Set<string>();
  const byFirst = [...first.keys()];
  while (order.length < byFirst.length) {
    // The earliest-seen boundary with nothing left before it; on a cycle, the earliest-seen one left.
    const next = byFirst.find((name) => !done.has(name) && (before.get(name) ?? 0) === 0) ?? byFirst.find((name) => !done.has(name));
    if (next === undefined) break;
    done.add(next);
    order.push(next);
    for (const name of after.get(next) ?? []) before.set(name, (before.get(name) ?? 0) - 1);
  }
  return order;
}

/**
 * A catalogue for judging a run opened without its engine: the reference's boundaries in the
 * order every pass agrees with, each expected on every pass the reference records it. So a
 * boundary the reference has and the run lacks is a FAIL (missing), never excused as "not
 * emitted"; boundaries only the run has are gaps (not in the catalogue). Fail-closed where the
 * engine's own catalogue is unknown.
 */
export function catalogueFromReference(reference: TraceBundle): EngineDescription {
  const entries = new Map<string, EngineDescription['boundaries'][number]>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) {
      if (entries.has(entry.name)) continue;
      entries.set(entry.name, { name: entry.name, stage: entry.stage, dtype: entry.dtype, shape: [...entry.shape], emit: 'every_pass', injectable: false, doc: '' });
    }
  }
  return {
    abi_version: 1,
    engine: { name: 'unknown (opened run)', version: '', build_id: '' },
    model: {},
    inputs: [],
    boundaries: mergedOrder(reference).flatMap((name) => entries.get(name) ?? []),
    options: [],
  };
}

const STATUS_WORDS: Readonly<Record<RunOutcome['status'], string>> = {
  completed: 'the run completed',
  engine_error: 'the engine returned an error',
  crashed: 'the engine crashed',
  timeout: 'the engine timed out',
  aborted: 'the run was aborted',
};

/** One sentence naming how a run ended: what happened, in which pass, after which boundary. */
export function describeStop(status: RunOutcome['status'], pass: number, kind: string, lastBoundary: string | null, detail: string): string {
  const where = lastBoundary === null ? 'before its first boundary' : `after boundary ${lastBoundary}`;
  return `${STATUS_WORDS[status]} in pass ${pass} (${kind}), ${where}${detail === '' ? '' : `: ${detail}`}`;
}


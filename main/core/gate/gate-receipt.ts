// The gate's signed receipt: a DSSE envelope over an in-toto Statement v1 (main/core/receipt/).
// Subjects pin what was judged — the engine library, each reference manifest (and oracle
// manifest), the weights — by sha256; the predicate holds the seals, the gaps, every verdict
// with its key statistics, the contracts used, the strict flag, the tool, times and the runs.
// A crashed run gets a receipt too: it is evidence of the failure.
import type { KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import { CanonicalArray } from '../receipt/canonical-json.ts';
import type { Subject } from '../receipt/in-toto.ts';
import { writeReceipt, type WrittenReceipt } from '../receipt/receipt.ts';
import type { BoundaryVerdict, ComparisonRecord, GateResult } from './gate-types.ts';

export const GATE_RECEIPT_FILE_NAME = 'receipt.dsse.json';

/** Subjects in a stable order, each name once (same name and digest: listed once). */
export function gateReceiptSubjects(result: GateResult): Subject[] {
  const subjects: Subject[] = [];
  const seen = new Map<string, string>();
  const add = (name: string, sha256: string): void => {
    const earlier = seen.get(name);
    if (earlier === sha256) return;
    if (earlier !== undefined) throw new Error(`internal: receipt subject "${name}" has two digests`);
    seen.set(name, sha256);
    subjects.push({ name, digest: { sha256 } });
  };
  add(result.engine.subjectName, result.engine.sha256);
  for (const item of result.cases) {
    add(item.reference.subjectName, item.reference.manifestSha256);
    if (item.oracle !== null) add(item.oracle.subjectName, item.oracle.manifestSha256);
    if (item.weights !== null) add(item.weights.subjectName, item.weights.sha256);
  }
  // A contracts file supplied with --contracts decided verdicts: pinned like a manifest.
  const supplied = result.options.referenceContracts;
  if (supplied?.file != null && supplied.sha256 !== null) add(basename(supplied.file), supplied.sha256);
  return subjects;
}

/**
 * Statistics and tolerances in the receipt keep 4 significant digits (integers stay exact): they
 * summarise, the exact values are in the JSON report and the manifests. A run over every
 * committed case has some 15 000 rows; the receipt stays a few MB.
 */
function stat(value: number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  return Number.isFinite(value) && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value;
}

/**
 * Every verdict as one row of a table, grouped by case and pass: column names once, then one
 * array per row (repeating key names would triple the receipt).
 *
 *   referenceContract  "bit_exact", or [abs, rel] of the faithful contract, or
 *                      [abs, rel, max_ulp, oracle_rel] when either of those is set
 *   reference*         native vs the reference under that contract; null when not compared
 *                      (mismatches is the structural problem's name when there is one)
 *   rmseVsOracle       RMS error of native against the fp64 oracle
 *   oracle*            native vs the fp64 oracle under the oracle's contract
 *   referenceAudio     when the reference contract bounds the audio: the record's
 *                      [ESR, SNR dB, MR-STFT, null residual dBFS, null offset, broken bounds]
 *
 * Each contract was read from the reference (or oracle) manifest at (case, pass, boundary); the
 * manifests are subjects of the receipt, so their sha256 pins every contract's full text,
 * derivation included.
 */
export const VERDICT_COLUMNS = [
  'boundary',
  'verdict',
  'kind',
  'gap',
  'ledger',
  'elements',
  'referenceContract',
  'referenceMismatches',
  'referenceMaxAbs',
  'referenceMaxRel',
  'referenceMaxUlp',
  'rmseVsOracle',
  'oracleMismatches',
  'oracleMaxAbs',
  'oracleMaxUlp',
  'referenceAudio',
] as const;

type Cell = string | number | null | (number | string | string[] | null)[];

function audioCell(record: ComparisonRecord | null): Cell {
  const audio = record?.audio;
  if (audio == null) return null;
  const { metrics } = audio;
  return [
    stat(metrics.esr),
    stat(metrics.snrDb),
    stat(metrics.mrStft),
    stat(metrics.nullResidualDbfs),
    metrics.nullOffset,
    audio.violations.map((violation) => violation.bound),
  ];
}

/** Each bounded stream: its passes, metrics, the bounds it was held to and which it broke. */
function audioStreams(item: GateResult['cases'][number]): Record<string, unknown>[] {
  return (item.audio ?? []).map((judgement) => ({
    boundary: judgement.boundary,
    passes: judgement.passRange,
    samples: judgement.samples,
    passed: judgement.passed,
    metrics: {
      esr: stat(judgement.metrics.esr),
      snrDb: stat(judgement.metrics.snrDb),
      mrStft: stat(judgement.metrics.mrStft),
      nullResidualDbfs: stat(judgement.metrics.nullResidualDbfs),
      nullOffset: judgement.metrics.nullOffset,
    },
    bounds: judgement.bounds,
    violations: judgement.violations.map((violation) => ({ bound: violation.bound, value: stat(violation.value), limit: violation.limit })),
  }));
}

function contractCell(result: GateResult, record: ComparisonRecord | null): Cell {
  const contract = record === null ? undefined : result.contracts[record.contractId];
  if (contract === undefined) return null;
  if (contract.kind === 'bit_exact') return 'bit_exact';
  const core = [stat(contract.abs), stat(contract.rel)];
  return contract.max_ulp !== null || contract.oracle_rel !== null ? [...core, contract.max_ulp, stat(contract.oracle_rel)] : core;
}

function verdictRow(result: GateResult, verdict: BoundaryVerdict): Cell[] {
  const reference: ComparisonRecord | null = verdict.reference;
  const oracle: ComparisonRecord | null = verdict.oracle;
  const mismatches = (record: ComparisonRecord | null): Cell => (record === null ? null : record.structural ? record.structural.problem : record.mismatches);
  return [
    verdict.boundary,
    verdict.verdict,
    verdict.kind,
    verdict.gapId,
    verdict.ledgerId,
    reference?.elements ?? oracle?.elements ?? null,
    contractCell(result, reference),
    mismatches(reference),
    stat(reference?.maxAbs),
    stat(reference?.maxRel),
    stat(reference?.maxUlp),
    stat(reference?.oracle?.native.rmse),
    mismatches(oracle),
    stat(oracle?.maxAbs),
    stat(oracle?.maxUlp),
    audioCell(reference),
  ];
}

/** The indices of a case's verdicts by pass, passes in order of first appearance (the table's grouping). */
function rowsByPass(verdicts: readonly BoundaryVerdict[]): Map<number, number[]> {
  const passes = new Map<number, number[]>();
  for (const [index, verdict] of verdicts.entries()) {
    const rows = passes.get(verdict.pass);
    if (rows === undefined) passes.set(verdict.pass, [index]);
    else rows.push(index);
  }
  return passes;
}

function verdictTable(result: GateResult): Record<string, unknown> {
  return {
    columns: VERDICT_COLUMNS,
    cases: result.cases.map((item) => ({
      case: item.id,
      passes: [...rowsByPass(item.verdicts).entries()].map(([pass, rows]) => ({
        pass,
        rows: rows.map((index) => verdictRow(result, item.verdicts[index] as BoundaryVerdict)),
      })),
    })),
  };
}

/**
 * The same table, written row by row into the signed bytes as they are produced (CanonicalArray)
 * instead of built first: the bytes are identical, and a long run's rows never exist as arrays
 * all at once.
 */
function streamedVerdictTable(result: GateResult): Record<string, unknown> {
  return {
    columns: VERDICT_COLUMNS,
    cases: result.cases.map((item) => ({
      case: item.id,
      passes: new CanonicalArray(function* () {
        for (const [pass, rows] of rowsByPass(item.verdicts)) {
          yield {
            pass,
            rows: new CanonicalArray(function* () {
              for (const index of rows) yield verdictRow(result, item.verdicts[index] as BoundaryVerdict);
            }),
          };
        }
      }),
    })),
  };
}

/** The predicate (gate-receipt/v1): plain JSON, non-finite numbers allowed (written as strings). */
export function gateReceiptPredicate(result: GateResult): Record<string, unknown> {
  return predicateWith(result, verdictTable(result));
}

/** gateReceiptPredicate with its verdict table streamed (canonical bytes identical): what is signed. */
export function streamedGateReceiptPredicate(result: GateResult): Record<string, unknown> {
  return predicateWith(result, streamedVerdictTable(result));
}

function predicateWith(result: GateResult, verdicts: Record<string, unknown>): Record<string, unknown> {
  return {
    seals: result.seals.lines,
    fidelity: result.seals.fidelity,
    overall: result.seals.overall,
    reason: result.seals.reason,
    exitCode: result.seals.exitCode,
    strict: result.strict,
    gaps: result.gaps,
    tool: result.tool,
    startedAt: result.startedAt,
    finishedAt: result.finishedAt,
    engine: {
      name: result.engine.name,
      version: result.engine.version,
      buildId: result.engine.buildId,
      abiVersion: result.engine.abiVersion,
      library: result.engine.subjectName,
      sha256: result.engine.sha256,
    },
    options: {
      isolation: result.options.isolation,
      passTimeoutMs: result.options.passTimeoutMs,
      engineOptions: result.options.engineOptions,
      teacherForce: result.options.teacherForce,
      isolate: result.options.isolate,
      ...(result.options.referenceContracts != null
        ? {
            referenceContracts: {
              ...result.options.referenceContracts,
              file: result.options.referenceContracts.file === null ? null : basename(result.options.referenceContracts.file),
            },
          }
        : {}),
    },
    ledger: result.ledger.map((entry) => ({ id: entry.id, boundary: entry.boundary, passes: entry.passes, case: entry.case, reason: entry.reason })),
    counts: result.counts,
    compared: result.compared,
    // Each fails the run on its own (reason nothing_compared), whatever the other cases did.
    emptyCases: result.cases.filter((item) => item.compared === 0).map((item) => item.id),
    firstDivergence:
      result.firstDivergence === null
        ? null
        : (() => {
            const item = result.cases.find((candidate) => candidate.id === result.firstDivergence?.case);
            const verdict = item?.verdicts[result.firstDivergence.index];
            return verdict
              ? { case: verdict.case, pass: verdict.pass, boundary: verdict.boundary, verdict: verdict.verdict, kind: verdict.kind, reason: verdict.reason }
              : null;
          })(),
    cases: result.cases.map((item) => ({
      id: item.id,
      reference: item.reference.subjectName,
      oracle: item.oracle?.subjectName ?? null,
      // The scheme each manifest's file and tensor digests are in (the subjects are the manifests' plain sha256).
      digestSchemes: { reference: item.reference.digestScheme ?? 'sha256', oracle: item.oracle === null ? null : (item.oracle.digestScheme ?? 'sha256') },
      // null: "no weights" (the reference names none; the engine embeds or generates them).
      weights: item.weights?.subjectName ?? null,
      run: {
        status: item.run.outcome.status,
        message: item.run.outcome.message,
        lastPass: item.run.outcome.last_pass,
        lastBoundary: item.run.outcome.last_boundary,
        passesExpected: item.run.passesExpected,
        passesCompleted: item.run.passesCompleted,
        signal: item.run.signal,
      },
      counts: item.counts,
      compared: item.compared,
      audio: audioStreams(item),
    })),
    verdicts,
    // A shard's receipt says which share it judged; a merged one, which shard results it combines.
    ...(result.shard !== undefined ? { shard: result.shard } : {}),
    ...(result.mergedFrom !== undefined ? { mergedFrom: result.mergedFrom } : {}),
  };
}

/** Signs and writes the receipt of `result` to `file` (never overwriting one). */
export async function writeGateReceipt(result: GateResult, file: string, privateKey: KeyObject): Promise<WrittenReceipt> {
  return writeReceipt(file, { subjects: gateReceiptSubjects(result), predicate: streamedGateReceiptPredicate(result), privateKey });
}

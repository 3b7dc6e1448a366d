// What the session's judging workers (judge-worker.ts) and their pool (judge-pool.ts) say to each
// other. Jobs go to a worker as plain objects; everything a worker answers is parsed with zod
// before the session acts on it. A verdict is checked field by field where the session reads it
// (the rows, the counts, the audio stream); the comparison records inside, and the manifest
// entries sent in parts, are carried over as the worker made them (judgeCase, parseManifest)
// and must at least be objects with the fields the session looks them up by. (Not loose objects:
// zod walks every extra key of those, and 50k records of a few dozen keys each is work on the
// thread these checks are meant to keep free.)
import { z } from 'zod';
import type { EngineDescription } from '../engine-host/engine-description.ts';
import type { BundleErrorCode } from '../core/bundle/errors.ts';
import type { SharedPin } from '../core/bundle/file-pins.ts';
import type { BoundaryEntry, BundleManifest, Contract, PassEntry } from '../core/bundle/manifest-schema.ts';
import type { FinishedManifestRead } from '../core/bundle/capture-in-progress.ts';
import type { RunStop } from '../core/gate/case-verdicts.ts';
import type { BoundaryMap } from '../core/compare/boundary-map.ts';
import type { ContractSource } from '../core/compare/contracts-file.ts';
import { VERDICTS, type AudioStreamJudgement, type BoundaryVerdict, type ComparisonRecord, type LedgerEntry } from '../core/gate/gate-types.ts';

/**
 * The fields of a comparison record the session reads (the rows, the provenance inventory). The
 * rest — the witnesses, the class counts, the required tolerances — stays on the worker: receiving
 * it for 50k rows is most of what a slice costs the serving thread, and all of it is garbage there.
 */
export type RowComparison = Pick<
  ComparisonRecord,
  'contractId' | 'structural' | 'dtype' | 'shape' | 'elements' | 'mismatches' | 'maxAbs' | 'maxUlp' | 'census' | 'ties'
>;

/** The gate's BoundaryVerdict as the session keeps it: every field, the comparisons as RowComparison. */
export interface SessionVerdict extends Omit<BoundaryVerdict, 'reference' | 'oracle'> {
  reference: RowComparison | null;
  oracle: RowComparison | null;
}

function rowComparison(record: ComparisonRecord | null): RowComparison | null {
  if (record === null) return null;
  const { contractId, structural, dtype, shape, elements, mismatches, maxAbs, maxUlp, census, ties } = record;
  return { contractId, structural, dtype, shape, elements, mismatches, maxAbs, maxUlp, census, ties };
}

export function sessionVerdict(verdict: BoundaryVerdict): SessionVerdict {
  return { ...verdict, reference: rowComparison(verdict.reference), oracle: rowComparison(verdict.oracle) };
}

/**
 * A bundle the worker opens itself (a manifest of a long run is tens of MB: copying the session's
 * would block the thread that serves the app). `files` is the file list the session opened and
 * verified: the worker refuses a bundle whose manifest now lists anything else, so both judge the
 * same bytes (and every tensor read is checked against its sha256 there as here).
 */
export interface BundleRef {
  /** 'bundle': a finished bundle (manifest.json); 'capture': a capture in progress (its journal), or finished since (grown from its last view: capture-in-progress.ts). */
  readonly kind: 'bundle' | 'capture';
  readonly dir: string;
  readonly files: readonly { readonly path: string; readonly bytes: number; readonly sha256: string }[];
}

/** Everything a worker needs to judge passes of one run, sent once per job. */
export interface JudgeJob {
  readonly caseId: string;
  readonly reference: BundleRef;
  readonly oracle: BundleRef | null;
  readonly native: BundleRef | null;
  readonly description: EngineDescription;
  readonly ledger: readonly LedgerEntry[];
  readonly stop: RunStop | null;
  readonly nativeUnreadable: string | null;
  /**
   * How the session sees the bundles, which the worker opens raw and sees the same way with
   * compare's own code: the reference and the oracle under their contract sources (withContracts;
   * null: the manifest's own), the native run through a map file (applyBoundaryMap). All plain
   * data (a map's name patterns are RegExps, which structured clone keeps).
   */
  readonly views: { readonly reference: ContractSource | null; readonly oracle: ContractSource | null; readonly map: BoundaryMap | null };
}

/**
 * One judgeCase call: whole passes, or (`range` set, one pass) the pass's rows [from, to) in
 * execution order — a long pass is judged in parts. `completes`: the last rows of its passes.
 */
export interface PassSlice {
  readonly passes: readonly number[];
  readonly range: { readonly from: number; readonly to: number } | null;
  readonly completes: boolean;
}

/** Where a bundle is: enough for a worker to open it. */
export type BundlePlace = Pick<BundleRef, 'kind' | 'dir'>;

export type ToWorker =
  | { readonly type: 'open'; readonly places: readonly BundlePlace[] }
  | { readonly type: 'manifest'; readonly requestId: number; readonly place: BundlePlace }
  /**
   * The finished manifest of the capture in `dir` (its view grown to the finished bundle here,
   * capture-in-progress.ts), for a session whose own view validated the first `knownPasses`
   * entries: answered in manifest parts, its passes from `knownPasses` on, the first part with
   * the digests (FinishedSummary).
   */
  | { readonly type: 'finishedCapture'; readonly requestId: number; readonly dir: string; readonly knownPasses: number }
  /** A manifest part received and taken in: the worker may send another. */
  | { readonly type: 'manifestAck'; readonly requestId: number }
  | { readonly type: 'begin'; readonly jobId: number; readonly job: JudgeJob }
  | {
      readonly type: 'slice';
      readonly jobId: number;
      readonly slice: number;
      readonly passes: readonly number[];
      readonly range: PassSlice['range'];
      /** Files the session verified, which the worker reads by their pins rather than hashing them again. */
      readonly pins: readonly SharedPin[];
    }
  | { readonly type: 'audio'; readonly jobId: number; readonly verdicts: readonly SessionVerdict[]; readonly judged: readonly number[] };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** Whether `value` is an object whose `fields` have the given typeof; its other keys are not checked. */
const hasFields = (fields: Readonly<Record<string, 'string' | 'number' | 'object'>>): ((value: unknown) => value is Record<string, unknown>) => {
  const entries = Object.entries(fields);
  return (value: unknown): value is Record<string, unknown> => isRecord(value) && entries.every(([key, type]) => typeof value[key] === type);
};
/** An object whose `fields` have the given typeof; its other keys are kept, unchecked. */
const recordWith = (fields: Readonly<Record<string, 'string' | 'number' | 'object'>>, what: string) =>
  z.custom<Record<string, unknown>>(hasFields(fields), { message: `not ${what}` });
/**
 * An array whose every item passes `check`, checked in one loop: z.array of a z.custom costs
 * zod's bookkeeping per item, and the serving thread receives messages of 500 verdicts or
 * manifest entries back to back (a 50k-row run's manifest is 100 of them, drained in one turn).
 */
const arrayWhere = <T>(check: (item: unknown) => boolean, what: string) =>
  z.custom<T[]>((value) => Array.isArray(value) && value.every(check), { message: `not an array of ${what}` });

const isComparisonRecord = hasFields({
  contractId: 'string',
  dtype: 'string',
  shape: 'object',
  structural: 'object',
  census: 'object',
  ties: 'object',
  elements: 'number',
  mismatches: 'number',
  maxAbs: 'number',
  maxUlp: 'number',
});

const VERDICT_SET: ReadonlySet<unknown> = new Set(VERDICTS);
const ORACLE_SIDES: ReadonlySet<unknown> = new Set(['compared', 'absent', 'lacks', 'not_compared']);
const isComparison = (value: unknown): boolean => value === null || isComparisonRecord(value);
const isNullableString = (value: unknown): boolean => value === null || typeof value === 'string';

/** A BoundaryVerdict: every field the session reads, by type; the object is kept as it came. */
const isVerdict = (value: unknown): boolean =>
  isRecord(value) &&
  typeof value['case'] === 'string' &&
  Number.isSafeInteger(value['pass']) &&
  (value['pass'] as number) >= 0 &&
  typeof value['boundary'] === 'string' &&
  typeof value['stage'] === 'string' &&
  (value['catalogueIndex'] === null || Number.isSafeInteger(value['catalogueIndex'])) &&
  VERDICT_SET.has(value['verdict']) &&
  isNullableString(value['kind']) &&
  typeof value['reason'] === 'string' &&
  isNullableString(value['gapId']) &&
  isNullableString(value['ledgerId']) &&
  typeof value['inReference'] === 'boolean' &&
  typeof value['inNative'] === 'boolean' &&
  isComparison(value['reference']) &&
  ORACLE_SIDES.has(value['oracleSide']) &&
  isComparison(value['oracle']) &&
  typeof value['durationMs'] === 'number';

const AudioJudgementSchema = z.looseObject({
  boundary: z.string(),
  passes: z.array(z.number().int().nonnegative()),
  passRange: z.string(),
  samples: z.number(),
  violations: z.array(z.unknown()),
  passed: z.boolean(),
  verdictPass: z.number().int().nonnegative(),
});

export const FromWorkerSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('slice'),
    jobId: z.number().int(),
    slice: z.number().int().nonnegative(),
    threadId: z.number().int(),
    verdicts: arrayWhere<Record<string, unknown>>(isVerdict, 'boundary verdicts'),
    contracts: z.record(z.string(), z.looseObject({ kind: z.string() })),
  }),
  z.object({ type: z.literal('audio'), jobId: z.number().int(), judgements: z.array(AudioJudgementSchema) }),
  z.object({ type: z.literal('failed'), jobId: z.number().int(), message: z.string() }),
]);

/**
 * A manifest read and validated on a worker, sent in parts of at most MANIFEST_PART_ROWS
 * boundaries: the first carries everything but the passes; each part starts a pass (`pass`) or
 * continues the last one (`pass` null). Each part is a few milliseconds to receive, where the
 * whole manifest of a 50k-row run in one message would hold the serving thread for hundreds.
 */
export interface ManifestPart {
  type: 'manifestPart';
  requestId: number;
  head: Omit<BundleManifest, 'passes'> | null;
  pass: Omit<PassEntry, 'boundaries'> | null;
  boundaries: BoundaryEntry[];
  last: boolean;
  /** On the first part of a finished capture's manifest ('finishedCapture'). */
  finished?: FinishedSummary;
}

/** What a finished capture's manifest adds to its entries (capture-in-progress.ts FinishedManifestRead). */
export type FinishedSummary = Omit<FinishedManifestRead, 'head' | 'passes'>;

export const MANIFEST_PART_ROWS = 500;
/** Manifest parts a worker sends ahead of the session's acknowledgements ('manifestAck'). */
export const MANIFEST_PARTS_IN_FLIGHT = 2;

/** A failure reading a manifest: a BundleError's code, file and issues, or just a message. */
export interface ManifestFailed {
  type: 'manifestFailed';
  requestId: number;
  bundle: { code: BundleErrorCode; file: string; issues: { code: BundleErrorCode; field: string; message: string }[] } | null;
  message: string;
}

const ManifestMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('manifestPart'),
    requestId: z.number().int(),
    head: recordWith({ schema: 'string', kind: 'string', files: 'object', provenance: 'object' }, 'a manifest head').nullable(),
    pass: recordWith({ index: 'number', file: 'string', kind: 'string' }, 'a pass entry').nullable(),
    boundaries: arrayWhere<Record<string, unknown>>(hasFields({ name: 'string', dtype: 'string', shape: 'object', sha256: 'string' }), 'boundary entries'),
    last: z.boolean(),
    finished: z.object({ passDigests: z.array(z.string()), inputsDigest: z.string(), real: z.string(), sha256: z.string() }).optional(),
  }),
  z.object({
    type: z.literal('manifestFailed'),
    requestId: z.number().int(),
    bundle: z
      .object({ code: z.string(), file: z.string(), issues: z.array(z.object({ code: z.string(), field: z.string(), message: z.string() })) })
      .nullable(),
    message: z.string(),
  }),
]);

/** A worker's answer to a manifest request, checked; null when it is not one. */
export function parseManifestMessage(message: unknown): ManifestPart | ManifestFailed | null {
  const parsed = ManifestMessageSchema.safeParse(message);
  // The parts are the worker's parseManifest output, copied exactly by the structured clone.
  return parsed.success ? (parsed.data as unknown as ManifestPart | ManifestFailed) : null;
}

export type FromWorker =
  | { type: 'slice'; jobId: number; slice: number; threadId: number; verdicts: SessionVerdict[]; contracts: Record<string, Contract> }
  | { type: 'audio'; jobId: number; judgements: AudioStreamJudgement[] }
  | { type: 'failed'; jobId: number; message: string };

/** A worker's message, checked; null when it is not one of ours. */
export function parseFromWorker(message: unknown): FromWorker | null {
  const parsed = FromWorkerSchema.safeParse(message);
  // The loose parts (comparison records, contracts, audio metrics) are judgeCase's own types.
  return parsed.success ? (parsed.data as unknown as FromWorker) : null;
}

// What the session's judging workers (judge-worker.ts) and their pool (judge-pool.ts) say to each
// other. Jobs go to a worker as plain objects; everything a worker answers is parsed with zod
// before the session acts on it. A verdict is checked field by field where the session reads it
// (the rows, the counts, the audio stream); the comparison records inside are carried over as the
// worker's judgeCase made them and must at least be objects.
import { z } from 'zod';
import type { EngineDescription } from '../engine-host/engine-description.ts';
import type { Contract } from '../core/bundle/manifest-schema.ts';
import type { RunStop } from '../core/gate/case-verdicts.ts';
import { VERDICTS, type AudioStreamJudgement, type BoundaryVerdict, type LedgerEntry } from '../core/gate/gate-types.ts';

/**
 * A bundle the worker opens itself (a manifest of a long run is tens of MB: copying the session's
 * would block the thread that serves the app). `files` is the file list the session opened and
 * verified: the worker refuses a bundle whose manifest now lists anything else, so both judge the
 * same bytes (and every tensor read is checked against its sha256 there as here).
 */
export interface BundleRef {
  /** 'bundle': a finished bundle (manifest.json); 'capture': a capture in progress (its journal). */
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
}

export type ToWorker =
  | { readonly type: 'open'; readonly places: readonly Pick<BundleRef, 'kind' | 'dir'>[] }
  | { readonly type: 'begin'; readonly jobId: number; readonly job: JudgeJob }
  | { readonly type: 'slice'; readonly jobId: number; readonly slice: number; readonly passes: readonly number[] }
  | { readonly type: 'audio'; readonly jobId: number; readonly verdicts: readonly BoundaryVerdict[]; readonly judged: readonly number[] };

const ComparisonSchema = z.looseObject({ contractId: z.string(), structural: z.unknown() });

const VerdictSchema = z.looseObject({
  case: z.string(),
  pass: z.number().int().nonnegative(),
  boundary: z.string(),
  stage: z.string(),
  catalogueIndex: z.number().int().nullable(),
  verdict: z.enum(VERDICTS),
  kind: z.string().nullable(),
  reason: z.string(),
  gapId: z.string().nullable(),
  ledgerId: z.string().nullable(),
  inReference: z.boolean(),
  inNative: z.boolean(),
  reference: ComparisonSchema.nullable(),
  oracleSide: z.enum(['compared', 'absent', 'lacks', 'not_compared']),
  oracle: ComparisonSchema.nullable(),
  durationMs: z.number(),
});

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
    verdicts: z.array(VerdictSchema),
    contracts: z.record(z.string(), z.looseObject({ kind: z.string() })),
  }),
  z.object({ type: z.literal('audio'), jobId: z.number().int(), judgements: z.array(AudioJudgementSchema) }),
  z.object({ type: z.literal('failed'), jobId: z.number().int(), message: z.string() }),
]);

export type FromWorker =
  | { type: 'slice'; jobId: number; slice: number; threadId: number; verdicts: BoundaryVerdict[]; contracts: Record<string, Contract> }
  | { type: 'audio'; jobId: number; judgements: AudioStreamJudgement[] }
  | { type: 'failed'; jobId: number; message: string };

/** A worker's message, checked; null when it is not one of ours. */
export function parseFromWorker(message: unknown): FromWorker | null {
  const parsed = FromWorkerSchema.safeParse(message);
  // The loose parts (comparison records, contracts, audio metrics) are judgeCase's own types.
  return parsed.success ? (parsed.data as unknown as FromWorker) : null;
}

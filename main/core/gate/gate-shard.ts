// `--gate --shard K/N`: a deterministic share of the cases, so N CI jobs gate one run between
// them and `trace-inspector merge` (gate-merge.ts) combines their results. Every shard sees the
// same list of cases (the CI matrix gives each job the same flags), sorts it by case id, and
// runs the cases whose position i has i mod N == K - 1. A plan digest over everything that
// must agree between the shards (the cases and their reference manifests, the engine library,
// the options that change verdicts, N) is recorded in each shard's result: merge refuses a
// shard whose plan differs (a foreign shard) and names it.
//
// With `--shard-by passes` a shard's share is a contiguous range of the passes of each case
// instead (pass-split.ts): the split is recorded in the result (`by`, `ranges`) and covered by
// the plan digest.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { PassRangeSchema, SHARD_BY, type PassRange, type ShardBy } from './pass-range.ts';

export interface ShardSpec {
  /** 1-based. */
  readonly index: number;
  readonly count: number;
  /** What is shared out: whole cases (default) or the pass ranges of every case. */
  readonly by?: ShardBy;
}

export const ShardInfoSchema = z.strictObject({
  index: z.number().int().min(1),
  count: z.number().int().min(1),
  /** sha256 of the plan every shard of the run shares (shardPlanDigest). */
  plan: z.string().regex(/^[0-9a-f]{64}$/),
  /** Every case of the run, in plan order (sorted by id). */
  cases: z.array(z.string()),
  /** The cases this shard ran. */
  assigned: z.array(z.string()),
  /** Absent: "cases". */
  by: z.enum(SHARD_BY).optional(),
  /** With by "passes": every range of the plan (every shard's), in plan order. */
  ranges: z.array(PassRangeSchema).optional(),
});
export type ShardInfo = z.infer<typeof ShardInfoSchema>;

/** Parses "K/N" (1 <= K <= N); throws an Error whose message says what is wrong. */
export function parseShard(text: string): ShardSpec {
  const match = /^(\d{1,6})\/(\d{1,6})$/.exec(text.trim());
  if (match === null) throw new Error(`--shard "${text}": expected K/N, e.g. 2/4 (the second of four shards)`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || index < 1 || index > count) throw new Error(`--shard ${text}: K must be between 1 and N (N >= 1)`);
  return { index, count };
}

export interface PlanFacts {
  readonly cases: readonly {
    readonly id: string;
    readonly referenceManifestSha256: string;
    readonly oracleManifestSha256: string | null;
    readonly weightsSha256: string | null;
  }[];
  readonly engineSha256: string;
  readonly engineOptions: Readonly<Record<string, string>>;
  readonly strict: boolean;
  readonly teacherForce: boolean;
  readonly isolate: boolean;
  readonly ledgerSha256: string | null;
  readonly count: number;
  /** With --shard-by passes: the split, so that a shard of another split is foreign. */
  readonly passRanges?: readonly PassRange[];
}

/** sha256 of the canonical JSON of what all shards of one run must share. */
export function shardPlanDigest(facts: PlanFacts): string {
  const canonical = {
    cases: [...facts.cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    engineSha256: facts.engineSha256,
    engineOptions: Object.fromEntries(Object.entries(facts.engineOptions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    strict: facts.strict,
    teacherForce: facts.teacherForce,
    isolate: facts.isolate,
    ledgerSha256: facts.ledgerSha256,
    count: facts.count,
    ...(facts.passRanges !== undefined ? { split: { by: 'passes', ranges: facts.passRanges } } : {}),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The case ids in plan order (sorted) and the ones shard `spec` runs. */
export function shardAssignment(caseIds: readonly string[], spec: ShardSpec): { cases: string[]; assigned: string[] } {
  const cases = [...caseIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (spec.count > cases.length) {
    throw new Error(
      `--shard ${spec.index}/${spec.count}: the run has ${cases.length} case(s), so at most ${cases.length} shard(s); every shard must have a case to judge ` +
        '(--shard-by passes splits the passes of each case instead)',
    );
  }
  return { cases, assigned: cases.filter((_, i) => i % spec.count === spec.index - 1) };
}

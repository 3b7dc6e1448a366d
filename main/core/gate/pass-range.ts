// The data of a pass split (pass-split.ts), apart from its logic so that the shard record
// (gate-shard.ts) can name it without importing what judges.
import { z } from 'zod';

/** What `--shard K/N` shares out: whole cases (`--shard-by cases`, the default) or pass ranges of every case. */
export const SHARD_BY = ['cases', 'passes'] as const;
export type ShardBy = (typeof SHARD_BY)[number];

export const PassRangeSchema = z.strictObject({
  case: z.string(),
  /** 1-based shard index. */
  shard: z.number().int().min(1),
  /** First pass of the range. */
  from: z.number().int().nonnegative(),
  /** One past its last pass. */
  to: z.number().int().nonnegative(),
});
export type PassRange = z.infer<typeof PassRangeSchema>;

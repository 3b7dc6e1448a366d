// Contracts for hand-made test and benchmark bundles. The tolerances are the test's choice; the
// derivation only has to satisfy the schema (the comparator never reads it).
import type { FaithfulContract } from '../../main/core/bundle/manifest-schema.ts';

export type FaithfulOptions = Partial<Omit<FaithfulContract, 'kind' | 'derivation'>> & { formula?: string };

/** A faithful contract: abs and rel default to 0, no max_ulp / oracle_rel / audio unless given. */
export function faithfulContract(options: FaithfulOptions = {}): FaithfulContract {
  return {
    kind: 'faithful',
    abs: options.abs ?? 0,
    rel: options.rel ?? 0,
    max_ulp: options.max_ulp ?? null,
    oracle_rel: options.oracle_rel ?? null,
    nan_policy: options.nan_policy ?? 'positions',
    signed_zero: options.signed_zero ?? 'ignore',
    derivation: {
      storage_dtype: 'F32',
      accumulation_dtype: 'F32',
      accumulation_length: 1,
      reduction_order: 'unspecified',
      formula: options.formula ?? 'test tolerance',
      allowed_differences: 'test',
    },
    ...(options.audio !== undefined ? { audio: options.audio } : {}),
  };
}

// A hand-made comparator result for the verdict and report tests: a complete BoundaryComparison
// (every field the type has, no cast) of a boundary that passed cleanly, to be overridden field
// by field. Shared by verdicts.test.ts and reports.test.ts.
import { elementCount, type DType } from '../../main/core/bundle/dtype.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { MISMATCH_CLASSES } from '../../main/core/compare/compare-kernels.ts';
import type { BoundaryComparison, MismatchClass, SideCensus } from '../../main/core/compare/comparison-types.ts';
import type { ComparisonRecord } from '../../main/core/gate/gate-types.ts';

/** Zero mismatches of every class the comparator knows (from its own list, so a new class is counted). */
export function noClasses(): Record<MismatchClass, number> {
  return Object.fromEntries(MISMATCH_CLASSES.map((mismatchClass) => [mismatchClass, 0])) as Record<MismatchClass, number>;
}

/** A census of `finite` finite, normal, nonzero values. */
export function finiteCensus(finite: number): SideCensus {
  return { nan: 0, posInf: 0, negInf: 0, negZero: 0, subnormal: 0, finite };
}

export interface ComparisonAt {
  pass: number;
  boundary: string;
  stage: string;
  shape: number[];
  contract: Contract;
  dtype?: DType;
}

/** Every element compared, none outside the contract. */
export function cleanComparison(at: ComparisonAt, over: Partial<BoundaryComparison> = {}): BoundaryComparison {
  const elements = elementCount(at.shape);
  return {
    pass: at.pass,
    boundary: at.boundary,
    stage: at.stage,
    dtype: at.dtype ?? 'F32',
    shape: [...at.shape],
    contract: at.contract,
    structural: null,
    elements,
    mismatches: 0,
    mismatchShare: 0,
    classes: noClasses(),
    census: { native: finiteCensus(elements), reference: finiteCensus(elements) },
    firstMismatch: null,
    worst: null,
    maxAbs: 0,
    maxRel: 0,
    maxUlp: 0,
    rmse: 0,
    required: { abs: 0, rel: 0, ulp: 0 },
    oracle: null,
    ties: null,
    passed: true,
    gap: null,
    outcome: 'pass',
    compared: elements,
    padded: 0,
    maxAbsExact: null,
    oracleRel: null,
    audio: null,
    notes: [],
    ...over,
  };
}

/** The same as the gate stores it: the contract replaced by its id. */
export function cleanRecord(at: ComparisonAt, contractId: string, over: Partial<ComparisonRecord> = {}): ComparisonRecord {
  const { contract: _stored, ...rest } = cleanComparison(at);
  return { ...rest, contractId, ...over };
}

// The result of comparing one boundary of one pass between a native bundle and a reference
// (or oracle) bundle. Plain JSON-round-trippable data: the gate turns it into verdicts, the
// reports and the receipt serialise it, the app shows it. Non-finite numbers may appear in
// values; serialisers write them as strings.
import type { DType } from '../bundle/dtype.ts';
import type { Contract } from '../bundle/manifest-schema.ts';

/** What kind of disagreement an element (or a whole boundary) shows. */
export type MismatchClass =
  | 'value' // both finite, outside the tolerance
  | 'nan_vs_number' // NaN on one side only
  | 'nan_payload' // both NaN, payloads differ, and the NaN policy is positions_and_payload
  | 'inf_sign' // an infinity against the other infinity or a finite number
  | 'signed_zero' // +0 against -0 where the policy says they must match
  | 'tie_order' // an order/permutation boundary differing only inside a group of tied values
  | 'padding'; // outside the valid region, the padding does not hold what it must

/** Disagreements that make the values not comparable at all. */
export type StructuralProblem = 'missing' | 'dtype' | 'shape' | 'layout';

export interface SideCensus {
  nan: number;
  posInf: number;
  negInf: number;
  negZero: number;
  subnormal: number;
  finite: number;
}

export interface ElementWitness {
  /** Row-major logical index, and its multi-dimensional form. */
  flatIndex: number;
  index: number[];
  /** Values as numbers; bigint-range integers as decimal strings; complex as "re+imj". */
  native: number | string;
  reference: number | string;
  absError: number;
  ulp: number;
  class: MismatchClass;
}

/** Error of a bundle against the fp64 oracle. */
export interface OracleError {
  maxAbs: number;
  rmse: number;
}

export interface TieAnalysis {
  /** The value at the top-k threshold and the indices (reference side) tied with it. */
  threshold: number;
  group: number[];
  /** Whether native ordered the tie group as the reference did. */
  orderAgrees: boolean;
}

export interface BoundaryComparison {
  pass: number;
  boundary: string;
  stage: string;
  dtype: DType;
  shape: number[];
  contract: Contract;
  /** Set when the values could not be compared (then the element statistics are zero). */
  structural: { problem: StructuralProblem; detail: string } | null;
  elements: number;
  mismatches: number;
  mismatchShare: number;
  classes: Record<MismatchClass, number>;
  census: { native: SideCensus; reference: SideCensus };
  firstMismatch: ElementWitness | null;
  worst: ElementWitness | null;
  maxAbs: number;
  maxRel: number;
  maxUlp: number;
  rmse: number;
  /** The smallest tolerances under which every element would have passed (the margin a reviewer sees). */
  required: { abs: number; rel: number; ulp: number };
  /** Against the fp64 oracle when one was given: the error of the native run and of the reference. */
  oracle: { native: OracleError; reference: OracleError } | null;
  ties: TieAnalysis | null;
  /** Inside the contract, every element (and no structural problem). */
  passed: boolean;
}

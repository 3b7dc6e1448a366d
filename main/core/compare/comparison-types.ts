// The result of comparing one boundary of one pass between a native bundle and a reference
// (or oracle) bundle. Plain JSON-round-trippable data: the gate turns it into verdicts, the
// reports and the receipt serialise it, the app shows it. Non-finite numbers may appear in
// values; serialisers write them as strings.
import type { DType } from '../bundle/dtype.ts';
import type { AudioBoundName, AudioBounds, Contract } from '../bundle/manifest-schema.ts';

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

/**
 * Counts over one side's values inside the valid region (C64: over its re/im components).
 * nan + posInf + negInf + finite = the values counted; negZero and subnormal are subsets of finite.
 */
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
  /** The element's class when it mismatches; 'value' for a passing element shown as the worst. */
  class: MismatchClass;
  /** Whether the element is outside the contract (false only for a passing `worst`). */
  mismatch: boolean;
  /** Raw bits as hex ("0x3f800000"; complex "0x3f800000,0x00000000"), for NaN payloads and signed zeros. */
  nativeBits: string;
  referenceBits: string;
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

/** The audio metrics of a native PCM signal against its reference (docs/audio.md). */
export interface AudioMetricValues {
  esr: number;
  snrDb: number;
  mrStft: number;
  nullResidualDbfs: number;
  /** The null test's best-aligning offset: native[i + offset] lines up with reference[i]. */
  nullOffset: number;
}

/** A bound the metrics broke: which, the value measured and the bound it broke. */
export interface AudioViolation {
  bound: AudioBoundName;
  value: number;
  limit: number;
}

/** The audio metrics of one record (the valid samples of one pass) judged against the contract's bounds. */
export interface AudioComparison {
  /** Valid samples measured (the reference's valid region). */
  samples: number;
  metrics: AudioMetricValues;
  bounds: Omit<AudioBounds, 'derivation'>;
  /** Every bound broken, in AUDIO_BOUND_NAMES order; empty when inside them all. */
  violations: AudioViolation[];
  passed: boolean;
}

export interface BoundaryComparison {
  pass: number;
  boundary: string;
  stage: string;
  dtype: DType;
  shape: number[];
  contract: Contract;
  /** Set when the values could not be compared (then the element statistics are zero; a 'layout' result keeps the census). */
  structural: { problem: StructuralProblem; detail: string } | null;
  elements: number;
  mismatches: number;
  mismatchShare: number;
  classes: Record<MismatchClass, number>;
  census: { native: SideCensus; reference: SideCensus };
  firstMismatch: ElementWitness | null;
  worst: ElementWitness | null;
  /** Over pairs finite on both sides, inside the valid region. */
  maxAbs: number;
  /**
   * The largest relative error in the form the tolerance test uses: the smallest rel with
   * |n - r| <= rel * |r| for every finite pair (within one double ULP of max |n - r| / |r|;
   * Infinity when a reference zero meets a nonzero native). Equal to required.rel.
   */
  maxRel: number;
  /** ULPs counted on the dtype's own bits (bf16/f16: 16, f32 and C64 components: 32, f64: 64; ±0 one point). */
  maxUlp: number;
  rmse: number;
  /**
   * The smallest tolerances under which every element would have passed (the margin a reviewer sees),
   * each alone and exact in double arithmetic: abs with rel = 0 (= maxAbs), rel with abs = 0 (= maxRel),
   * max_ulp alone (= maxUlp). Over finite pairs: NaN, infinity, signed-zero, padding and tie-order
   * mismatches are not a matter of tolerance (see `classes`).
   */
  required: { abs: number; rel: number; ulp: number };
  /** Against the fp64 oracle when one was given: the error of the native run and of the reference. */
  oracle: { native: OracleError; reference: OracleError } | null;
  ties: TieAnalysis | null;
  /** Inside the contract, every element (and no structural problem). */
  passed: boolean;
  /**
   * Why the boundary could not be (fully) judged, or null: the reference lacks it, no contract,
   * or the contract's oracle_rel needs an oracle that is absent or lacks the boundary. When set,
   * `passed` is false; the gate turns it into a GAP unless the values themselves failed.
   */
  gap: string | null;
  /** The verdict the fields imply: 'fail' (structural or element failure, the oracle bound, or an audio bound), else 'gap' when gap is set, else 'pass'. */
  outcome: 'pass' | 'fail' | 'gap';
  /** Elements compared by value (inside the valid region) and elements past it (padding). */
  compared: number;
  padded: number;
  /** Integer dtypes: the exact max |n - r| as a decimal string (maxAbs rounds beyond 2^53); null for floats. */
  maxAbsExact: string | null;
  /** The oracle_rel check: RMS(native - oracle) <= bound * RMS(oracle), over elements finite on both. */
  oracleRel: { bound: number; nativeRmse: number; oracleRms: number; passed: boolean } | null;
  /**
   * Audio metrics of this record against its reference, when the contract bounds them (a
   * faithful contract with `audio`); null otherwise. A broken bound fails the comparison.
   */
  audio: AudioComparison | null;
  /** Informative remarks: a skipped layout check, an incompatible oracle, ... */
  notes: string[];
}

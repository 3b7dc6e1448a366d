// Element-wise difference of two tensors of one dtype, in logical (row-major) order.
// This is the quick per-boundary diff the capture table prints: identical or not for exact
// types, max abs / max ULP / elements outside the declared tolerance for float types.
import type { DType } from '../bundle/dtype.ts';
import { DTYPE_SIZE, elementCount } from '../bundle/dtype.ts';
import { ulpDistance16, ulpDistanceF32, ulpDistanceF64 } from './ulp.ts';

/** Tolerance of a faithful contract (element passes when |n-r| <= abs + rel*|r| or ulp <= maxUlp). */
export interface ElementTolerance {
  abs: number;
  rel: number;
  maxUlp: number | null;
  signedZeroMustMatch: boolean;
}

export interface ElementDiff {
  elements: number;
  /** Elements whose bits differ (NaN vs NaN with another payload counts as equal). */
  differing: number;
  /** Elements outside the tolerance (equal to `differing` when no tolerance is given). */
  outside: number;
  maxAbs: number;
  maxUlp: number;
  /** Logical index of the first element outside the tolerance, -1 when none. */
  firstOutside: number;
}

function aligned(data: Uint8Array, bytesPerElement: number): Uint8Array {
  if (data.byteOffset % bytesPerElement === 0) return data;
  return data.slice();
}

function floatValues(dtype: DType, data: Uint8Array): ArrayLike<number> {
  const bytes = aligned(data, DTYPE_SIZE[dtype] === 8 ? 8 : 4);
  if (dtype === 'F64') return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
  // C64 is compared as its interleaved float32 components.
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

/** f16/bf16 bits to their float value. */
function halfToFloat(dtype: DType, bits: number): number {
  if (dtype === 'BF16') {
    const scratch = new Float32Array(new Uint32Array([bits << 16]).buffer);
    return scratch[0] as number;
  }
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

function isNegativeZero(value: number): boolean {
  return value === 0 && 1 / value < 0;
}

/**
 * Judge one pair of float values. Returns [outside, absError, ulp].
 * NaN positions must match (payloads may differ); infinities must match exactly.
 */
function judge(
  native: number,
  reference: number,
  ulp: number,
  tolerance: ElementTolerance | null,
): [boolean, number] {
  const nativeNaN = Number.isNaN(native);
  const referenceNaN = Number.isNaN(reference);
  if (nativeNaN || referenceNaN) return [nativeNaN !== referenceNaN, nativeNaN === referenceNaN ? 0 : Infinity];
  if (!Number.isFinite(native) || !Number.isFinite(reference)) {
    return [native !== reference, native === reference ? 0 : Infinity];
  }
  const absError = Math.abs(native - reference);
  if (tolerance === null) return [absError !== 0 || isNegativeZero(native) !== isNegativeZero(reference), absError];
  if (tolerance.signedZeroMustMatch && native === 0 && reference === 0) {
    return [isNegativeZero(native) !== isNegativeZero(reference), 0];
  }
  const withinAbsRel = absError <= tolerance.abs + tolerance.rel * Math.abs(reference);
  const withinUlp = tolerance.maxUlp !== null && ulp <= tolerance.maxUlp;
  return [!(withinAbsRel || withinUlp), absError];
}

/**
 * Compare two equally shaped tensors. `tolerance` null means bit-exact (for floats: equal
 * bits, except that any NaN equals any NaN).
 */
export function diffElements(
  dtype: DType,
  shape: readonly number[],
  native: Uint8Array,
  reference: Uint8Array,
  tolerance: ElementTolerance | null,
): ElementDiff {
  const count = elementCount(shape);
  const result: ElementDiff = { elements: count, differing: 0, outside: 0, maxAbs: 0, maxUlp: 0, firstOutside: -1 };
  const note = (index: number, outside: boolean, differs: boolean, absError: number, ulp: number): void => {
    if (differs) result.differing += 1;
    if (outside) {
      result.outside += 1;
      if (result.firstOutside < 0) result.firstOutside = index;
    }
    if (absError > result.maxAbs) result.maxAbs = absError;
    if (ulp > result.maxUlp) result.maxUlp = ulp;
  };

  if (dtype === 'F32' || dtype === 'F64' || dtype === 'C64') {
    const n = floatValues(dtype, native);
    const r = floatValues(dtype, reference);
    const ulpOf = dtype === 'F64' ? ulpDistanceF64 : ulpDistanceF32;
    const componentsPerElement = dtype === 'C64' ? 2 : 1;
    for (let i = 0; i < n.length; i += 1) {
      const a = n[i] as number;
      const b = r[i] as number;
      const bothNaN = Number.isNaN(a) && Number.isNaN(b);
      const ulp = bothNaN ? 0 : ulpOf(a, b);
      const differs = !bothNaN && (a !== b || isNegativeZero(a) !== isNegativeZero(b));
      const [outside, absError] = judge(a, b, ulp, tolerance);
      note(Math.floor(i / componentsPerElement), outside, differs, absError, ulp);
    }
    return result;
  }

  if (dtype === 'F16' || dtype === 'BF16') {
    const n = new Uint16Array(aligned(native, 2).slice().buffer);
    const r = new Uint16Array(aligned(reference, 2).slice().buffer);
    for (let i = 0; i < count; i += 1) {
      const a = halfToFloat(dtype, n[i] as number);
      const b = halfToFloat(dtype, r[i] as number);
      const bothNaN = Number.isNaN(a) && Number.isNaN(b);
      const ulp = bothNaN ? 0 : ulpDistance16(n[i] as number, r[i] as number);
      const differs = !bothNaN && n[i] !== r[i];
      const [outside, absError] = judge(a, b, ulp, tolerance);
      note(i, outside, differs, absError, ulp);
    }
    return result;
  }

  // Integer and bool types: exact, element by element on their bytes.
  const size = DTYPE_SIZE[dtype];
  for (let i = 0; i < count; i += 1) {
    let differs = false;
    for (let b = 0; b < size; b += 1) {
      if (native[i * size + b] !== reference[i * size + b]) {
        differs = true;
        break;
      }
    }
    note(i, differs, differs, 0, 0);
  }
  return result;
}

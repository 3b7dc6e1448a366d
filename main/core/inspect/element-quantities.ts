// Per-element quantities of a window, in flat typed arrays (no per-element objects), shared by
// the tensor view, the series and the error statistics. The conventions are the comparator's
// (compare-kernels.ts), so a cell, a bucket and a witness agree about the same element:
// - |diff| over finite pairs; a pair with a NaN or an infinity on a side counts as Infinity
//   when it mismatches (NaN vs number, an infinity against anything else) and 0 when it does not
//   (two NaNs, equal infinities), as the comparator's witnesses rank them;
// - ULPs on the dtype's own bits (+0 and -0 are one point); integers count |diff| as their ULPs;
// - C64: an element's |diff| and ULPs are the larger of its components'; its value is the
//   component of larger magnitude (the comparator's magnitude for complex padding witnesses).
// flags[e] marks a NaN (NAN) and an infinity (INF) on either side present.
import { DTYPE_SIZE, isFloatDType, type DType } from '../bundle/dtype.ts';
import { decodeUnits } from '../compare/decode-units.ts';
import { ulp16, ulp32, ulp64, unitsPerElement } from '../compare/compare-kernels.ts';

export const NAN = 1;
export const INF = 2;

export type Quantity = 'abs_diff' | 'ulp' | 'reference' | 'native';

/** Decoded values of the current window, per side (units: elements, or C64 components). */
export class WindowValues {
  readonly dtype: DType;
  readonly units: number;
  readonly native: Float64Array | null;
  readonly reference: Float64Array | null;
  private nativeBytes: Uint8Array | null = null;
  private referenceBytes: Uint8Array | null = null;
  // Bit views of the window's bytes for the ULP path (32-bit words, or 16-bit halves).
  private nativeWords: Int32Array | null = null;
  private referenceWords: Int32Array | null = null;
  private nativeHalves: Uint16Array | null = null;
  private referenceHalves: Uint16Array | null = null;

  constructor(dtype: DType, windowElements: number, sides: { native: boolean; reference: boolean }) {
    this.dtype = dtype;
    this.units = unitsPerElement(dtype);
    this.native = sides.native ? new Float64Array(windowElements * this.units) : null;
    this.reference = sides.reference ? new Float64Array(windowElements * this.units) : null;
  }

  /** Points at a new window's bytes (once per window: the bit views are made here, not per element). */
  attach(native: Uint8Array | null, reference: Uint8Array | null): void {
    this.nativeBytes = native;
    this.referenceBytes = reference;
    const half = this.dtype === 'BF16' || this.dtype === 'F16';
    const wide = this.dtype === 'F32' || this.dtype === 'C64' || this.dtype === 'F64';
    this.nativeWords = wide && native !== null ? new Int32Array(native.buffer, native.byteOffset, native.byteLength >> 2) : null;
    this.referenceWords = wide && reference !== null ? new Int32Array(reference.buffer, reference.byteOffset, reference.byteLength >> 2) : null;
    this.nativeHalves = half && native !== null ? new Uint16Array(native.buffer, native.byteOffset, native.byteLength >> 1) : null;
    this.referenceHalves = half && reference !== null ? new Uint16Array(reference.buffer, reference.byteOffset, reference.byteLength >> 1) : null;
  }

  /** Decodes elements [from, to) of the attached window (window-relative). */
  decode(from: number, to: number): void {
    const u = this.units;
    const native = this.nativeBytes;
    const reference = this.referenceBytes;
    if (this.native !== null && native !== null) decodeUnits(this.dtype, native, from * u, (to - from) * u, this.native.subarray(from * u));
    if (this.reference !== null && reference !== null) decodeUnits(this.dtype, reference, from * u, (to - from) * u, this.reference.subarray(from * u));
  }

  /**
   * Writes quantity `q` of elements [from, to) into out/flags at the same window-relative index.
   * For a value quantity, `otherSideFlags` false limits the flags to that side's own values.
   */
  quantity(q: Quantity, from: number, to: number, out: Float64Array, flags: Uint8Array, otherSideFlags = true): void {
    if (q === 'reference' || q === 'native') return this.value(q, from, to, out, flags, otherSideFlags);
    const n = this.native;
    const r = this.reference;
    if (n === null || r === null) throw new Error(`internal: ${q} needs both sides decoded`);
    if (this.dtype === 'I64' || this.dtype === 'U64') return this.int64Diff(from, to, out, flags);
    const u = this.units;
    const onBits = q === 'ulp' && isFloatDType(this.dtype);
    for (let e = from; e < to; e++) {
      let worst = 0;
      let f = 0;
      for (let k = e * u, end = k + u; k < end; k++) {
        const x = n[k] as number;
        const y = r[k] as number;
        let d: number;
        if (x !== x || y !== y) {
          f |= NAN;
          d = x !== x && y !== y ? 0 : Infinity;
        } else if (x - x !== 0 || y - y !== 0) {
          f |= INF;
          d = x === y ? 0 : Infinity;
        } else d = onBits ? this.ulpOf(k) : Math.abs(x - y);
        if (d > worst) worst = d;
      }
      out[e] = worst;
      flags[e] = f;
    }
  }

  private value(side: 'reference' | 'native', from: number, to: number, out: Float64Array, flags: Uint8Array, otherSideFlags: boolean): void {
    const v = side === 'reference' ? this.reference : this.native;
    const o = otherSideFlags ? (side === 'reference' ? this.native : this.reference) : null;
    if (v === null) throw new Error(`internal: the ${side} side is not decoded`);
    const u = this.units;
    for (let e = from; e < to; e++) {
      let f = 0;
      let pick = 0;
      let magnitude = -1;
      for (let k = e * u, end = k + u; k < end; k++) {
        const x = v[k] as number;
        if (x !== x) f |= NAN;
        else {
          if (x - x !== 0) f |= INF;
          const m = Math.abs(x);
          if (m > magnitude) {
            magnitude = m;
            pick = x;
          }
        }
        if (o !== null) {
          const y = o[k] as number;
          if (y !== y) f |= NAN;
          else if (y - y !== 0) f |= INF;
        }
      }
      out[e] = pick;
      flags[e] = f;
    }
  }

  /** ULPs of finite unit k, on the dtype's own bits. */
  private ulpOf(k: number): number {
    switch (this.dtype) {
      case 'F32':
      case 'C64':
        return ulp32((this.nativeWords as Int32Array)[k] as number, (this.referenceWords as Int32Array)[k] as number);
      case 'BF16':
      case 'F16':
        return ulp16((this.nativeHalves as Uint16Array)[k] as number, (this.referenceHalves as Uint16Array)[k] as number);
      default: {
        const n = this.nativeWords as Int32Array;
        const r = this.referenceWords as Int32Array;
        return ulp64(n[2 * k + 1] as number, n[2 * k] as number, r[2 * k + 1] as number, r[2 * k] as number);
      }
    }
  }

  /** 64-bit integers: the difference is taken exactly (a double would round it away above 2^53). */
  private int64Diff(from: number, to: number, out: Float64Array, flags: Uint8Array): void {
    const n = this.nativeBytes as Uint8Array;
    const r = this.referenceBytes as Uint8Array;
    const signed = this.dtype === 'I64';
    const size = DTYPE_SIZE[this.dtype];
    const nv = signed ? new BigInt64Array(n.buffer, n.byteOffset, n.byteLength / size) : new BigUint64Array(n.buffer, n.byteOffset, n.byteLength / size);
    const rv = signed ? new BigInt64Array(r.buffer, r.byteOffset, r.byteLength / size) : new BigUint64Array(r.buffer, r.byteOffset, r.byteLength / size);
    for (let e = from; e < to; e++) {
      const a = nv[e] as bigint;
      const b = rv[e] as bigint;
      out[e] = a === b ? 0 : Number(a > b ? a - b : b - a);
      flags[e] = 0;
    }
  }
}

// The comparator's class of ONE element, for the special-values list. The comparator itself
// (compareBoundary) gives the counts per class and the census, but only two witnesses; the
// list needs every mismatching element in order, so this walks the elements and asks the
// comparator's own KernelState the contract questions (passes: tolerance, ULP bound, signed
// zeros under bit_exact / faithful; nonFiniteCode: NaN positions and payloads, infinity signs).
// The glue around those calls is the kernels' (compare-kernels.ts f32Block / halfBlock /
// f64Block / c64Block / intBlock / comparePadding), and the tests hold the list's class counts
// equal to compareBoundary's on every contract variant.
import { DTYPE_SIZE, type DType } from '../bundle/dtype.ts';
import type { Contract, ValidRegion } from '../bundle/manifest-schema.ts';
import {
  BLOCK_BYTES,
  C_NONE,
  C_PADDING,
  C_SIGNED_ZERO,
  C_VALUE,
  c64ElementCode,
  familyOf,
  halfTable,
  KernelState,
  KernelWorkspace,
  ulp16,
  ulp32,
  ulp64,
  type KernelFamily,
} from '../compare/compare-kernels.ts';

/** Typed views of one side's window (8-byte aligned bytes). */
export interface SideBits {
  readonly bytes: Uint8Array;
  readonly words: Int32Array | null;
  readonly floats: Float32Array | null;
  readonly halves: Uint16Array | null;
  readonly doubles: Float64Array | null;
}

export function sideBits(dtype: DType, bytes: Uint8Array): SideBits {
  const { buffer, byteOffset, byteLength } = bytes;
  const wide = dtype === 'F32' || dtype === 'C64' || dtype === 'F64';
  return {
    bytes,
    words: wide ? new Int32Array(buffer, byteOffset, byteLength >> 2) : null,
    floats: dtype === 'F32' || dtype === 'C64' ? new Float32Array(buffer, byteOffset, byteLength >> 2) : null,
    halves: dtype === 'BF16' || dtype === 'F16' ? new Uint16Array(buffer, byteOffset, byteLength >> 1) : null,
    doubles: dtype === 'F64' ? new Float64Array(buffer, byteOffset, byteLength >> 3) : null,
  };
}

/** Whether flat element `flat` lies inside the valid region (every element when there is none). */
export function validAt(valid: ValidRegion | null, shape: readonly number[], flat: number): boolean {
  if (valid === null) return true;
  let inner = 1;
  for (let axis = valid.axis + 1; axis < shape.length; axis++) inner *= shape[axis] as number;
  const extent = shape[valid.axis] ?? 0;
  if (inner === 0 || extent === 0) return false;
  return Math.floor(flat / inner) % extent < valid.length;
}

export class ElementClassifier {
  private readonly st: KernelState;
  private readonly family: KernelFamily;
  private readonly mustMatchZeros: boolean;

  constructor(
    readonly dtype: DType,
    shape: readonly number[],
    contract: Contract,
  ) {
    // A JS workspace of one block: only the contract questions are asked, no loop runs on it.
    this.st = new KernelState(KernelWorkspace.create(BLOCK_BYTES, 'js'), { dtype, shape, contract });
    this.family = familyOf(dtype);
    this.mustMatchZeros = contract.signed_zero === 'must_match';
  }

  /** Class code (compare-kernels C_*) of element e inside the valid region. */
  valueCode(n: SideBits, r: SideBits, e: number): number {
    switch (this.family) {
      case 'f32':
        return this.code32(n, r, e);
      case 'c64':
        return c64ElementCode(this.code32(n, r, 2 * e), this.code32(n, r, 2 * e + 1));
      case 'bf16':
      case 'f16':
        return this.code16(n, r, e);
      case 'f64':
        return this.code64(n, r, e);
      case 'int':
      case 'int64': {
        const size = DTYPE_SIZE[this.dtype];
        for (let b = e * size; b < (e + 1) * size; b++) if (n.bytes[b] !== r.bytes[b]) return C_VALUE;
        return C_NONE;
      }
    }
  }

  /** Class code of element e past the valid region under padding 'zero': native must hold zeros. */
  paddingCode(n: SideBits, e: number): number {
    const negZeroAllowed = !this.mustMatchZeros;
    const zero32 = (w: number): boolean => w === 0 || (negZeroAllowed && w === (0x80000000 | 0));
    switch (this.family) {
      case 'f32':
        return zero32((n.words as Int32Array)[e] as number) ? C_NONE : C_PADDING;
      case 'c64': {
        const w = n.words as Int32Array;
        return zero32(w[2 * e] as number) && zero32(w[2 * e + 1] as number) ? C_NONE : C_PADDING;
      }
      case 'bf16':
      case 'f16': {
        const h = (n.halves as Uint16Array)[e] as number;
        return h === 0 || (negZeroAllowed && h === 0x8000) ? C_NONE : C_PADDING;
      }
      case 'f64': {
        const w = n.words as Int32Array;
        return w[2 * e] === 0 && zero32(w[2 * e + 1] as number) ? C_NONE : C_PADDING;
      }
      default: {
        const size = DTYPE_SIZE[this.dtype];
        for (let b = e * size; b < (e + 1) * size; b++) if (n.bytes[b] !== 0) return C_PADDING;
        return C_NONE;
      }
    }
  }

  private finite(d: number, ar: number, ulp: number, same: boolean): number {
    if (same || this.st.passes(d, ar, ulp)) return C_NONE;
    return d === 0 ? C_SIGNED_ZERO : C_VALUE;
  }

  private code32(n: SideBits, r: SideBits, k: number): number {
    const wn = (n.words as Int32Array)[k] as number;
    const wr = (r.words as Int32Array)[k] as number;
    const x = (n.floats as Float32Array)[k] as number;
    const y = (r.floats as Float32Array)[k] as number;
    if ((wn & 0x7f800000) === 0x7f800000 || (wr & 0x7f800000) === 0x7f800000) return this.st.nonFiniteCode(x, y, wn === wr);
    return this.finite(Math.abs(x - y), Math.abs(y), ulp32(wn, wr), wn === wr);
  }

  private code16(n: SideBits, r: SideBits, k: number): number {
    const exp = this.family === 'bf16' ? 0x7f80 : 0x7c00;
    const table = halfTable(this.family === 'bf16' ? 'bf16' : 'f16');
    const hn = (n.halves as Uint16Array)[k] as number;
    const hr = (r.halves as Uint16Array)[k] as number;
    const x = table[hn] as number;
    const y = table[hr] as number;
    if ((hn & exp) === exp || (hr & exp) === exp) return this.st.nonFiniteCode(x, y, hn === hr);
    return this.finite(Math.abs(x - y), Math.abs(y), ulp16(hn, hr), hn === hr);
  }

  private code64(n: SideBits, r: SideBits, k: number): number {
    const wn = n.words as Int32Array;
    const wr = r.words as Int32Array;
    const nlo = wn[2 * k] as number;
    const nhi = wn[2 * k + 1] as number;
    const rlo = wr[2 * k] as number;
    const rhi = wr[2 * k + 1] as number;
    const x = (n.doubles as Float64Array)[k] as number;
    const y = (r.doubles as Float64Array)[k] as number;
    const same = nlo === rlo && nhi === rhi;
    if ((nhi & 0x7ff00000) === 0x7ff00000 || (rhi & 0x7ff00000) === 0x7ff00000) return this.st.nonFiniteCode(x, y, same);
    return this.finite(Math.abs(x - y), Math.abs(y), same ? 0 : ulp64(nhi, nlo, rhi, rlo), same);
  }
}

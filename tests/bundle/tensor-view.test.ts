import { describe, expect, it } from 'vitest';
import { DTYPES, DTYPE_SIZE, type DType } from '../../main/core/bundle/dtype.ts';
import { bf16ToF32, f16ToF32, gatherStrided, typedView } from '../../main/core/bundle/tensor-view.ts';
import { contiguousStrides, isRowMajor } from '../../main/core/bundle/layout.ts';
import { bytes } from './bundle-fixtures.ts';

/** The reference decoding of one binary16, written from the IEEE definition. */
function f16Value(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exponent = (half >> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa === 0 ? sign * Infinity : Number.NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** The reference gather: element by element, from the definition of strides. */
function naiveGather(src: Uint8Array, dtype: DType, shape: number[], strides: number[]): Uint8Array {
  const size = DTYPE_SIZE[dtype];
  const count = shape.reduce((a, b) => a * b, 1);
  const out = new Uint8Array(count * size);
  for (let linear = 0; linear < count; linear++) {
    let rest = linear;
    let offset = 0;
    for (let axis = shape.length - 1; axis >= 0; axis--) {
      const extent = shape[axis] as number;
      offset += (rest % extent) * (strides[axis] as number);
      rest = Math.floor(rest / extent);
    }
    out.set(src.subarray(offset * size, offset * size + size), linear * size);
  }
  return out;
}

describe('half-precision widening', () => {
  it('f16 -> f32 matches the IEEE definition for all 65536 bit patterns, signed zeros and NaN payloads kept', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const widened = f16ToF32(all);
    const widenedBits = new Uint32Array(widened.buffer);
    for (let half = 0; half < 65536; half++) {
      const expected = f16Value(half);
      const actual = widened[half] as number;
      if (Number.isNaN(expected)) {
        expect(Number.isNaN(actual)).toBe(true);
        expect(((widenedBits[half] as number) >>> 13) & 0x3ff).toBe(half & 0x3ff); // payload kept
        expect((widenedBits[half] as number) >>> 31).toBe(half >>> 15);
      } else if (!Object.is(actual, expected)) {
        throw new Error(`f16 0x${half.toString(16)}: expected ${expected}, got ${actual}`);
      }
    }
    expect(Object.is(f16ToF32(Uint16Array.from([0x8000]))[0], -0)).toBe(true);
  });

  it('bf16 -> f32 is the high half of the float32', () => {
    const values = Float32Array.from([1, -2.5, 0, -0, Infinity, 3.140625]);
    const high = Uint16Array.from(new Uint32Array(values.buffer), (bits) => bits >>> 16);
    expect(Array.from(bf16ToF32(high))).toEqual(Array.from(values));
    expect(Object.is(bf16ToF32(Uint16Array.from([0x8000]))[0], -0)).toBe(true);
    // From raw little-endian bytes as read from a file.
    expect(Array.from(bf16ToF32(Uint8Array.from([0x80, 0x3f])))).toEqual([1]);
  });
});

describe('typedView', () => {
  it('views aligned bytes without copying and copies unaligned ones', () => {
    const values = Float32Array.from([1.5, -2, 3.25]);
    const aligned = new Uint8Array(values.buffer);
    const view = typedView(aligned, 'F32');
    expect(view.buffer).toBe(values.buffer);
    const shifted = new Uint8Array(13);
    shifted.set(aligned, 1);
    const unaligned = typedView(shifted.subarray(1), 'F32');
    expect(Array.from(unaligned)).toEqual([1.5, -2, 3.25]);
    expect(unaligned.buffer).not.toBe(shifted.buffer);
  });

  it('gives the element type of every dtype (C64 as interleaved float32)', () => {
    expect(typedView(new Uint8Array(8), 'I64')).toBeInstanceOf(BigInt64Array);
    expect(typedView(new Uint8Array(8), 'U64')).toBeInstanceOf(BigUint64Array);
    expect(typedView(new Uint8Array(16), 'C64').length).toBe(4);
    expect(typedView(new Uint8Array(4), 'BOOL')).toBeInstanceOf(Uint8Array);
    expect(() => typedView(new Uint8Array(6), 'F32')).toThrow(/whole number/);
  });
});

describe('gatherStrided', () => {
  it('gathers a transposed matrix into row-major order', () => {
    // Buffer holds a 3x2 matrix row-major; the logical tensor is its 2x3 transpose.
    const buffer = new Uint8Array(Int32Array.from([1, 2, 3, 4, 5, 6]).buffer);
    const out = gatherStrided(buffer, 'I32', [2, 3], [1, 2]);
    expect(Array.from(new Int32Array(out.buffer))).toEqual([1, 3, 5, 2, 4, 6]);
  });

  it('matches the element-by-element definition for every dtype and odd strides', () => {
    for (const [i, dtype] of DTYPES.entries()) {
      const shape = [3, 2, 4];
      const strides = [1, 3 * 4 + 1, 3];
      const span = (2 * 1 + 1 * 13 + 3 * 3 + 1) * DTYPE_SIZE[dtype];
      const src = bytes(span + 5, i + 11);
      expect(Buffer.from(gatherStrided(src, dtype, shape, strides)).equals(Buffer.from(naiveGather(src, dtype, shape, strides)))).toBe(true);
      // From an unaligned buffer too.
      const shifted = new Uint8Array(span + 1);
      shifted.set(src.subarray(0, span), 1);
      expect(Buffer.from(gatherStrided(shifted.subarray(1), dtype, shape, strides)).equals(Buffer.from(naiveGather(src, dtype, shape, strides)))).toBe(true);
    }
  });

  it('keeps NaN payloads and signed zeros bit for bit', () => {
    const bits = new Uint32Array([0x7fc00001, 0x80000000, 0xffa00abc, 0x00000000]);
    const out = gatherStrided(new Uint8Array(bits.buffer), 'F32', [2, 2], [1, 2]);
    expect(Array.from(new Uint32Array(out.buffer))).toEqual([0x7fc00001, 0xffa00abc, 0x80000000, 0x00000000]);
    const doubles = new Uint32Array([0x00000001, 0x7ff00000, 0, 0x80000000]); // a signalling NaN, -0.0
    const outDoubles = gatherStrided(new Uint8Array(doubles.buffer), 'F64', [2], [1]);
    expect(Array.from(new Uint32Array(outDoubles.buffer))).toEqual([0x00000001, 0x7ff00000, 0, 0x80000000]);
  });

  it('handles broadcast (stride 0), rank 0 and empty tensors', () => {
    const one = new Uint8Array(Float32Array.from([7]).buffer);
    expect(Array.from(new Float32Array(gatherStrided(one, 'F32', [2, 3], [0, 0]).buffer))).toEqual([7, 7, 7, 7, 7, 7]);
    expect(Array.from(new Float32Array(gatherStrided(one, 'F32', [], []).buffer))).toEqual([7]);
    expect(gatherStrided(one, 'F32', [0, 3], [3, 1]).byteLength).toBe(0);
  });

  it('refuses strides that address past the buffer, negative strides and rank mismatches', () => {
    const buffer = new Uint8Array(16);
    expect(() => gatherStrided(buffer, 'F32', [2, 3], [1, 2])).toThrow(/addresses 24 bytes/);
    expect(() => gatherStrided(buffer, 'F32', [2], [-1])).toThrow(/non-negative/);
    expect(() => gatherStrided(buffer, 'F32', [2, 2], [1])).toThrow(/rank/);
  });
});

describe('layout', () => {
  it('knows contiguous strides and ignores the stride of extent-1 axes', () => {
    expect(contiguousStrides([4, 2, 3])).toEqual([6, 3, 1]);
    expect(contiguousStrides([])).toEqual([]);
    expect(isRowMajor([4, 2, 3], [6, 3, 1])).toBe(true);
    expect(isRowMajor([1, 64], [1, 1])).toBe(true);
    expect(isRowMajor([4, 2, 3], [1, 12, 4])).toBe(false);
    expect(isRowMajor([4, 2], [2])).toBe(false);
  });
});

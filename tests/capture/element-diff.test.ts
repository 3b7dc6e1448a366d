// The element-wise diff behind the capture table: each rule proven with a value that breaks it.
import { describe, expect, it } from 'vitest';
import { diffElements, type ElementTolerance } from '../../main/core/compare/element-diff.ts';
import { ulpDistance16, ulpDistanceF32, ulpDistanceF64 } from '../../main/core/compare/ulp.ts';

const f32 = (...values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);
const f64 = (...values: number[]): Uint8Array => new Uint8Array(new Float64Array(values).buffer);
const i32 = (...values: number[]): Uint8Array => new Uint8Array(new Int32Array(values).buffer);
const tolerance = (abs: number, rel: number, extra: Partial<ElementTolerance> = {}): ElementTolerance => ({
  abs,
  rel,
  maxUlp: null,
  signedZeroMustMatch: false,
  ...extra,
});

describe('ulp distances', () => {
  it('counts representable values between two floats, across zero', () => {
    expect(ulpDistanceF32(1, 1)).toBe(0);
    expect(ulpDistanceF32(1, 1 + 2 ** -23)).toBe(1);
    expect(ulpDistanceF32(-0, 0)).toBe(0);
    expect(ulpDistanceF32(-(2 ** -149), 2 ** -149)).toBe(2);
    expect(ulpDistanceF64(1, 1 + 2 ** -52)).toBe(1);
    // bf16 1.0 = 0x3f80, next = 0x3f81; -0 (0x8000) and +0 are 0 apart.
    expect(ulpDistance16(0x3f80, 0x3f81)).toBe(1);
    expect(ulpDistance16(0x8000, 0x0000)).toBe(0);
  });
});

describe('diffElements', () => {
  it('reports identical tensors as identical', () => {
    const diff = diffElements('F32', [3], f32(1, -0, Number.NaN), f32(1, -0, Number.NaN), null);
    expect(diff).toMatchObject({ elements: 3, differing: 0, outside: 0, maxAbs: 0, maxUlp: 0, firstOutside: -1 });
  });

  it('flags any bit difference when the contract is bit-exact', () => {
    const diff = diffElements('F32', [2], f32(1, 2), f32(1, Math.fround(2 + 2 ** -22)), null);
    expect(diff.outside).toBe(1);
    expect(diff.firstOutside).toBe(1);
    expect(diff.maxUlp).toBe(1);
  });

  it('treats a signed-zero flip as a difference when bit-exact, and as equal under a faithful ignore policy', () => {
    expect(diffElements('F32', [1], f32(-0), f32(0), null).outside).toBe(1);
    expect(diffElements('F32', [1], f32(-0), f32(0), tolerance(0, 0)).outside).toBe(0);
    expect(diffElements('F32', [1], f32(-0), f32(0), tolerance(1, 1, { signedZeroMustMatch: true })).outside).toBe(1);
  });

  it('accepts an error inside abs + rel·|r| and rejects one just outside', () => {
    const inside = diffElements('F64', [1], f64(1 + 1e-6), f64(1), tolerance(0, 1.01e-6));
    expect(inside.outside).toBe(0);
    expect(inside.differing).toBe(1);
    const outside = diffElements('F64', [1], f64(1 + 1e-6), f64(1), tolerance(0, 0.99e-6));
    expect(outside.outside).toBe(1);
  });

  it('requires NaN positions to match', () => {
    const diff = diffElements('F32', [2], f32(Number.NaN, 1), f32(1, 1), tolerance(1e9, 1e9));
    expect(diff.outside).toBe(1);
    expect(diff.firstOutside).toBe(0);
  });

  it('requires infinities to match in sign', () => {
    const diff = diffElements('F32', [1], f32(-Infinity), f32(Infinity), tolerance(1e9, 1e9));
    expect(diff.outside).toBe(1);
  });

  it('accepts an element within max ULP even when abs/rel would reject it', () => {
    const diff = diffElements('F32', [1], f32(Math.fround(1 + 2 ** -23)), f32(1), tolerance(0, 0, { maxUlp: 1 }));
    expect(diff.outside).toBe(0);
  });

  it('compares integers exactly and finds the first difference', () => {
    const diff = diffElements('I32', [4], i32(1, 2, 3, 4), i32(1, 2, 5, 4), null);
    expect(diff).toMatchObject({ differing: 1, outside: 1, firstOutside: 2 });
  });

  it('compares bf16 by value and counts ULPs on bf16 bits', () => {
    const native = new Uint8Array(new Uint16Array([0x3f81]).buffer);
    const reference = new Uint8Array(new Uint16Array([0x3f80]).buffer);
    const diff = diffElements('BF16', [1], native, reference, tolerance(0, 0, { maxUlp: 0 }));
    expect(diff.maxUlp).toBe(1);
    expect(diff.maxAbs).toBeCloseTo(2 ** -7, 12);
    expect(diff.outside).toBe(1);
  });
});

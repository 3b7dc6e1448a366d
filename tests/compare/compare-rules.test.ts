// Each element rule of the comparator, proven with hand-built tensors that break it: special
// values (NaN positions and payloads, signed zeros, infinities, subnormals), ULPs per format, and
// every dtype family. Every test runs under both kernel paths (WebAssembly SIMD and pure JS).
import { afterAll, describe, expect, it } from 'vitest';
import type { DType } from '../../main/core/bundle/dtype.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import type { KernelMode } from '../../main/core/compare/compare-kernels.ts';
import type { BoundaryComparison } from '../../main/core/compare/comparison-types.ts';
import { bitExact, bits16, bits32, bits64, c64, cleanupBundles, f32, f64, faithful, i32, i64, pair, stepF32, tensor, u64, u8 } from './compare-fixtures.ts';

afterAll(cleanupBundles);

async function compare(
  mode: KernelMode,
  dtype: DType,
  shape: readonly number[],
  native: Uint8Array,
  reference: Uint8Array,
  contract: Contract,
): Promise<BoundaryComparison> {
  const sides = await pair([tensor('t.x', dtype, shape, native)], [tensor('t.x', dtype, shape, reference, { contract })]);
  return compareBoundary(sides, 0, 't.x', { kernels: mode });
}

/** `values` followed by equal filler up to `length` (so the SIMD path sees whole vectors). */
function padded(values: readonly number[], length = 16): number[] {
  return [...values, ...Array.from({ length: length - values.length }, (_, i) => 1 + i / 8)];
}

describe.each(['auto', 'js'] as const)('element rules (%s kernels)', (mode) => {
  describe('NaN positions', () => {
    for (const contract of [bitExact(), faithful({ abs: 1e-3 })]) {
      it(`NaN against a number, both ways, is nan_vs_number (${contract.kind})`, async () => {
        const native = padded([1, Number.NaN, 3, 4]);
        const reference = padded([1, 2, Number.NaN, 4]);
        const result = await compare(mode, 'F32', [16], f32(native), f32(reference), contract);
        expect(result.classes.nan_vs_number).toBe(2);
        expect(result.mismatches).toBe(2);
        expect(result.mismatchShare).toBe(2 / 16);
        expect(result.passed).toBe(false);
        expect(result.outcome).toBe('fail');
        expect(result.firstMismatch?.flatIndex).toBe(1);
        expect(result.firstMismatch?.class).toBe('nan_vs_number');
        expect(result.firstMismatch?.reference).toBe(2);
        expect(Number.isNaN(result.firstMismatch?.native)).toBe(true);
        expect(result.census.native.nan).toBe(1);
        expect(result.census.reference.nan).toBe(1);
        expect(result.census.native.finite).toBe(15);
        // value statistics only over pairs finite on both sides
        expect(result.maxAbs).toBe(0);
        expect(result.rmse).toBe(0);
      });
    }

    it('NaN against NaN at the same position passes', async () => {
      const values = padded([Number.NaN, 2]);
      const result = await compare(mode, 'F32', [16], f32(values), f32(values), faithful());
      expect(result.passed).toBe(true);
      expect(result.census.native.nan).toBe(1);
    });
  });

  describe('NaN payloads', () => {
    const native = bits32([0x7fc00000, 0xffc00001, 0x3f800000, 0x40000000]);
    const reference = bits32([0x7fc00001, 0x7fc00000, 0x3f800000, 0x40000000]);
    for (const make of [bitExact, faithful]) {
      it(`'positions' lets payloads differ (${make === bitExact ? 'bit_exact' : 'faithful'})`, async () => {
        const result = await compare(mode, 'F32', [4], native, reference, make({ nan_policy: 'positions' }));
        expect(result.passed).toBe(true);
        expect(result.mismatches).toBe(0);
        expect(result.census.native.nan).toBe(2);
      });
      it(`'positions_and_payload' does not (${make === bitExact ? 'bit_exact' : 'faithful'})`, async () => {
        const result = await compare(mode, 'F32', [4], native, reference, make({ nan_policy: 'positions_and_payload' }));
        expect(result.classes.nan_payload).toBe(2);
        expect(result.mismatches).toBe(2);
        expect(result.firstMismatch?.nativeBits).toBe('0x7fc00000');
        expect(result.firstMismatch?.referenceBits).toBe('0x7fc00001');
      });
    }
  });

  describe('signed zeros', () => {
    const native = f32(padded([0, -0, 0, 5]));
    const reference = f32(padded([-0, 0, 0, 5]));
    for (const make of [bitExact, faithful]) {
      const kind = make === bitExact ? 'bit_exact' : 'faithful';
      it(`must_match: +0 against -0 is signed_zero, both ways (${kind})`, async () => {
        const result = await compare(mode, 'F32', [16], native, reference, make({ signed_zero: 'must_match' }));
        expect(result.classes.signed_zero).toBe(2);
        expect(result.mismatches).toBe(2);
        expect(result.firstMismatch?.flatIndex).toBe(0);
        expect(result.firstMismatch?.nativeBits).toBe('0x00000000');
        expect(result.firstMismatch?.referenceBits).toBe('0x80000000');
        expect(result.census.native.negZero).toBe(1);
        expect(result.census.reference.negZero).toBe(1);
      });
      it(`ignore: +0 against -0 passes (${kind})`, async () => {
        const result = await compare(mode, 'F32', [16], native, reference, make({ signed_zero: 'ignore' }));
        expect(result.passed).toBe(true);
        expect(result.maxUlp).toBe(0);
      });
    }
  });

  describe('infinities', () => {
    it('an infinity against the other infinity or a finite number is inf_sign, whatever the tolerance', async () => {
      const native = padded([Infinity, -Infinity, Infinity, 5], 8);
      const reference = padded([-Infinity, -Infinity, 4, Infinity], 8);
      const result = await compare(mode, 'F32', [8], f32(native), f32(reference), faithful({ abs: 1e30, rel: 1e30 }));
      expect(result.classes.inf_sign).toBe(3);
      expect(result.mismatches).toBe(3);
      expect(result.firstMismatch?.index).toEqual([0]);
      expect(result.census.native).toMatchObject({ posInf: 2, negInf: 1, finite: 5 });
      expect(result.census.reference).toMatchObject({ posInf: 1, negInf: 2, finite: 5 });
      expect(result.worst?.class).toBe('inf_sign');
      expect(result.worst?.absError).toBe(Infinity);
    });

    it('equal infinities pass', async () => {
      const values = f32(padded([Infinity, -Infinity], 8));
      expect((await compare(mode, 'F32', [8], values, values, bitExact())).passed).toBe(true);
    });
  });

  describe('census', () => {
    const specials = [1e-40, -1e-40, 1.4e-45, 0, -0, Number.NaN, Infinity, -Infinity];
    const expected = { nan: 1, posInf: 1, negInf: 1, negZero: 1, subnormal: 3, finite: 29 };

    it('counts NaN, ±inf, -0 and subnormals of f32 (identical sides)', async () => {
      const values = f32(padded(specials, 32));
      const result = await compare(mode, 'F32', [32], values, values, bitExact());
      expect(result.passed).toBe(true);
      expect(result.census.native).toEqual(expected);
      expect(result.census.reference).toEqual(expected);
    });

    it('counts them on a faithful block whose sides differ inside the tolerance', async () => {
      const values = padded(specials, 32);
      const moved = values.map((v, i) => (i === 20 ? stepF32(v, 1) : v));
      const result = await compare(mode, 'F32', [32], f32(moved), f32(values), faithful({ max_ulp: 1 }));
      expect(result.passed).toBe(true);
      expect(result.maxUlp).toBe(1);
      expect(result.census.native).toEqual(expected);
      expect(result.census.reference).toEqual(expected);
    });

    it('counts bf16, f16 and f64 specials on their own bit layouts', async () => {
      const bf16 = bits16([0x0001, 0x8001, 0x8000, 0x7fc0, 0x7f80, 0xff80, 0x3f80, 0x4000]);
      const bfResult = await compare(mode, 'BF16', [8], bf16, bf16, bitExact());
      expect(bfResult.census.native).toEqual({ nan: 1, posInf: 1, negInf: 1, negZero: 1, subnormal: 2, finite: 5 });
      const f16 = bits16([0x0001, 0x03ff, 0x8000, 0x7e00, 0x7c00, 0xfc00, 0x3c00, 0x4000]);
      const hResult = await compare(mode, 'F16', [8], f16, f16, bitExact());
      expect(hResult.census.native).toEqual({ nan: 1, posInf: 1, negInf: 1, negZero: 1, subnormal: 2, finite: 5 });
      const f64values = f64([5e-324, -2.2e-308, -0, Number.NaN, Infinity, -Infinity, 1, 2]);
      const dResult = await compare(mode, 'F64', [8], f64values, f64values, bitExact());
      expect(dResult.census.native).toEqual({ nan: 1, posInf: 1, negInf: 1, negZero: 1, subnormal: 2, finite: 5 });
    });
  });

  describe('bf16 ULPs (counted on the 16-bit patterns)', () => {
    const rest = [0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0x4100];
    it('0x3f80 against 0x3f81 is 1 ULP: fails max_ulp 0, passes max_ulp 1', async () => {
      const native = bits16([0x3f80, ...rest]);
      const reference = bits16([0x3f81, ...rest]);
      const strict = await compare(mode, 'BF16', [8], native, reference, faithful({ max_ulp: 0 }));
      expect(strict.classes.value).toBe(1);
      expect(strict.maxUlp).toBe(1);
      expect(strict.firstMismatch?.ulp).toBe(1);
      expect(strict.firstMismatch?.absError).toBe(2 ** -7);
      expect(strict.firstMismatch?.nativeBits).toBe('0x3f80');
      const loose = await compare(mode, 'BF16', [8], native, reference, faithful({ max_ulp: 1 }));
      expect(loose.passed).toBe(true);
      expect(loose.required.ulp).toBe(1);
    });

    it('across zero: the two smallest subnormals of opposite sign are 2 ULPs apart (±0 is one point)', async () => {
      const native = bits16([0x0001, 0x8000, ...rest.slice(1)]);
      const reference = bits16([0x8001, 0x0000, ...rest.slice(1)]);
      const one = await compare(mode, 'BF16', [8], native, reference, faithful({ max_ulp: 1 }));
      expect(one.classes.value).toBe(1);
      expect(one.maxUlp).toBe(2);
      const two = await compare(mode, 'BF16', [8], native, reference, faithful({ max_ulp: 2 }));
      expect(two.passed).toBe(true);
    });

    it('bit_exact bf16: any differing pattern is a value mismatch', async () => {
      const result = await compare(mode, 'BF16', [8], bits16([0x3f80, ...rest]), bits16([0x3f81, ...rest]), bitExact());
      expect(result.classes.value).toBe(1);
    });
  });

  describe('f16', () => {
    it('1.0 against the next f16 is 1 ULP and 2^-10 apart', async () => {
      const native = bits16([0x3c00, 0x4000, 0x4200, 0x4400]);
      const reference = bits16([0x3c01, 0x4000, 0x4200, 0x4400]);
      const tight = await compare(mode, 'F16', [4], native, reference, faithful({ abs: 0.0009 }));
      expect(tight.classes.value).toBe(1);
      expect(tight.maxAbs).toBe(2 ** -10);
      expect(tight.maxUlp).toBe(1);
      expect((await compare(mode, 'F16', [4], native, reference, faithful({ abs: 2 ** -10 }))).passed).toBe(true);
      expect((await compare(mode, 'F16', [4], native, reference, faithful({ max_ulp: 1 }))).passed).toBe(true);
    });
  });

  describe('f64', () => {
    it('ULPs count on 64 bits: 1 against 2 is 2^52 ULPs, 1 against its successor is 1', async () => {
      const one = 1;
      const next = 1 + 2 ** -52;
      const result = await compare(mode, 'F64', [4], f64([one, one, 3, 4]), f64([next, 2, 3, 4]), faithful({ max_ulp: 1 }));
      expect(result.classes.value).toBe(1);
      expect(result.maxUlp).toBe(2 ** 52);
      expect(result.firstMismatch?.flatIndex).toBe(1);
      expect(result.firstMismatch?.referenceBits).toBe('0x4000000000000000');
    });

    it('NaN payloads of f64 differ only under positions_and_payload', async () => {
      const native = bits64([0x7ff8000000000000n, 0x3ff0000000000000n]);
      const reference = bits64([0x7ff8000000000001n, 0x3ff0000000000000n]);
      expect((await compare(mode, 'F64', [2], native, reference, bitExact())).passed).toBe(true);
      const strict = await compare(mode, 'F64', [2], native, reference, bitExact({ nan_policy: 'positions_and_payload' }));
      expect(strict.classes.nan_payload).toBe(1);
      expect(strict.firstMismatch?.referenceBits).toBe('0x7ff8000000000001');
    });
  });

  describe('complex64', () => {
    it('an element mismatches when either component does; ULPs per component; census per component', async () => {
      const reference: Array<[number, number]> = [
        [1, 2],
        [1.5, 2],
        [3, 4],
        [5, -6],
      ];
      const native: Array<[number, number]> = [
        [1, 2],
        [stepF32(1.5, 3), 2],
        [3, Number.NaN],
        [5, -6],
      ];
      const result = await compare(mode, 'C64', [4], c64(native), c64(reference), faithful({ max_ulp: 1 }));
      expect(result.mismatches).toBe(2);
      expect(result.classes.value).toBe(1);
      expect(result.classes.nan_vs_number).toBe(1);
      expect(result.maxUlp).toBe(3);
      expect(result.firstMismatch?.flatIndex).toBe(1);
      expect(result.firstMismatch?.reference).toBe('1.5+2j');
      expect(result.firstMismatch?.ulp).toBe(3);
      expect(result.worst?.flatIndex).toBe(2);
      expect(result.worst?.class).toBe('nan_vs_number');
      expect(result.census.native).toMatchObject({ nan: 1, finite: 7 });
      expect(result.census.reference).toMatchObject({ nan: 0, finite: 8 });
      expect(result.compared).toBe(4);
    });

    it('the imaginary part alone decides an element too', async () => {
      const result = await compare(
        mode,
        'C64',
        [2],
        c64([
          [1, -0],
          [2, 3],
        ]),
        c64([
          [1, 0],
          [2, 3],
        ]),
        bitExact(),
      );
      expect(result.classes.signed_zero).toBe(1);
      expect(result.firstMismatch?.native).toBe('1-0j');
    });
  });

  describe('integers and bool (always exact)', () => {
    it('i64 beyond 2^53: a difference of 1 is seen and reported exactly', async () => {
      const result = await compare(mode, 'I64', [3], i64([2n ** 53n + 1n, 5n, -7n]), i64([2n ** 53n, 5n, -7n]), faithful({ abs: 10 }));
      expect(result.classes.value).toBe(1);
      expect(result.maxAbs).toBe(1);
      expect(result.maxAbsExact).toBe('1');
      expect(result.firstMismatch?.native).toBe('9007199254740993');
      expect(result.firstMismatch?.reference).toBe('9007199254740992');
    });

    it('u64: the full range difference is exact in maxAbsExact', async () => {
      const result = await compare(mode, 'U64', [2], u64([2n ** 64n - 1n, 3n]), u64([0n, 3n]), bitExact());
      expect(result.mismatches).toBe(1);
      expect(result.maxAbsExact).toBe('18446744073709551615');
      expect(result.maxAbs).toBe(2 ** 64);
      expect(result.firstMismatch?.nativeBits).toBe('0xffffffffffffffff');
    });

    it('i32 and bool: differing values are value mismatches with their max abs difference', async () => {
      const ints = await compare(mode, 'I32', [2, 2], i32([1, 2, 3, 4]), i32([1, 5, 3, -4]), bitExact());
      expect(ints.classes.value).toBe(2);
      expect(ints.maxAbs).toBe(8);
      expect(ints.maxAbsExact).toBe('8');
      expect(ints.firstMismatch?.index).toEqual([0, 1]);
      expect(ints.worst?.index).toEqual([1, 1]);
      const bools = await compare(mode, 'BOOL', [3], u8([1, 0, 1]), u8([1, 1, 1]), bitExact());
      expect(bools.classes.value).toBe(1);
      expect(bools.census.native.finite).toBe(3);
    });

    it('equal integers pass', async () => {
      const result = await compare(mode, 'I32', [4], i32([1, -2, 3, 4]), i32([1, -2, 3, 4]), bitExact());
      expect(result.passed).toBe(true);
      expect(result.maxAbsExact).toBe('0');
    });
  });
});

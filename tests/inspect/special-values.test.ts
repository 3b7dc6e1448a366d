// The special-values panel: each class planted once and listed in element order, the limit, the
// census, tie order and padding from compareBoundary, the reference alone, and the list agreeing
// with compareBoundary's class counts on every dtype family and contract variant.
import { afterEach, describe, expect, it } from 'vitest';
import type { DType } from '../../main/core/bundle/dtype.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import { specials } from '../../main/core/inspect/special-values.ts';
import { SpecialsSchema } from '../../protocol/inspector-api.ts';
import {
  bitExact,
  bits16,
  bits32,
  c64,
  cleanupBundles,
  f32,
  f64,
  faithful,
  i32,
  i64,
  makeBundle,
  pair,
  randomFloats,
  stepF32,
  tensor,
} from '../compare/compare-fixtures.ts';

afterEach(cleanupBundles);

const NEG_ZERO = 0x80000000;
const PLUS_INF = 0x7f800000;
const MINUS_INF = 0xff800000;
const QNAN = 0x7fc00000;
const float = (value: number): number => new Uint32Array(Float32Array.from([value]).buffer)[0] as number;

describe('specials', () => {
  it('lists every class in element order with values and bits, and counts like compareBoundary', async () => {
    const contract = faithful({ abs: 1e-3, signed_zero: 'must_match', nan_policy: 'positions_and_payload' });
    const reference = [float(1), float(2), QNAN, PLUS_INF, float(0), 0x7fc00001, PLUS_INF, float(3), float(5)];
    const native = [float(1), float(2.5), float(7), MINUS_INF, NEG_ZERO, 0x7fc00002, float(4), float(3.0001), float(5)];
    const sides = await pair([tensor('x', 'F32', [3, 3], bits32(native))], [tensor('x', 'F32', [3, 3], bits32(reference), { contract })]);
    const out = SpecialsSchema.parse(await specials(sides.native, sides.reference, { pass: 0, boundary: 'x' }, 100));
    expect(out.mismatches.map((m) => [m.flatIndex, m.class])).toEqual([
      [1, 'value'],
      [2, 'nan_vs_number'],
      [3, 'inf_sign'],
      [4, 'signed_zero'],
      [5, 'nan_payload'],
      [6, 'inf_sign'],
    ]);
    expect(out.mismatches[0]).toEqual({
      flatIndex: 1,
      index: [0, 1],
      class: 'value',
      reference: '2',
      native: '2.5',
      referenceBits: '0x40000000',
      nativeBits: '0x40200000',
    });
    expect(out.mismatches[3]).toMatchObject({ reference: '0', native: '-0', nativeBits: '0x80000000' });
    expect(out.byClass).toEqual({ value: 1, nan_vs_number: 1, nan_payload: 1, inf_sign: 2, signed_zero: 1, tie_order: 0, padding: 0 });
    expect(out.census.reference).toEqual({ nan: 2, posInf: 2, negInf: 0, negZero: 0, subnormal: 0, finite: 5 });
    expect(out.census.native).toEqual({ nan: 1, posInf: 0, negInf: 1, negZero: 1, subnormal: 0, finite: 7 });
    expect(out.truncated).toBe(false);

    const short = await specials(sides.native, sides.reference, { pass: 0, boundary: 'x' }, 2);
    expect(short.mismatches.map((m) => m.flatIndex)).toEqual([1, 2]);
    expect(short.truncated).toBe(true);
    expect(short.byClass).toEqual(out.byClass); // counts stay whole

    // Under the loosest policies the signed zero and the payload are no longer mismatches.
    const loose = await pair(
      [tensor('x', 'F32', [3, 3], bits32(native))],
      [tensor('x', 'F32', [3, 3], bits32(reference), { contract: faithful({ abs: 1e-3 }) })],
    );
    const looseOut = await specials(loose.native, loose.reference, { pass: 0, boundary: 'x' }, 100);
    expect(looseOut.mismatches.map((m) => m.class)).toEqual(['value', 'nan_vs_number', 'inf_sign', 'inf_sign']);
  });

  it('takes tie order from compareBoundary', async () => {
    const scaled = f64([3, 5, 5, 1]);
    const reference = [
      tensor('samp.scaled', 'F64', [4], scaled, { contract: bitExact() }),
      tensor('samp.order', 'I32', [4], i32([1, 2, 0, 3]), { contract: bitExact() }),
      tensor('samp.threshold', 'F64', [1], f64([5]), { contract: bitExact() }),
    ];
    const native = [
      tensor('samp.scaled', 'F64', [4], scaled),
      tensor('samp.order', 'I32', [4], i32([2, 1, 0, 3])),
      tensor('samp.threshold', 'F64', [1], f64([5])),
    ];
    const sides = await pair(native, reference);
    const out = await specials(sides.native, sides.reference, { pass: 0, boundary: 'samp.order' }, 10);
    expect(out.byClass.tie_order).toBe(2);
    expect(out.mismatches.map((m) => [m.flatIndex, m.class, m.reference, m.native])).toEqual([
      [0, 'tie_order', '1', '2'],
      [1, 'tie_order', '2', '1'],
    ]);
  });

  it('lists padding under a zero-padding valid region', async () => {
    const valid = { axis: 1, length: 2, padding: 'zero' as const };
    const contract = faithful({ abs: 1e-6, signed_zero: 'must_match' });
    const sides = await pair(
      [tensor('p', 'F32', [2, 3], f32([1, 2, -0, 1, 2, 9]))],
      [tensor('p', 'F32', [2, 3], f32([1, 2, 0, 1, 2, 0]), { contract, valid })],
    );
    const out = await specials(sides.native, sides.reference, { pass: 0, boundary: 'p' }, 10);
    expect(out.mismatches.map((m) => [m.flatIndex, m.class, m.native])).toEqual([
      [2, 'padding', '-0'],
      [5, 'padding', '9'],
    ]);
    expect(out.byClass.padding).toBe(2);
  });

  it('shows the reference census alone when the native side lacks the boundary', async () => {
    const reference = await makeBundle('reference', [[tensor('r', 'F32', [4], bits32([QNAN, MINUS_INF, NEG_ZERO, float(1)]))]]);
    const out = await specials(null, reference, { pass: 0, boundary: 'r' }, 10);
    expect(out.census.reference).toEqual({ nan: 1, posInf: 0, negInf: 1, negZero: 1, subnormal: 0, finite: 2 });
    expect(out.census.native).toEqual({ nan: 0, posInf: 0, negInf: 0, negZero: 0, subnormal: 0, finite: 0 });
    expect(out.mismatches).toEqual([]);
    await expect(specials(null, reference, { pass: 3, boundary: 'r' }, 10)).rejects.toThrow(/pass 3 boundary "r"/);
  });

  describe('agrees with compareBoundary element for element', () => {
    const count = 4096;
    const base = randomFloats(count, 31, 2);
    // Specials planted at fixed places on both sides, and ULP-sized noise everywhere else.
    function floats(): { reference: number[]; native: number[] } {
      const reference = base.slice();
      const native = base.map((v, i) => (i % 5 === 0 ? stepF32(v, i % 4) : i % 97 === 0 ? v * 1.01 : v));
      const put = (i: number, r: number, n: number): void => {
        reference[i] = r;
        native[i] = n;
      };
      put(10, Number.NaN, 1);
      put(20, 1, Number.NaN);
      put(30, Number.NaN, Number.NaN);
      put(40, Infinity, -Infinity);
      put(50, Infinity, 3);
      put(60, 0, -0);
      put(70, -0, 0);
      put(80, 1e-40, 2e-40);
      put(90, -Infinity, -Infinity);
      return { reference, native };
    }
    const contracts: Record<string, Contract> = {
      'bit_exact must_match': bitExact(),
      'bit_exact ignore zeros': bitExact({ signed_zero: 'ignore', nan_policy: 'positions_and_payload' }),
      'faithful abs': faithful({ abs: 1e-6 }),
      'faithful rel + ulp, must_match': faithful({ rel: 1e-7, max_ulp: 2, signed_zero: 'must_match' }),
    };
    const cases: Array<{ dtype: DType; data: (values: number[]) => Uint8Array }> = [
      { dtype: 'F32', data: f32 },
      { dtype: 'F64', data: f64 },
      { dtype: 'BF16', data: (values) => bits16(values.map((v) => float(v) >>> 16)) },
      { dtype: 'F16', data: (values) => bits16(values.map((v) => (Number.isNaN(v) ? 0x7e00 : toF16(v)))) },
      { dtype: 'C64', data: (values) => c64(values.map((v, i) => [v, (values[(i * 7) % values.length] as number) / 2] as const)) },
      { dtype: 'I32', data: (values) => i32(values.map((v) => (Number.isFinite(v) ? Math.round(v * 4) : 9))) },
      { dtype: 'I64', data: (values) => i64(values.map((v) => BigInt(Number.isFinite(v) ? Math.round(v * 4) : 9) * 2n ** 40n)) },
    ];
    for (const { dtype, data } of cases) {
      for (const [label, contract] of Object.entries(contracts)) {
        it(`${dtype}, ${label}`, async () => {
          const { reference, native } = floats();
          const valid = { axis: 1, length: 60, padding: 'zero' as const };
          const sides = await pair([tensor('t', dtype, [64, 64], data(native))], [tensor('t', dtype, [64, 64], data(reference), { contract, valid })]);
          const result = await compareBoundary(sides, 0, 't');
          const out = await specials(sides.native, sides.reference, { pass: 0, boundary: 't' }, 10_000);
          expect(out.mismatches.length).toBe(result.mismatches);
          const listed: Record<string, number> = {};
          for (const m of out.mismatches) listed[m.class] = (listed[m.class] ?? 0) + 1;
          for (const [name, n] of Object.entries(result.classes)) expect(listed[name] ?? 0, name).toBe(n);
          expect(out.mismatches[0]?.flatIndex).toBe(result.firstMismatch?.flatIndex);
          expect(out.mismatches[0]?.class).toBe(result.firstMismatch?.class);
          expect(result.mismatches).toBeGreaterThan(0);
        });
      }
    }
  });
});

/** float -> IEEE binary16 bits, round to nearest even (test data only). */
function toF16(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exponent = ((x >>> 23) & 0xff) - 127 + 15;
  const mantissa = x & 0x7fffff;
  if (((x >>> 23) & 0xff) === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  if (exponent >= 0x1f) return sign | 0x7c00;
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - exponent;
    const half = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && (half & 1) === 1) ? 1 : 0));
  }
  const half = (exponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1) ? 1 : 0));
}

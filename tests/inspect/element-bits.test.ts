// The bit inspector: known bit patterns per format, shortest round-trip text in the element's own
// format, exact 64-bit integers, C64 pairs, |diff| and ULPs by the comparator's conventions, a
// missing side, and out-of-range indices.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { elementAt } from '../../main/core/inspect/element-bits.ts';
import { ElementSchema, type Element } from '../../protocol/inspector-api.ts';
import { viewWire } from '../../main/session/view-wire.ts';
import {
  bits16,
  bits32,
  bits64,
  c64,
  cleanupBundles,
  f32,
  i32,
  i64,
  makeBundle,
  pair,
  randomFloats,
  tensor,
  type TensorSpec,
} from '../compare/compare-fixtures.ts';
import { flipFileByte } from '../helpers/tensor-tamper.ts';

afterEach(cleanupBundles);

async function at(native: readonly TensorSpec[], reference: readonly TensorSpec[], boundary: string, flatIndex: number): Promise<Element> {
  const sides = await pair(native, reference);
  // As the session sends it: the core's plain value converted to the wire's, then checked by its schema.
  return ElementSchema.parse(viewWire.element(await elementAt(sides.native, sides.reference, { pass: 0, boundary, flatIndex })));
}

describe('elementAt', () => {
  it('shows float32 1.0 as 0x3f800000 with its fields, and 0.1f as "0.1"', async () => {
    const element = await at(
      [tensor('x', 'F32', [2, 2], bits32([0, 0x3f800001, 0x3dcccccd, 0]))],
      [tensor('x', 'F32', [2, 2], bits32([0, 0x3f800000, 0x3dcccccd, 0]))],
      'x',
      1,
    );
    expect(element.index).toEqual([0, 1]);
    expect(element.reference).toEqual({
      decimal: '1',
      hex: '0x3f800000',
      fields: { sign: '0', exponent: '01111111', mantissa: '0'.repeat(23), exponentBias: 127 },
      class: 'normal',
    });
    expect(element.native?.hex).toBe('0x3f800001');
    expect(element.native?.decimal).toBe('1.0000001'); // shortest text that reads back as this float32
    expect(element.ulp).toBe(1);
    expect(element.absDiff).toBe(2 ** -23);
    const tenth = await at([tensor('x', 'F32', [1], bits32([0x3dcccccd]))], [tensor('x', 'F32', [1], bits32([0x3dcccccd]))], 'x', 0);
    expect(tenth.reference?.decimal).toBe('0.1');
    expect(tenth.ulp).toBe(0);
  });

  it('shows -0, subnormals, infinities and NaN payloads; a NaN against a number is an Infinity difference', async () => {
    const patterns = [0x80000000, 0x00000001, 0xff800000, 0x7fc00001];
    const element = async (i: number): Promise<Element> =>
      at([tensor('s', 'F32', [4], bits32([0, 0, 0xff800000, 0x3f800000]))], [tensor('s', 'F32', [4], bits32(patterns))], 's', i);
    const negZero = await element(0);
    expect(negZero.reference).toMatchObject({ decimal: '-0', hex: '0x80000000', class: 'zero', fields: { sign: '1', exponent: '00000000' } });
    expect(negZero.absDiff).toBe(0);
    expect(negZero.ulp).toBe(0); // the comparator's ULP line: +0 and -0 are one point
    const tiny = await element(1);
    expect(tiny.reference).toMatchObject({ decimal: '1e-45', class: 'subnormal', fields: { exponent: '00000000', mantissa: `${'0'.repeat(22)}1` } });
    expect(tiny.ulp).toBe(1);
    const negInf = await element(2);
    expect(negInf.reference).toMatchObject({ decimal: '-Infinity', class: 'inf' });
    expect(negInf.absDiff).toBe(0); // equal infinities agree
    const nan = await element(3);
    expect(nan.reference).toMatchObject({ decimal: 'NaN', hex: '0x7fc00001', class: 'nan', fields: { mantissa: `1${'0'.repeat(21)}1` } });
    expect(nan.absDiff).toBe('Infinity');
    expect(nan.ulp).toBe('Infinity');
  });

  it('decodes bf16 and f16 patterns in their own formats', async () => {
    const bf = await at([tensor('b', 'BF16', [2], bits16([0x3f80, 0x3f81]))], [tensor('b', 'BF16', [2], bits16([0x3f80, 0x7fc0]))], 'b', 0);
    expect(bf.reference).toEqual({
      decimal: '1',
      hex: '0x3f80',
      fields: { sign: '0', exponent: '01111111', mantissa: '0000000', exponentBias: 127 },
      class: 'normal',
    });
    const bfNext = await at([tensor('b', 'BF16', [1], bits16([0x3f81]))], [tensor('b', 'BF16', [1], bits16([0x3f80]))], 'b', 0);
    expect(bfNext.native?.decimal).toBe('1.01'); // 1 + 2^-7 = 1.0078125: "1.01" already reads back to it in bf16
    expect(bfNext.ulp).toBe(1);
    const half = await at([tensor('h', 'F16', [3], bits16([0x3c00, 0x0001, 0xfbff]))], [tensor('h', 'F16', [3], bits16([0x3c00, 0x0001, 0xfbff]))], 'h', 1);
    expect(half.reference).toEqual({
      decimal: '6e-8',
      hex: '0x0001',
      fields: { sign: '0', exponent: '00000', mantissa: '0000000001', exponentBias: 15 },
      class: 'subnormal',
    });
    const lowest = await at([tensor('h', 'F16', [1], bits16([0xfbff]))], [tensor('h', 'F16', [1], bits16([0xfbff]))], 'h', 0);
    expect(lowest.reference?.decimal).toBe('-65500'); // -65504 is the value; "-65500" reads back to it in f16
    expect(lowest.reference?.fields).toEqual({ sign: '1', exponent: '11110', mantissa: '1111111111', exponentBias: 15 });
  });

  it('shows an f64 subnormal and exact 64-bit integers', async () => {
    const sub = await at([tensor('d', 'F64', [1], bits64([2n]))], [tensor('d', 'F64', [1], bits64([1n]))], 'd', 0);
    expect(sub.reference).toEqual({
      decimal: '5e-324',
      hex: '0x0000000000000001',
      fields: { sign: '0', exponent: '0'.repeat(11), mantissa: `${'0'.repeat(51)}1`, exponentBias: 1023 },
      class: 'subnormal',
    });
    expect(sub.ulp).toBe(1);
    const big = 9007199254740993n; // 2^53 + 1: a double would print 9007199254740992
    const ints = await at([tensor('i', 'I64', [2], i64([big, -1n]))], [tensor('i', 'I64', [2], i64([big - 1n, -1n]))], 'i', 0);
    expect(ints.native).toEqual({ decimal: '9007199254740993', hex: '0x0020000000000001', fields: null, class: 'integer' });
    expect(ints.absDiff).toBe(1); // exact, though both sides round to the same double
    expect(ints.ulp).toBeNull();
    const negative = await at([tensor('i', 'I32', [1], i32([-1]))], [tensor('i', 'I32', [1], i32([-1]))], 'i', 0);
    expect(negative.reference).toEqual({ decimal: '-1', hex: '0xffffffff', fields: null, class: 'integer' });
  });

  it('shows a C64 element as both components, classed by the more special one', async () => {
    const element = await at(
      [
        tensor(
          'z',
          'C64',
          [2],
          c64([
            [0, 0],
            [1, -2.5],
          ]),
        ),
      ],
      [
        tensor(
          'z',
          'C64',
          [2],
          c64([
            [0, 0],
            [1, Number.NaN],
          ]),
        ),
      ],
      'z',
      1,
    );
    expect(element.native).toEqual({
      decimal: '1-2.5j',
      hex: '0x3f800000,0xc0200000',
      fields: { sign: '0,1', exponent: '01111111,10000000', mantissa: `${'0'.repeat(23)},${'01'}${'0'.repeat(21)}`, exponentBias: 127 },
      class: 'normal',
    });
    expect(element.reference?.class).toBe('nan');
    expect(element.reference?.decimal).toBe('1+NaNj');
    expect(element.absDiff).toBe('Infinity'); // NaN against a number, the comparator's witness convention
  });

  it('reads an element deep in a tensor larger than one chunk, and fails out of range naming the boundary', async () => {
    const values = randomFloats(50_000, 9);
    const sides = await pair([tensor('big', 'F32', [250, 200], f32(values))], [tensor('big', 'F32', [250, 200], f32(values))]);
    const element = await elementAt(sides.native, sides.reference, { pass: 0, boundary: 'big', flatIndex: 49_321 });
    expect(element.index).toEqual([246, 121]);
    expect(Math.fround(Number(element.reference?.decimal))).toBe(Math.fround(values[49_321] as number));
    await expect(elementAt(sides.native, sides.reference, { pass: 0, boundary: 'big', flatIndex: 50_000 })).rejects.toThrow(
      /pass 0 boundary "big": flat index 50000 is outside \[0, 50000\)/,
    );
  });

  it('returns null for a side without the boundary', async () => {
    const reference = await makeBundle('reference', [[tensor('x', 'F32', [1], f32([3]))]]);
    const element = await elementAt(null, reference, { pass: 0, boundary: 'x', flatIndex: 0 });
    expect(element.native).toBeNull();
    expect(element.absDiff).toBeNull();
    expect(element.ulp).toBeNull();
    expect(element.reference?.decimal).toBe('3');
  });
});

describe('elementAt rests on verified bytes', () => {
  it('refuses an element whose tensor changed on disk after the bundle was opened, even far from the change', async () => {
    // 2 MiB of float32: the element is in the first chunk, the changed byte in the last one.
    const values = new Float32Array(512 * 1024).map((_, i) => i);
    const bytes = new Uint8Array(values.buffer);
    const sides = await pair([tensor('big', 'F32', [512, 1024], bytes)], [tensor('big', 'F32', [512, 1024], bytes.slice())]);
    const before = await elementAt(sides.native, sides.reference, { pass: 0, boundary: 'big', flatIndex: 3 });
    expect(before.native?.decimal).toBe('3');

    const file = join(sides.native.dir, 'pass-000.safetensors');
    flipFileByte(file, statSync(file).size - 1, 0x01);
    await expect(elementAt(sides.native, sides.reference, { pass: 0, boundary: 'big', flatIndex: 3 })).rejects.toThrow(/sha256/);
  });
});

// "Jump to the first NaN / infinity": execution order across passes, native before reference,
// integer dtypes skipped, positions inside multi-chunk tensors, and C64 element indices.
import { afterEach, describe, expect, it } from 'vitest';
import { findFirstSpecial } from '../../main/core/inspect/first-special.ts';
import { FirstSpecialSchema, type BoundaryRef } from '../../protocol/inspector-api.ts';
import { bits16, bits64, c64, cleanupBundles, f32, f64, i32, makeBundle, tensor } from '../compare/compare-fixtures.ts';

afterEach(cleanupBundles);

describe('findFirstSpecial', () => {
  it('walks the given order, prefers the native side and falls back to the reference', async () => {
    const big = new Array<number>(400_000).fill(1); // 1.6 MB: the NaN sits in the second chunk
    big[300_001] = Number.NaN;
    const reference = await makeBundle('reference', [
      [tensor('a', 'F32', [4], f32([1, 2, 3, 4])), tensor('ids', 'I32', [2], i32([7, 8])), tensor('b', 'F64', [3], f64([0, Infinity, Number.NaN]))],
      [tensor('a', 'F32', [4], f32([1, 2, 3, 4])), tensor('c', 'F32', [400_000], f32(big))],
    ]);
    const native = await makeBundle('native', [
      [tensor('a', 'F32', [4], f32([1, 2, 3, 4])), tensor('ids', 'I32', [2], i32([7, 8])), tensor('b', 'F64', [3], f64([0, 1, 2]))],
      [tensor('a', 'F32', [4], f32([1, Number.NaN, -Infinity, 4])), tensor('c', 'F32', [400_000], f32(big))],
    ]);
    const order: BoundaryRef[] = [
      { pass: 0, boundary: 'a' },
      { pass: 0, boundary: 'ids' },
      { pass: 0, boundary: 'b' },
      { pass: 1, boundary: 'a' },
      { pass: 1, boundary: 'c' },
    ];
    // pass 0 "b": native is clean, the reference holds the NaN at 2 (and the infinity at 1).
    expect(FirstSpecialSchema.parse(await findFirstSpecial(native, reference, order, 'nan'))).toEqual({
      pass: 0,
      boundary: 'b',
      flatIndex: 2,
      side: 'reference',
    });
    expect(await findFirstSpecial(native, reference, order, 'inf')).toEqual({ pass: 0, boundary: 'b', flatIndex: 1, side: 'reference' });
    // From pass 1 on, native's own NaN comes first.
    expect(await findFirstSpecial(native, reference, order.slice(3), 'nan')).toEqual({ pass: 1, boundary: 'a', flatIndex: 1, side: 'native' });
    expect(await findFirstSpecial(native, reference, order.slice(3), 'inf')).toEqual({ pass: 1, boundary: 'a', flatIndex: 2, side: 'native' });
    expect(await findFirstSpecial(null, reference, order.slice(4), 'nan')).toEqual({ pass: 1, boundary: 'c', flatIndex: 300_001, side: 'reference' });
    expect(await findFirstSpecial(native, reference, order.slice(0, 2), 'nan')).toBeNull();
  });

  it('tells NaN from infinity on every float format and gives C64 element indices', async () => {
    const reference = await makeBundle('reference', [
      [
        tensor('h', 'F16', [3], bits16([0x3c00, 0x7c00, 0x7e00])),
        tensor('bf', 'BF16', [3], bits16([0xff80, 0x3f80, 0xffc1])),
        tensor('d', 'F64', [3], bits64([0x7ff0000000000000n, 0x7ff0000000000001n, 0n])),
        tensor(
          'z',
          'C64',
          [3],
          c64([
            [0, 0],
            [1, 2],
            [3, Number.NaN],
          ]),
        ),
      ],
    ]);
    const find = (boundary: string, kind: 'nan' | 'inf'): Promise<unknown> => findFirstSpecial(null, reference, [{ pass: 0, boundary }], kind);
    expect(await find('h', 'inf')).toMatchObject({ flatIndex: 1 });
    expect(await find('h', 'nan')).toMatchObject({ flatIndex: 2 });
    expect(await find('bf', 'inf')).toMatchObject({ flatIndex: 0 });
    expect(await find('bf', 'nan')).toMatchObject({ flatIndex: 2 });
    expect(await find('d', 'inf')).toMatchObject({ flatIndex: 0 });
    expect(await find('d', 'nan')).toMatchObject({ flatIndex: 1 });
    expect(await find('z', 'nan')).toMatchObject({ flatIndex: 2 });
    expect(await find('z', 'inf')).toBeNull();
  });
});

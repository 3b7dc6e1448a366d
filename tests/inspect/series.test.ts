// The 1-D series: min/max buckets that keep a one-element spike on either side, max |diff| per
// bucket, raw values when the range fits, NaN buckets, ranges, and a missing native side.
import { afterEach, describe, expect, it } from 'vitest';
import { series } from '../../main/core/inspect/series-pooling.ts';
import { SeriesSchema } from '../../protocol/inspector-api.ts';
import { cleanupBundles, f32, makeBundle, pair, randomFloats, tensor } from '../compare/compare-fixtures.ts';

afterEach(cleanupBundles);

describe('series pooling', () => {
  it('keeps 1-D spikes in their bucket on each side and in the diff', async () => {
    const reference = randomFloats(10_000, 5, 1);
    const native = reference.slice();
    native[7777] = 50; // up-spike on native
    reference[1234] = -40; // down-spike on the reference (native keeps the small value)
    const sides = await pair([tensor('s', 'F32', [10_000], f32(native))], [tensor('s', 'F32', [10_000], f32(reference))]);
    const out = SeriesSchema.parse(await series(sides.native, sides.reference, { pass: 0, boundary: 's', maxPoints: 100 }));
    expect(out.step).toBe(100);
    expect(out.start).toBe(0);
    expect(out.end).toBe(10_000);
    expect(out.native.max).toHaveLength(100);
    expect(out.native.max[77]).toBe(50);
    expect(Math.max(...(out.native.max as number[]))).toBe(50);
    expect(out.reference.min[12]).toBe(-40);
    expect(Math.min(...(out.reference.min as number[]))).toBe(-40);
    const diffs = out.absDiff as number[];
    const top = [...diffs.keys()].sort((a, b) => (diffs[b] as number) - (diffs[a] as number)).slice(0, 2);
    expect(top.sort((a, b) => a - b)).toEqual([12, 77]);
    expect(diffs.filter((d, b) => b !== 12 && b !== 77 && d !== 0)).toEqual([]);
  });

  it('returns raw values (step 1) when the range fits, and honours start / end', async () => {
    const values = [0.5, -1, 2, -3, 4, -5, 6, -7];
    const native = values.map((v) => v * 2);
    const sides = await pair([tensor('s', 'F32', [2, 4], f32(native))], [tensor('s', 'F32', [2, 4], f32(values))]);
    const out = await series(sides.native, sides.reference, { pass: 0, boundary: 's', start: 2, end: 7, maxPoints: 5 });
    expect(out.step).toBe(1);
    expect(out.reference.min).toEqual([2, -3, 4, -5, 6]);
    expect(out.reference.max).toEqual(out.reference.min);
    expect(out.native.min).toEqual([4, -6, 8, -10, 12]);
    expect(out.absDiff).toEqual([2, 3, 4, 5, 6]);
    const coarse = await series(sides.native, sides.reference, { pass: 0, boundary: 's', start: 1, end: 8, maxPoints: 3 });
    expect(coarse.step).toBe(3);
    expect(coarse.reference.min).toEqual([-3, -5, -7]);
    expect(coarse.reference.max).toEqual([2, 6, -7]);
    await expect(series(sides.native, sides.reference, { pass: 0, boundary: 's', start: 3, end: 9, maxPoints: 5 })).rejects.toThrow(
      /pass 0 boundary "s": element range \[3, 9\) is not inside \[0, 8\)/,
    );
  });

  it('a NaN makes its bucket NaN on its side and in the diff; infinities are plain extremes', async () => {
    const reference = [1, 2, 3, 4, 5, 6];
    const native = [1, Number.NaN, 3, 4, -Infinity, 6];
    const sides = await pair([tensor('s', 'F32', [6], f32(native))], [tensor('s', 'F32', [6], f32(reference))]);
    const out = await series(sides.native, sides.reference, { pass: 0, boundary: 's', maxPoints: 3 });
    expect(out.step).toBe(2);
    expect(out.native.min).toEqual([NaN, 3, -Infinity]);
    expect(out.native.max).toEqual([NaN, 4, 6]);
    expect(out.reference.min).toEqual([1, 3, 5]); // the native NaN does not touch the reference envelope
    expect(out.absDiff).toEqual([NaN, 0, Infinity]);
  });

  it('plots the reference alone when the native side lacks the boundary', async () => {
    const reference = await makeBundle('reference', [[tensor('s', 'F32', [3], f32([1, 2, 3]))]]);
    const out = await series(null, reference, { pass: 0, boundary: 's', maxPoints: 10 });
    expect(out.reference.max).toEqual([1, 2, 3]);
    expect(out.native).toEqual({ min: [], max: [] });
    expect(out.absDiff).toEqual([]);
  });
});

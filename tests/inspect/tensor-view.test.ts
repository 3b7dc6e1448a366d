// The pooled heatmap: folding, windows and zoom, max pooling that keeps a single outlier in the
// right cell with the right argmax, NaN and infinity cells that survive pooling, the missing
// native side, and tensors larger than one streaming window (rows split across windows).
import { afterEach, describe, expect, it } from 'vitest';
import { tensorView } from '../../main/core/inspect/tensor-view-pooling.ts';
import type { TensorViewRequest } from '../../protocol/inspector-api.ts';
import { bits16, c64, cleanupBundles, f32, faithful, makeBundle, pair, randomFloats, stepF32, tensor } from '../compare/compare-fixtures.ts';
import { pooledView } from './decoded-view.ts';

afterEach(cleanupBundles);

const request = (boundary: string, metric: TensorViewRequest['metric'], extra: Partial<TensorViewRequest> = {}): TensorViewRequest => ({
  pass: 0,
  boundary,
  metric,
  maxRows: 8,
  maxCols: 8,
  ...extra,
});

/** A 64 x 64 reference of small values and a native equal to it but for `edits`. */
function grid64(edits: Record<number, number>): { reference: number[]; native: number[] } {
  const reference = randomFloats(64 * 64, 7, 1);
  const native = reference.map((value, i) => edits[i] ?? stepF32(value, i % 3));
  return { reference, native };
}

describe('tensorView pooling', () => {
  it('keeps a single outlier in the right cell with the right argmax (abs_diff and ulp)', async () => {
    const outlier = 37 * 64 + 50;
    const { reference, native } = grid64({ [outlier]: 1000 });
    const sides = await pair(
      [tensor('x.out', 'F32', [64, 64], f32(native))],
      [tensor('x.out', 'F32', [64, 64], f32(reference), { contract: faithful({ abs: 1e-3 }) })],
    );
    const view = await pooledView(sides.native, sides.reference, request('x.out', 'abs_diff'));
    expect(view.folded).toEqual({ rows: 64, cols: 64 });
    expect(view.grid).toEqual({ rows: 8, cols: 8, rowStep: 8, colStep: 8 });
    expect(view.values).toHaveLength(64);
    const cell = 4 * 8 + 6; // row 37 / 8, col 50 / 8
    // Cells travel as float32 (the f64 difference rounded once); max stays the exact number.
    const exact = Math.abs(Math.fround(1000) - Math.fround(reference[outlier] as number));
    const expected = Math.fround(exact);
    expect(view.values[cell]).toBe(expected);
    expect(view.argmax[cell]).toBe(outlier);
    expect(view.max).toBe(exact);
    // Every other cell holds a few-ULP difference, far below the outlier.
    view.values.forEach((value, i) => {
      if (i !== cell) expect(value as number).toBeLessThan(1e-5);
    });
    // ULPs: the same cell is the worst one and points at the same element.
    const ulp = await pooledView(sides.native, sides.reference, request('x.out', 'ulp'));
    const worstCell = ulp.values.indexOf(Math.max(...(ulp.values as number[])));
    expect(worstCell).toBe(cell);
    expect(ulp.argmax[cell]).toBe(outlier);
    expect(ulp.values[0]).toBe(2); // the cell's largest planted step (i % 3)
  });

  it('never lets a NaN vanish: the cell is null, listed, and its argmax points at the NaN', async () => {
    const nanAt = 9 * 64 + 3;
    const infAt = 60 * 64 + 63;
    const { reference, native } = grid64({ [nanAt]: Number.NaN, [infAt]: Infinity, [nanAt + 1]: 5000 });
    const sides = await pair(
      [tensor('x.out', 'F32', [64, 64], f32(native))],
      [tensor('x.out', 'F32', [64, 64], f32(reference), { contract: faithful({ abs: 1e-3 }) })],
    );
    for (const metric of ['abs_diff', 'ulp', 'reference', 'native'] as const) {
      const view = await pooledView(sides.native, sides.reference, request('x.out', metric));
      const nanCell = 1 * 8 + 0;
      const infCell = 7 * 8 + 7;
      expect(view.nanCells, metric).toEqual([nanCell]);
      expect(view.values[nanCell], metric).toBeNaN();
      // The larger finite outlier next to the NaN does not take the argmax.
      expect(view.argmax[nanCell], metric).toBe(nanAt);
      expect(view.infCells, metric).toEqual([infCell]);
      // The infinity is native's: every view but the reference values points at it.
      if (metric !== 'reference') expect(view.argmax[infCell], metric).toBe(infAt);
    }
    const diff = await pooledView(sides.native, sides.reference, request('x.out', 'abs_diff'));
    expect(diff.values[63]).toBe(Infinity); // an infinity against a finite value
    expect(typeof diff.max).toBe('number'); // the largest FINITE cell
    expect(diff.max as number).toBeLessThan(1e-5);
    const nativeView = await pooledView(sides.native, sides.reference, request('x.out', 'native'));
    expect(nativeView.values[63]).toBe(Infinity);
    // A reference-only view still marks the cell of the native NaN: NaN on either side.
    const referenceView = await pooledView(sides.native, sides.reference, request('x.out', 'reference'));
    expect(referenceView.values[8]).toBeNaN();
  });

  it('reference / native cells hold the value of largest magnitude, sign kept', async () => {
    const values = [1, -7, 3, 2, 0.5, -0.25, 6, -6];
    const sides = await pair([tensor('v', 'F32', [2, 4], f32(values))], [tensor('v', 'F32', [2, 4], f32(values))]);
    const view = await pooledView(sides.native, sides.reference, request('v', 'reference', { maxRows: 1, maxCols: 2 }));
    expect(view.grid).toEqual({ rows: 1, cols: 2, rowStep: 2, colStep: 2 });
    expect(view.values).toEqual([-7, 6]);
    expect(view.argmax).toEqual([1, 6]); // ties keep the first element (6 before -6)
    expect(view.max).toBe(7);
  });

  it('zooms: a smaller window at the same budget gives a finer step, step 1 when it fits', async () => {
    const outlier = 37 * 64 + 50;
    const { reference, native } = grid64({ [outlier]: 1000 });
    const sides = await pair(
      [tensor('x.out', 'F32', [64, 64], f32(native))],
      [tensor('x.out', 'F32', [64, 64], f32(reference), { contract: faithful({ abs: 1e-3 }) })],
    );
    const mid = await pooledView(sides.native, sides.reference, request('x.out', 'abs_diff', { window: { row0: 32, row1: 64, col0: 32, col1: 64 } }));
    expect(mid.grid).toEqual({ rows: 8, cols: 8, rowStep: 4, colStep: 4 });
    expect(mid.argmax[1 * 8 + 4]).toBe(outlier); // (37 - 32) / 4, (50 - 32) / 4
    const fine = await pooledView(sides.native, sides.reference, request('x.out', 'abs_diff', { window: { row0: 34, row1: 40, col0: 48, col1: 56 } }));
    expect(fine.grid).toEqual({ rows: 6, cols: 8, rowStep: 1, colStep: 1 });
    expect(fine.window).toEqual({ row0: 34, row1: 40, col0: 48, col1: 56 });
    fine.values.forEach((value, cell) => {
      const row = 34 + Math.floor(cell / 8);
      const col = 48 + (cell % 8);
      const i = row * 64 + col;
      expect(fine.argmax[cell]).toBe(i);
      expect(value).toBe(Math.fround(Math.abs(Math.fround(native[i] as number) - Math.fround(reference[i] as number))));
    });
    await expect(tensorView(sides.native, sides.reference, request('x.out', 'abs_diff', { window: { row0: 0, row1: 65, col0: 0, col1: 4 } }))).rejects.toThrow(
      /pass 0 boundary "x.out": window rows \[0, 65\).*64 x 64/,
    );
  });

  it('folds: the last dimension is the columns, 1-D is one row, 0-D one cell; uneven steps', async () => {
    const three = randomFloats(2 * 3 * 4, 3);
    const line = randomFloats(10, 4);
    const sides = await pair(
      [tensor('t3', 'F32', [2, 3, 4], f32(three)), tensor('t1', 'F32', [10], f32(line)), tensor('t0', 'F32', [], f32([2.5]))],
      [tensor('t3', 'F32', [2, 3, 4], f32(three)), tensor('t1', 'F32', [10], f32(line)), tensor('t0', 'F32', [], f32([-2.5]))],
    );
    const t3 = await pooledView(sides.native, sides.reference, request('t3', 'reference', { maxRows: 4, maxCols: 4 }));
    expect(t3.folded).toEqual({ rows: 6, cols: 4 });
    expect(t3.grid).toEqual({ rows: 3, cols: 4, rowStep: 2, colStep: 1 });
    const t1 = await pooledView(sides.native, sides.reference, request('t1', 'native', { maxRows: 4, maxCols: 3 }));
    expect(t1.folded).toEqual({ rows: 1, cols: 10 });
    expect(t1.grid).toEqual({ rows: 1, cols: 3, rowStep: 1, colStep: 4 });
    const t0 = await pooledView(sides.native, sides.reference, request('t0', 'abs_diff'));
    expect(t0.folded).toEqual({ rows: 1, cols: 1 });
    expect(t0.values).toEqual([5]);
    expect(t0.argmax).toEqual([0]);
  });

  it('a missing native side fails the diff views naming the pass and boundary; the reference view works', async () => {
    const reference = await makeBundle('reference', [[tensor('a', 'F32', [2, 2], f32([1, 2, 3, 4]))]]);
    const native = await makeBundle('native', [[tensor('other', 'F32', [1], f32([0]))]]);
    for (const nativeSide of [null, native]) {
      for (const metric of ['abs_diff', 'ulp', 'native'] as const) {
        await expect(tensorView(nativeSide, reference, request('a', metric))).rejects.toThrow(/pass 0 boundary "a".*native/);
      }
      const view = await pooledView(nativeSide, reference, request('a', 'reference'));
      expect(view.values).toEqual([1, 2, 3, 4]);
    }
    await expect(tensorView(native, reference, request('nope', 'reference'))).rejects.toThrow(/pass 0 boundary "nope"/);
  });

  it('streams tensors larger than a window, rows and a 1-D row split across windows, the same as in one piece', async () => {
    // 600 x 700 f32 = 1.68 MB per side: two 1 MiB windows of whole rows.
    const rows = 600;
    const cols = 700;
    const reference = randomFloats(rows * cols, 11, 2);
    const native = reference.slice();
    const spike = 450 * cols + 699;
    native[spike] = 77;
    native[3] = Number.NaN;
    const sides = await pair([tensor('big', 'F32', [rows, cols], f32(native))], [tensor('big', 'F32', [rows, cols], f32(reference))]);
    const view = await pooledView(sides.native, sides.reference, request('big', 'abs_diff', { maxRows: 7, maxCols: 9 }));
    expect(view.grid).toEqual({ rows: 7, cols: 9, rowStep: 86, colStep: 78 });
    const spikeCell = Math.floor(450 / 86) * 9 + Math.floor(699 / 78);
    expect(view.argmax[spikeCell]).toBe(spike);
    expect(view.nanCells).toEqual([0]);
    expect(view.values.filter((value) => value !== 0 && !Number.isNaN(value))).toEqual([Math.fround(Math.abs(77 - Math.fround(reference[spike] as number)))]);

    // One row of 300 000 elements (1.2 MB): the row itself spans two windows.
    const long = randomFloats(300_000, 12);
    const longNative = long.slice();
    longNative[299_990] = 1e6;
    const line = await pair([tensor('line', 'F32', [300_000], f32(longNative))], [tensor('line', 'F32', [300_000], f32(long))]);
    const lineView = await pooledView(line.native, line.reference, request('line', 'abs_diff', { maxRows: 1, maxCols: 1000 }));
    expect(lineView.grid).toEqual({ rows: 1, cols: 1000, rowStep: 1, colStep: 300 });
    expect(lineView.argmax[999]).toBe(299_990);
    expect(lineView.values[999]).toBe(Math.fround(Math.abs(1e6 - Math.fround(long[299_990] as number))));
    expect(lineView.values.slice(0, 999).every((value) => value === 0)).toBe(true);
  });

  it('half precision and complex cells follow the comparator conventions', async () => {
    // bf16 1.0 = 0x3f80 against 0x3f82 (two ULPs), f16 1.0 = 0x3c00 against -0 and +0.
    const sides = await pair(
      [
        tensor('h', 'BF16', [2], bits16([0x3f82, 0x8000])),
        tensor(
          'z',
          'C64',
          [2],
          c64([
            [1, 5],
            [0, 0],
          ]),
        ),
      ],
      [
        tensor('h', 'BF16', [2], bits16([0x3f80, 0x0000])),
        tensor(
          'z',
          'C64',
          [2],
          c64([
            [1, 2],
            [0, -9],
          ]),
        ),
      ],
    );
    const ulp = await pooledView(sides.native, sides.reference, request('h', 'ulp'));
    expect(ulp.values).toEqual([2, 0]); // +0 and -0 are one point on the comparator's ULP line
    const diff = await pooledView(sides.native, sides.reference, request('h', 'abs_diff'));
    expect(diff.values).toEqual([2 ** -6, 0]);
    const complexDiff = await pooledView(sides.native, sides.reference, request('z', 'abs_diff'));
    expect(complexDiff.values).toEqual([3, 9]); // the larger component difference
    const complexValue = await pooledView(sides.native, sides.reference, request('z', 'reference'));
    expect(complexValue.values).toEqual([2, -9]); // the component of larger magnitude
  });
});

// The binary wire form of the heatmap: float32 cells unless a value would be misrepresented,
// argmax offsets in the narrowest width a cell of that size needs (decoded back to the exact
// flat index by the renderer's codec), and a schema that refuses buffers of the wrong length.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeArgmax, encodeValues } from '../../main/core/inspect/tensor-view-encoding.ts';
import { tensorView } from '../../main/core/inspect/tensor-view-pooling.ts';
import { TensorViewSchema, type TensorView } from '../../protocol/inspector-api.ts';
import { decodeCells } from '../../protocol/tensor-view-codec.ts';
import { cleanupBundles, f32, f64, pair, randomFloats, tensor } from '../compare/compare-fixtures.ts';
import { decodeView, pooledView } from './decoded-view.ts';

afterEach(cleanupBundles);

describe('tensor view wire encoding', () => {
  it('sends float32 cells and the narrowest argmax offsets: 1 byte for 8 x 8 cells, 2 for 300-element cells', async () => {
    const reference = randomFloats(64 * 64, 5);
    const native = reference.map((value, i) => (i === 63 * 64 + 63 ? value + 3 : value));
    const sides = await pair([tensor('x', 'F32', [64, 64], f32(native))], [tensor('x', 'F32', [64, 64], f32(reference))]);
    const view = await tensorView(sides.native, sides.reference, { pass: 0, boundary: 'x', metric: 'reference', maxRows: 8, maxCols: 8 });
    expect(view.values.format).toBe('f32');
    expect(Buffer.from(view.values.data, 'base64')).toHaveLength(64 * 4);
    expect(view.argmax.format).toBe('u8_offset');
    expect(Buffer.from(view.argmax.data, 'base64')).toHaveLength(64);
    // Every decoded argmax is an element of its cell holding the cell's value, exactly.
    const decoded = decodeView(view);
    decoded.argmax.forEach((flat, cell) => {
      const row = Math.floor(flat / 64);
      const col = flat % 64;
      expect(Math.floor(row / 8) * 8 + Math.floor(col / 8), `cell ${cell}`).toBe(cell);
      expect(decoded.values[cell]).toBe(Math.fround(reference[flat] as number));
    });
    const diff = await pooledView(sides.native, sides.reference, { pass: 0, boundary: 'x', metric: 'abs_diff', maxRows: 8, maxCols: 8 });
    expect(diff.argmax[63]).toBe(63 * 64 + 63);

    const long = randomFloats(300_000, 9);
    const longNative = long.slice();
    longNative[123_456] = 50;
    const line = await pair([tensor('line', 'F32', [300_000], f32(longNative))], [tensor('line', 'F32', [300_000], f32(long))]);
    const lineView = await pooledView(line.native, line.reference, { pass: 0, boundary: 'line', metric: 'abs_diff', maxRows: 1, maxCols: 1000 });
    expect(lineView.wire.argmax.format).toBe('u16_offset'); // 300 elements per cell
    expect(lineView.argmax[Math.floor(123_456 / 300)]).toBe(123_456);
  });

  it('offsets are relative to the window: a zoomed window still decodes to tensor flat indices', async () => {
    const reference = randomFloats(40 * 50, 6);
    const native = reference.slice();
    native[33 * 50 + 47] = 99;
    const sides = await pair([tensor('x', 'F32', [40, 50], f32(native))], [tensor('x', 'F32', [40, 50], f32(reference))]);
    const view = await pooledView(sides.native, sides.reference, {
      pass: 0,
      boundary: 'x',
      metric: 'abs_diff',
      maxRows: 3,
      maxCols: 4,
      window: { row0: 21, row1: 40, col0: 13, col1: 50 },
    });
    expect(view.grid).toEqual({ rows: 3, cols: 4, rowStep: 7, colStep: 10 });
    // Row 33 is window row 12 (cell row 1, dr 5); col 47 is window col 34 (cell col 3, dc 4).
    expect(view.argmax[1 * 4 + 3]).toBe(33 * 50 + 47);
    view.argmax.forEach((flat) => {
      const row = Math.floor(flat / 50);
      const col = flat % 50;
      expect(row >= 21 && row < 40 && col >= 13 && col < 50).toBe(true);
    });
  });

  it('an f64 tensor whose values leave float32 range is sent as float64, exactly; in range it stays float32', async () => {
    const huge = [1e300, -3e38 * 4, 1e-300, 5e-320];
    const sides = await pair([tensor('w', 'F64', [2, 2], f64(huge))], [tensor('w', 'F64', [2, 2], f64([0, 0, 0, 0]))]);
    const values = await pooledView(sides.native, sides.reference, { pass: 0, boundary: 'w', metric: 'native', maxRows: 2, maxCols: 2 });
    expect(values.wire.values.format).toBe('f64');
    expect(values.values).toEqual(huge); // not Infinity, not an "exact" 0
    const diffs = await pooledView(sides.native, sides.reference, { pass: 0, boundary: 'w', metric: 'abs_diff', maxRows: 2, maxCols: 2 });
    expect(diffs.values).toEqual(huge.map(Math.abs));
    expect(diffs.max).toBe(1e300);

    const plain = await pair([tensor('p', 'F64', [3], f64([0.1, -2.5, 1e30]))], [tensor('p', 'F64', [3], f64([0.1, -2.5, 1e30]))]);
    const inRange = await pooledView(plain.native, plain.reference, { pass: 0, boundary: 'p', metric: 'reference', maxRows: 1, maxCols: 3 });
    expect(inRange.wire.values.format).toBe('f32');
    expect(inRange.values).toEqual([Math.fround(0.1), -2.5, Math.fround(1e30)]);
  });

  it('float32 cells keep NaN and the sign of infinities', () => {
    const encoded = encodeValues(Float64Array.from([Number.NaN, Infinity, -Infinity, -0.5]));
    expect(encoded.format).toBe('f32');
    const bytes = Buffer.from(encoded.data, 'base64');
    expect([0, 1, 2, 3].map((i) => bytes.readFloatLE(i * 4))).toEqual([Number.NaN, Infinity, -Infinity, -0.5]);
  });

  it('cells of more than 2^32 elements fall back to exact float64 flat indices', () => {
    // A 1-D tensor of 2^34 elements at a budget of 2 columns: cells of 2^33 elements each.
    const geometry = { cols: 2 ** 34, row0: 0, col0: 0, gridCols: 2, rowStep: 1, colStep: 2 ** 33 };
    const flat = Float64Array.from([2 ** 33 - 1, 2 ** 34 - 3]);
    const argmax = encodeArgmax(flat, geometry);
    expect(argmax.format).toBe('f64_index');
    const view = wireView({ rows: 1, cols: 2, rowStep: 1, colStep: 2 ** 33 }, { rows: 1, cols: 2 ** 34 }, argmax);
    expect([...decodeCells(view).flatIndex]).toEqual([2 ** 33 - 1, 2 ** 34 - 3]);
    // At exactly 2^32 elements per cell the offsets still fit 32 bits.
    const edge = encodeArgmax(Float64Array.from([2 ** 32 - 1]), { cols: 2 ** 32, row0: 0, col0: 0, gridCols: 1, rowStep: 1, colStep: 2 ** 32 });
    expect(edge.format).toBe('u32_offset');
    expect([...decodeCells(wireView({ rows: 1, cols: 1, rowStep: 1, colStep: 2 ** 32 }, { rows: 1, cols: 2 ** 32 }, edge)).flatIndex]).toEqual([2 ** 32 - 1]);
  });

  it('the schema refuses buffers that do not match the grid', async () => {
    const sides = await pair([tensor('x', 'F32', [4, 4], f32(randomFloats(16, 2)))], [tensor('x', 'F32', [4, 4], f32(randomFloats(16, 3)))]);
    const view = await tensorView(sides.native, sides.reference, { pass: 0, boundary: 'x', metric: 'abs_diff', maxRows: 4, maxCols: 4 });
    expect(TensorViewSchema.safeParse(view).success).toBe(true);
    const short = { ...view, values: { ...view.values, data: Buffer.from(view.values.data, 'base64').subarray(4).toString('base64') } };
    expect(TensorViewSchema.safeParse(short).error?.issues[0]?.message).toMatch(/expected 16 cells of 4 bytes, got 60 bytes/);
    const wide = { ...view, argmax: { ...view.argmax, format: 'u16_offset' as const } };
    expect(TensorViewSchema.safeParse(wide).success).toBe(false);
    expect(TensorViewSchema.safeParse({ ...view, nanCells: [16] }).success).toBe(false);
  });
});

/** A TensorView around one argmax buffer (values all zero), for the codec alone. */
function wireView(grid: TensorView['grid'], folded: TensorView['folded'], argmax: TensorView['argmax']): TensorView {
  const cells = grid.rows * grid.cols;
  return {
    pass: 0,
    boundary: 'x',
    metric: 'abs_diff',
    dtype: 'F32',
    shape: [folded.rows, folded.cols],
    folded,
    window: { row0: 0, row1: folded.rows, col0: 0, col1: folded.cols },
    grid,
    values: encodeValues(new Float64Array(cells)),
    argmax,
    nanCells: [],
    infCells: [],
    max: 0,
  };
}

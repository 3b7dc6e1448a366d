// The fused F32 pooling path (tensor-view-grid.ts poolF32) against the generic path: the same
// values stored as F64 go through decode + quantity + pool, and abs_diff / reference / native
// must come out cell for cell and argmax for argmax the same, with NaNs (one side, both), equal
// and opposite infinities, -0, odd steps, windows and rows split across streaming windows. ULPs
// (on float32 bits, so F64 cannot be the oracle) are checked against a brute-force per-cell max.
import { afterEach, describe, expect, it } from 'vitest';
import { ulp32 } from '../../main/core/compare/compare-kernels.ts';
import type { TensorViewRequest } from '../../protocol/inspector-api.ts';
import { cleanupBundles, f32, f64, pair, randomFloats, stepF32, tensor } from '../compare/compare-fixtures.ts';
import { pooledView } from './decoded-view.ts';

afterEach(cleanupBundles);

const ROWS = 300;
const COLS = 1000; // 1.2 MB per F32 side: more than one 1 MiB streaming window.

function sides(): { reference: number[]; native: number[] } {
  const reference = randomFloats(ROWS * COLS, 11, 3).map((value) => Math.fround(value));
  const native = reference.map((value, i) => (i % 5 === 0 ? stepF32(value, (i % 4) + 1) : value));
  const set = (i: number, n: number, r: number): void => {
    native[i] = n;
    reference[i] = r;
  };
  set(17, Number.NaN, 1);
  set(18, 5000, 1); // a bigger finite outlier right after a NaN in the same cell
  set(COLS * 7 + 3, Number.NaN, Number.NaN);
  set(COLS * 9 + 40, Infinity, Infinity);
  set(COLS * 9 + 41, -Infinity, Infinity);
  set(COLS * 120 + 500, -0, 0);
  set(COLS * 299 + 999, 2, Number.NaN);
  return { reference, native };
}

describe('fused F32 tensor view', () => {
  it('pools exactly as the generic path does, over whole tensors, windows and odd steps', async () => {
    const { reference, native } = sides();
    const spec = (data: Uint8Array, dtype: 'F32' | 'F64') => [tensor('m', dtype, [ROWS, COLS], data)];
    const single = await pair(spec(f32(native), 'F32'), spec(f32(reference), 'F32'));
    const double = await pair(spec(f64(native), 'F64'), spec(f64(reference), 'F64'));
    const requests: Partial<TensorViewRequest>[] = [
      { maxRows: 64, maxCols: 64 },
      { maxRows: 7, maxCols: 13 },
      { maxRows: 4096, maxCols: 4096 },
      { maxRows: 9, maxCols: 11, window: { row0: 5, row1: 131, col0: 3, col1: 998 } },
    ];
    for (const metric of ['abs_diff', 'reference', 'native'] as const) {
      for (const extra of requests) {
        const request = { pass: 0, boundary: 'm', metric, maxRows: 8, maxCols: 8, ...extra };
        const fused = await pooledView(single.native, single.reference, request);
        const generic = await pooledView(double.native, double.reference, request);
        const label = `${metric} ${JSON.stringify(extra)}`;
        expect(fused.values, label).toEqual(generic.values);
        expect(fused.argmax, label).toEqual(generic.argmax);
        expect(fused.nanCells, label).toEqual(generic.nanCells);
        expect(fused.infCells, label).toEqual(generic.infCells);
        expect(fused.max, label).toEqual(generic.max);
      }
    }
  });

  it('ULP cells hold the largest float32 ULP distance of their elements, argmax on the first of them', async () => {
    const reference = randomFloats(64 * 96, 3, 2).map((value) => Math.fround(value));
    const native = reference.map((value, i) => stepF32(value, (i * 7) % 5));
    const bundles = await pair([tensor('u', 'F32', [64, 96], f32(native))], [tensor('u', 'F32', [64, 96], f32(reference))]);
    const view = await pooledView(bundles.native, bundles.reference, { pass: 0, boundary: 'u', metric: 'ulp', maxRows: 10, maxCols: 7 });
    const words = (values: number[]): Int32Array => new Int32Array(Float32Array.from(values).buffer);
    const nw = words(native);
    const rw = words(reference);
    const { rowStep, colStep, cols } = view.grid;
    for (let cell = 0; cell < view.values.length; cell++) {
      const r0 = Math.floor(cell / cols) * rowStep;
      const c0 = (cell % cols) * colStep;
      let best = -1;
      let at = -1;
      for (let r = r0; r < Math.min(64, r0 + rowStep); r++) {
        for (let c = c0; c < Math.min(96, c0 + colStep); c++) {
          const d = ulp32(nw[r * 96 + c] ?? 0, rw[r * 96 + c] ?? 0);
          if (d > best) {
            best = d;
            at = r * 96 + c;
          }
        }
      }
      expect(view.values[cell], `cell ${cell}`).toBe(best);
      expect(view.argmax[cell], `cell ${cell}`).toBe(at);
    }
  });
});

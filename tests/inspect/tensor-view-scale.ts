// Measures tensorView on a 4096 x 4096 float32 boundary (64 MB per side) at a 1024 x 1024 budget,
// a zoomed window, and a budget the size the renderer asks for (half the plot's pixels): wall
// time, JSON size of the response (what crosses the socket) with its two binary buffers, and
// memory. A script, not a test (timings depend on the machine):
//   node --import tsx tests/inspect/tensor-view-scale.ts
// Before the binary cells (values and argmax as JSON arrays) the 1024 x 1024 abs_diff response
// was 30.9 MB, reference 27.3 MB, ulp 10.9 MB, the 512 x 512 zoom 3.2 MB.
import { performance } from 'node:perf_hooks';
import { tensorView } from '../../main/core/inspect/tensor-view-pooling.ts';
import type { TensorViewRequest } from '../../protocol/inspector-api.ts';
import { cleanupBundles, faithful, makeBundle, tensor } from '../compare/compare-fixtures.ts';

const SIDE = 4096;
const count = SIDE * SIDE;
const reference = new Float32Array(count);
const native = new Float32Array(count);
let state = 12345;
for (let i = 0; i < count; i++) {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  const value = (state / 4294967296 - 0.5) * 8;
  reference[i] = value;
  native[i] = value + (i % 7 === 0 ? 1e-6 : 0);
}
native[1234 * SIDE + 4000] = Number.NaN;
native[4000 * SIDE + 17] = 1e9;

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const nativeBundle = await makeBundle('native', [[tensor('big', 'F32', [SIDE, SIDE], new Uint8Array(native.buffer))]]);
const referenceBundle = await makeBundle('reference', [
  [tensor('big', 'F32', [SIDE, SIDE], new Uint8Array(reference.buffer), { contract: faithful({ abs: 1e-5 }) })],
]);

async function measure(label: string, request: TensorViewRequest): Promise<void> {
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  const view = await tensorView(nativeBundle, referenceBundle, request);
  const elapsed = performance.now() - start;
  const json = JSON.stringify(view);
  const { rss, heapUsed } = process.memoryUsage();
  console.log(
    `${label}: ${elapsed.toFixed(0)} ms, grid ${view.grid.rows} x ${view.grid.cols} (step ${view.grid.rowStep} x ${view.grid.colStep}), ` +
      `response ${mb(json.length)} JSON (${json.length} bytes; values ${view.values.format} ${mb(view.values.data.length)}, argmax ${view.argmax.format} ${mb(view.argmax.data.length)}; ` +
      `tensor ${mb(count * 4)} per side), nanCells ${view.nanCells.length}, ` +
      `heap +${mb(heapUsed - heapBefore)}, rss ${mb(rss)}`,
  );
}

const base = { pass: 0, boundary: 'big', maxRows: 1024, maxCols: 1024 };
await measure('abs_diff, whole tensor (first run)', { ...base, metric: 'abs_diff' });
await measure('abs_diff, whole tensor', { ...base, metric: 'abs_diff' });
await measure('reference, whole tensor', { ...base, metric: 'reference' });
await measure('ulp, whole tensor', { ...base, metric: 'ulp' });
await measure('abs_diff, zoom 512 x 512 window (step 1)', { ...base, metric: 'abs_diff', window: { row0: 1024, row1: 1536, col0: 3584, col1: 4096 } });
// HeatmapView asks for half its plot's CSS pixels: a 900 x 560 plot is a 450 x 280 budget.
await measure('abs_diff, whole tensor at a 900 x 560 px plot (budget 280 x 450)', { ...base, metric: 'abs_diff', maxRows: 280, maxCols: 450 });
await cleanupBundles();

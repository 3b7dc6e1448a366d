// The heatmap behind the tensor view: one boundary folded to 2-D (the last dimension is the
// columns, the others fold into rows; 1-D is one row, 0-D one cell), a window of it, pooled into
// at most maxRows x maxCols cells while both sides stream through in row-aligned windows, so a
// 4096 x 4096 tensor costs a window per side plus the grid, never the tensor.
//
// Pooling keeps the worst visible: abs_diff / ulp cells hold their max, reference / native
// cells the value of largest magnitude (sign kept). A NaN on either side of a cell makes the
// cell NaN and lists it in nanCells, and its argmax points at the first NaN: a NaN must never
// vanish into a max. Infinities are listed in infCells; an infinity that mismatches counts as an
// Infinity difference, as in the comparator. A smaller window at the same budget gives a finer
// step, down to one element per cell when the window fits: that is the zoom. `max` is the
// largest finite cell score: the max diff, or for reference / native the largest finite
// magnitude (a symmetric colour scale centres on 0). The grid leaves as binary
// (tensor-view-encoding.ts): a million JSON numbers would cost more than the pooling saved.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE } from '../bundle/dtype.ts';
import type { TensorViewRequest, TensorViewValue } from './view-values.ts';
import { encodeArgmax, encodeValues } from './tensor-view-encoding.ts';
import { boundarySides, requirePaired, where } from './boundary-sides.ts';
import { WindowValues } from './element-quantities.ts';
import { Grid, LITTLE_ENDIAN, f32Side } from './tensor-view-grid.ts';
import { rowAlignedWindow, streamWindows } from './window-stream.ts';

export interface Folded {
  readonly rows: number;
  readonly cols: number;
}

/** The 2-D view of a shape: the last dimension is the columns; 1-D is one row; 0-D is 1 x 1. */
export function fold(shape: readonly number[]): Folded {
  if (shape.length === 0) return { rows: 1, cols: 1 };
  const cols = shape[shape.length - 1] as number;
  let rows = 1;
  for (let axis = 0; axis < shape.length - 1; axis++) rows *= shape[axis] as number;
  return { rows, cols };
}

interface Span {
  readonly row0: number;
  readonly row1: number;
  readonly col0: number;
  readonly col1: number;
}

/** Step per cell along one axis and the number of cells: the coarsest grid that fits the budget. */
function stepFor(extent: number, budget: number): { step: number; cells: number } {
  if (extent === 0) return { step: 1, cells: 0 };
  const step = Math.ceil(extent / budget);
  return { step, cells: Math.ceil(extent / step) };
}

export async function tensorView(native: TraceBundle | null, reference: TraceBundle, request: TensorViewRequest): Promise<TensorViewValue> {
  const { pass, boundary, metric } = request;
  const sides = boundarySides(native, reference, pass, boundary);
  if (metric === 'abs_diff' || metric === 'ulp') requirePaired(sides, `the ${metric} view`);
  if (metric === 'native' && sides.native === null)
    throw new Error(`${where(pass, boundary)}: the native view needs the native side, and ${sides.unpaired ?? 'it is absent'}`);
  if (metric === 'reference' && sides.reference === null)
    throw new Error(`${where(pass, boundary)}: the reference view needs the reference side, and ${sides.unpaired ?? 'it is absent'}`);
  // The other side is read along when it pairs, so its NaNs and infinities mark the cells too.
  const readNative = metric !== 'reference' || sides.paired;
  const readReference = metric !== 'native' || sides.paired;

  const folded = fold(sides.shape);
  const span: Span = request.window ?? { row0: 0, row1: folded.rows, col0: 0, col1: folded.cols };
  if (span.row0 > span.row1 || span.row1 > folded.rows || span.col0 > span.col1 || span.col1 > folded.cols) {
    throw new Error(
      `${where(pass, boundary)}: window rows [${span.row0}, ${span.row1}) x cols [${span.col0}, ${span.col1}) is not inside the folded ${folded.rows} x ${folded.cols} view of shape [${sides.shape.join(', ')}]`,
    );
  }
  const rowGrid = stepFor(span.row1 - span.row0, request.maxRows);
  const colGrid = stepFor(span.col1 - span.col0, request.maxCols);
  const grid = new Grid(rowGrid.cells * colGrid.cells, metric === 'reference' || metric === 'native');

  const elementBytes = DTYPE_SIZE[sides.dtype];
  const windowElements = rowAlignedWindow(elementBytes, folded.cols);
  const values = new WindowValues(sides.dtype, windowElements, { native: readNative, reference: readReference });
  const quantity = new Float64Array(windowElements);
  const flags = new Uint8Array(windowElements);
  const { cols } = folded;
  const fullWidth = span.col0 === 0 && span.col1 === cols;
  const fusedF32 = sides.dtype === 'F32' && LITTLE_ENDIAN;

  await streamWindows(
    readNative ? native : null,
    readReference ? reference : null,
    { pass, name: boundary, elementBytes, elements: sides.elements, windowElements },
    (window) => {
      const first = window.start;
      const last = first + window.count;
      if (cols === 0 || rowGrid.cells === 0 || colGrid.cells === 0) return;
      const rowFirst = Math.max(span.row0, Math.floor(first / cols));
      const rowLast = Math.min(span.row1, Math.ceil(last / cols));
      if (rowFirst >= rowLast) return;
      if (fusedF32) {
        // Straight from the window's float32 words: no decode, no per-element quantity arrays.
        const nativeSide = f32Side(window.native);
        const referenceSide = f32Side(window.reference);
        for (let r = rowFirst; r < rowLast; r++) {
          const rowStart = r * cols;
          const from = Math.max(first, rowStart + span.col0) - first;
          const to = Math.min(last, rowStart + span.col1) - first;
          if (from >= to) continue;
          const cellRow = Math.floor((r - span.row0) / rowGrid.step);
          grid.poolF32(metric, nativeSide, referenceSide, from, to, first, first + from - rowStart - span.col0, cellRow * colGrid.cells, colGrid.step);
        }
        return;
      }
      values.attach(window.native, window.reference);
      if (fullWidth) {
        // One decode for every row of the window inside the view (the common case).
        const from = Math.max(first, rowFirst * cols) - first;
        const to = Math.min(last, rowLast * cols) - first;
        values.decode(from, to);
        values.quantity(metric, from, to, quantity, flags);
      }
      for (let r = rowFirst; r < rowLast; r++) {
        const rowStart = r * cols;
        const from = Math.max(first, rowStart + span.col0) - first;
        const to = Math.min(last, rowStart + span.col1) - first;
        if (from >= to) continue;
        if (!fullWidth) {
          values.decode(from, to);
          values.quantity(metric, from, to, quantity, flags);
        }
        const cellRow = Math.floor((r - span.row0) / rowGrid.step);
        grid.pool(quantity, flags, from, to, first, first + from - rowStart - span.col0, cellRow * colGrid.cells, colGrid.step);
      }
    },
  );

  const out = grid.result();
  const geometry = { cols, row0: span.row0, col0: span.col0, gridCols: colGrid.cells, rowStep: rowGrid.step, colStep: colGrid.step };
  return {
    pass,
    boundary,
    metric,
    dtype: sides.dtype,
    shape: [...sides.shape],
    folded: { rows: folded.rows, cols: folded.cols },
    window: { row0: span.row0, row1: span.row1, col0: span.col0, col1: span.col1 },
    grid: { rows: rowGrid.cells, cols: colGrid.cells, rowStep: rowGrid.step, colStep: colGrid.step },
    values: encodeValues(out.values),
    argmax: encodeArgmax(out.argmax, geometry),
    nanCells: out.nanCells,
    infCells: out.infCells,
    max: out.max,
  };
}

// Turns a pooled TensorView (its cells decoded once by the caller, tensor-view-codec.ts) into
// Plotly traces: the values (log10 for errors, so six orders of magnitude stay readable), and
// overlays that paint NaN and infinity cells in their own colours (they are findings, not
// missing data).
import type { Data } from 'plotly.js';
import type { TensorView } from '../../../../protocol/inspector-api.ts';
import type { DecodedCells } from '../../../../protocol/tensor-view-codec.ts';
import { formatNumber } from '../../format/numbers.ts';
import { INFERNO, PLOT_COLORS } from '../plot/plot-theme.ts';

export const METRIC_LABEL: Record<TensorView['metric'], string> = { abs_diff: '|diff|', ulp: 'ULP', reference: 'reference', native: 'native' };

/** Element-index coordinate of a pooled cell's centre along one axis. */
function cellCentre(start: number, step: number, cell: number): number {
  return start + cell * step + (step - 1) / 2;
}

/** The pooled cell under an element-index coordinate (inverse of cellCentre). */
export function cellAt(start: number, step: number, cells: number, coordinate: number): number {
  return Math.min(cells - 1, Math.max(0, Math.round((coordinate - start - (step - 1) / 2) / step)));
}

function overlay(view: TensorView, cells: readonly number[], color: string, label: string, x: number[], y: number[]): Data {
  const z: (number | null)[][] = Array.from({ length: view.grid.rows }, () => new Array<number | null>(view.grid.cols).fill(null));
  for (const cell of cells) {
    const row = z[Math.floor(cell / view.grid.cols)];
    if (row !== undefined) row[cell % view.grid.cols] = 1;
  }
  return {
    type: 'heatmap',
    x,
    y,
    z,
    colorscale: [
      [0, color],
      [1, color],
    ],
    showscale: false,
    hovertemplate: `row %{y} col %{x}: ${label}<extra></extra>`,
    zmin: 0,
    zmax: 1,
  } as Data;
}

export function heatmapTraces(view: TensorView, cells: DecodedCells): Data[] {
  const { rows, cols, rowStep, colStep } = view.grid;
  const x = Array.from({ length: cols }, (_, c) => cellCentre(view.window.col0, colStep, c));
  const y = Array.from({ length: rows }, (_, r) => cellCentre(view.window.row0, rowStep, r));
  const isError = view.metric === 'abs_diff' || view.metric === 'ulp';
  const z: (number | null)[][] = [];
  const text: string[][] = [];
  let floor = Infinity;
  let ceiling = -Infinity;
  for (const number of cells.values) {
    if (isError && number > 0 && Number.isFinite(number)) {
      floor = Math.min(floor, Math.log10(number));
      ceiling = Math.max(ceiling, Math.log10(number));
    }
  }
  // Exact matches sit one decade below the smallest error, in the colour scale's darkest colour.
  const zeroLevel = Number.isFinite(floor) ? Math.floor(floor) - 1 : -1;
  for (let r = 0; r < rows; r += 1) {
    const zRow: (number | null)[] = [];
    const textRow: string[] = [];
    for (let c = 0; c < cols; c += 1) {
      const number = cells.values[r * cols + c] ?? Number.NaN;
      if (Number.isNaN(number)) {
        zRow.push(null);
        textRow.push('NaN / none');
        continue;
      }
      textRow.push(formatNumber(number));
      if (!Number.isFinite(number)) zRow.push(null);
      else if (isError) zRow.push(number > 0 ? Math.log10(number) : zeroLevel);
      else zRow.push(number);
    }
    z.push(zRow);
    text.push(textRow);
  }
  const pooled = rowStep > 1 || colStep > 1 ? ` (max of ${rowStep}×${colStep})` : '';
  const base: Data = {
    type: 'heatmap',
    x,
    y,
    z,
    // customdata, not text: the formatted value with its exact spelling (NaN, inf, -0).
    customdata: text,
    hovertemplate: `row %{y} col %{x}<br>${METRIC_LABEL[view.metric]}${pooled} %{customdata}<extra></extra>`,
    colorscale: isError ? INFERNO : 'RdBu',
    // Errors: pin the scale so exact matches are black even when every cell is exact.
    zmin: isError ? zeroLevel : undefined,
    zmax: isError ? Math.max(zeroLevel + 1, Number.isFinite(ceiling) ? ceiling : zeroLevel + 1) : undefined,
    reversescale: !isError,
    zmid: isError ? undefined : 0,
    colorbar: {
      thickness: 8,
      outlinewidth: 0,
      tickfont: { size: 9 },
      title: { text: isError ? `log10 ${METRIC_LABEL[view.metric]}` : METRIC_LABEL[view.metric], side: 'right' },
    },
  } as Data;
  const traces: Data[] = [base];
  if (view.infCells.length > 0) traces.push(overlay(view, view.infCells, PLOT_COLORS.inf, 'infinity', x, y));
  // NaN last: a cell holding both is a NaN finding first.
  if (view.nanCells.length > 0) traces.push(overlay(view, view.nanCells, PLOT_COLORS.nan, 'NaN', x, y));
  return traces;
}

/** The cell holding the view's largest finite value (for "show me the worst element"). */
export function worstCell(view: TensorView, cells: DecodedCells): number | null {
  let best = -Infinity;
  let at: number | null = null;
  cells.values.forEach((number, cell) => {
    if (Number.isFinite(number) && number > best) {
      best = number;
      at = cell;
    }
  });
  // A NaN is worse than any finite error.
  const firstNan = view.nanCells[0];
  return firstNan !== undefined ? firstNan : at;
}

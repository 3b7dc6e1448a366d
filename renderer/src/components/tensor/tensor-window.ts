// The window of the folded 2-D tensor a heatmap shows, and how a Plotly zoom maps onto it.
import type { PlotRelayoutEvent } from 'plotly.js';
import type { TensorView } from '../../../../protocol/inspector-api.ts';

export type TensorWindow = TensorView['window'];

/** The window a zoom asks for; null for "the whole tensor" (autorange); undefined: not a zoom. */
export function windowFromRelayout(event: PlotRelayoutEvent, current: TensorWindow, folded: { rows: number; cols: number }): TensorWindow | null | undefined {
  if (event['xaxis.autorange'] === true || event['yaxis.autorange'] === true) return null;
  const x0 = event['xaxis.range[0]'];
  const x1 = event['xaxis.range[1]'];
  const y0 = event['yaxis.range[0]'];
  const y1 = event['yaxis.range[1]'];
  if (x0 === undefined && y0 === undefined) return undefined;
  // Axis coordinates are element indices at cell centres: a cell spans [i - 0.5, i + 0.5).
  const span = (a: number, b: number, limit: number): [number, number] => {
    const low = Math.max(0, Math.floor(Math.min(a, b) + 0.5));
    const high = Math.min(limit, Math.ceil(Math.max(a, b) + 0.5));
    return high > low ? [low, high] : [low, Math.min(limit, low + 1)];
  };
  const [col0, col1] = x0 !== undefined && x1 !== undefined ? span(x0, x1, folded.cols) : [current.col0, current.col1];
  const [row0, row1] = y0 !== undefined && y1 !== undefined ? span(y0, y1, folded.rows) : [current.row0, current.row1];
  if (col0 === current.col0 && col1 === current.col1 && row0 === current.row0 && row1 === current.row1) return undefined;
  return { row0, row1, col0, col1 };
}

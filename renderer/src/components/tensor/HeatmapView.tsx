// One heatmap of a boundary: asks the core for a view pooled to this plot's pixel budget, draws
// it, maps zooms to a finer window request and clicks to the element under the cell's maximum.
import { useEffect, useMemo, useRef } from 'react';
import type { Layout, PlotMouseEvent, PlotRelayoutEvent } from 'plotly.js';
import { fromWire, type HeatmapMetric, type TensorView } from '../../../../protocol/inspector-api.ts';
import { decodeCells, type DecodedCells } from '../../../../protocol/tensor-view-codec.ts';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { useElementSize } from '../../hooks/use-element-size.ts';
import { formatNumber, formatShape } from '../../format/numbers.ts';
import { Plot } from '../plot/Plot.tsx';
import { plotLayout } from '../plot/plot-theme.ts';
import { cellAt, heatmapTraces, METRIC_LABEL } from './heatmap-traces.ts';
import { windowFromRelayout, type TensorWindow } from './tensor-window.ts';

interface HeatmapViewProps {
  pass: number;
  boundary: string;
  metric: HeatmapMetric;
  /** null: the whole tensor. */
  window: TensorWindow | null;
  version: number;
  testId?: string;
  compact?: boolean;
  onWindowChange: (window: TensorWindow | null) => void;
  onElement: (flatIndex: number) => void;
  onLoaded?: (view: TensorView, cells: DecodedCells) => void;
  /** The view of (pass, boundary) arrived or failed: what waited for it may go (TensorPanel). */
  onSettled?: (pass: number, boundary: string) => void;
}

const MAX_GRID = 4096;
/**
 * CSS pixels per pooled cell: finer than 2 px is invisible and only costs transfer. The budget
 * follows the plot's own size (a 900 x 560 plot asks for 450 x 280 cells, ~0.7 MB for any tensor
 * size), never the tensor's; MAX_GRID only caps what the API accepts.
 */
const PIXELS_PER_CELL = 2;

export function HeatmapView({ pass, boundary, metric, window, version, testId, compact, onWindowChange, onElement, onLoaded, onSettled }: HeatmapViewProps) {
  const [sizeRef, size] = useElementSize<HTMLDivElement>();
  const outer = useRef<HTMLDivElement>(null);
  const maxRows = Math.min(MAX_GRID, Math.max(1, Math.floor(size.height / PIXELS_PER_CELL)));
  const maxCols = Math.min(MAX_GRID, Math.max(1, Math.floor(size.width / PIXELS_PER_CELL)));
  const request = size.width === 0 ? null : { pass, boundary, metric, maxRows, maxCols, ...(window === null ? {} : { window }) };
  const { data: view, loading, error } = useApiQuery('getTensorView', request, version);
  const onLoadedRef = useRef(onLoaded);
  onLoadedRef.current = onLoaded;
  // Decoded once per response: the traces, clicks and onLoaded all read these arrays.
  const cells = useMemo(() => (view === null ? null : decodeCells(view)), [view]);
  useEffect(() => {
    if (view !== null && cells !== null) onLoadedRef.current?.(view, cells);
  }, [view, cells]);
  // A request in flight means what is on screen is about to be replaced: it is not "painted".
  useEffect(() => {
    if (loading) outer.current?.removeAttribute('data-heatmap-painted');
  }, [loading]);

  const current = view !== null && view.pass === pass && view.boundary === boundary && view.metric === metric ? view : null;
  const onSettledRef = useRef(onSettled);
  onSettledRef.current = onSettled;
  const settled = !loading && (current !== null || error !== null);
  useEffect(() => {
    if (settled) onSettledRef.current?.(pass, boundary);
  }, [settled, pass, boundary]);
  const traces = useMemo(() => (current === null || cells === null ? [] : heatmapTraces(current, cells)), [current, cells]);
  const layout = useMemo<Partial<Layout>>(() => {
    if (current === null) return plotLayout({});
    const { window: shown } = current;
    return plotLayout({
      margin: compact ? { l: 34, r: 4, t: 18, b: 22 } : { l: 40, r: 8, t: 20, b: 26 },
      title: { text: `${METRIC_LABEL[current.metric]}  max ${formatNumber(fromWire(current.max))}`, font: { size: 10 }, x: 0.01, xanchor: 'left' },
      // A new window is a new view: let our ranges win over the previous zoom.
      uirevision: `${current.pass}:${current.boundary}:${shown.row0}:${shown.row1}:${shown.col0}:${shown.col1}`,
      xaxis: { range: [shown.col0 - 0.5, shown.col1 - 0.5], title: { text: '' }, zeroline: false },
      yaxis: { range: [shown.row1 - 0.5, shown.row0 - 0.5], zeroline: false },
      dragmode: 'zoom',
    });
  }, [current, compact]);

  const onClick = (event: PlotMouseEvent): void => {
    const point = event.points[0];
    if (current === null || cells === null || point === undefined || typeof point.x !== 'number' || typeof point.y !== 'number') return;
    const { grid, window: shown } = current;
    const cell = cellAt(shown.row0, grid.rowStep, grid.rows, point.y) * grid.cols + cellAt(shown.col0, grid.colStep, grid.cols, point.x);
    const flatIndex = cells.flatIndex[cell];
    if (flatIndex !== undefined && flatIndex >= 0) onElement(flatIndex);
  };

  const onRelayout = (event: PlotRelayoutEvent): void => {
    if (current === null) return;
    const next = windowFromRelayout(event, current.window, current.folded);
    if (next !== undefined) onWindowChange(next);
  };

  const painted = (): void => {
    if (outer.current === null || current === null) return;
    outer.current.setAttribute('data-heatmap-painted', String(performance.now()));
    outer.current.setAttribute('data-heatmap-view', `${current.pass}:${current.boundary}:${current.metric}`);
    // The window and pooling steps on screen, so a test (or a user's devtools) can see a zoom
    // really asked the core for a finer slice.
    const { window: shown, grid } = current;
    outer.current.setAttribute('data-heatmap-window', `${shown.row0}:${shown.row1}:${shown.col0}:${shown.col1}:${grid.rowStep}:${grid.colStep}`);
  };

  return (
    <div className={`heatmap${compact ? ' compact' : ''}`} ref={outer} data-testid={testId} data-metric={metric} data-loading={loading ? 'true' : 'false'}>
      <div className="heatmap-caption">
        {current === null ? (
          <span className="muted">{loading ? 'loading…' : ''}</span>
        ) : (
          <span className="muted">
            {formatShape(current.shape)} {current.dtype} → {current.folded.rows}×{current.folded.cols}; rows {current.window.row0}–{current.window.row1} cols{' '}
            {current.window.col0}–{current.window.col1}
            {current.grid.rowStep > 1 || current.grid.colStep > 1 ? ` · pooled ${current.grid.rowStep}×${current.grid.colStep}` : ''}
            {current.nanCells.length > 0 ? <span className="tag tag-nan"> {current.nanCells.length} NaN cells</span> : null}
            {current.infCells.length > 0 ? <span className="tag tag-inf"> {current.infCells.length} inf cells</span> : null}
          </span>
        )}
      </div>
      {error !== null ? <div className="inline-error">{error}</div> : null}
      <div className="heatmap-plot" ref={sizeRef}>
        {current !== null ? <Plot data={traces} layout={layout} onClick={onClick} onRelayout={onRelayout} onAfterPlot={painted} /> : null}
      </div>
    </div>
  );
}

// The selected boundary's numbers: a heatmap of the error (or reference / native / error side by
// side) for tensors, lines for 1-D ones, and where the error lives. Clicking anything that is an
// element opens it in the bit inspector.
import { useCallback, useEffect, useState } from 'react';
import type { Series, TensorView } from '../../../../protocol/inspector-api.ts';
import type { DecodedCells } from '../../../../protocol/tensor-view-codec.ts';
import { formatShape } from '../../format/numbers.ts';
import { selectFlatIndex } from '../../store/actions/selection-actions.ts';
import { getState, useInspectorStore } from '../../store/inspector-store.ts';
import { selectRowsVersion, selectSelectedRow } from '../../store/selectors.ts';
import { ErrorStatsPlots } from './ErrorStatsPlots.tsx';
import { worstCell } from './heatmap-traces.ts';
import { HeatmapView } from './HeatmapView.tsx';
import { SeriesView, worstElement } from './SeriesView.tsx';
import type { TensorWindow } from './tensor-window.ts';

type ErrorMetric = 'abs_diff' | 'ulp';

export function TensorPanel() {
  const row = useInspectorStore(selectSelectedRow);
  const version = useInspectorStore(selectRowsVersion);
  const [metric, setMetric] = useState<ErrorMetric>('abs_diff');
  const [sideBySide, setSideBySide] = useState(false);
  const [window, setWindow] = useState<TensorWindow | null>(null);
  const rowId = row?.id ?? null;
  // A new boundary starts at the whole tensor.
  useEffect(() => setWindow(null), [rowId]);

  // With no element chosen yet, show the worst one: that is what an engineer looks at first.
  const onLoaded = useCallback((view: TensorView, cells: DecodedCells) => {
    const state = getState();
    if (state.flatIndex !== null || state.selection?.pass !== view.pass || state.selection.boundary !== view.boundary) return;
    const cell = worstCell(view, cells);
    const flatIndex = cell === null ? undefined : cells.flatIndex[cell];
    if (flatIndex !== undefined && flatIndex >= 0) selectFlatIndex(flatIndex);
  }, []);

  // The boundary whose main heatmap has settled: its error statistics are asked for after it.
  const [heatmapSettled, setHeatmapSettled] = useState<string | null>(null);
  const onHeatmapSettled = useCallback((pass: number, boundary: string) => setHeatmapSettled(`${pass}:${boundary}`), []);

  const onSeriesLoaded = useCallback((series: Series) => {
    const state = getState();
    if (state.flatIndex !== null || state.selection?.pass !== series.pass || state.selection.boundary !== series.boundary) return;
    const flatIndex = worstElement(series);
    if (flatIndex !== null) selectFlatIndex(flatIndex);
  }, []);

  if (row === null) return <div className="panel-empty">Select a boundary in the table (j / k, or click) to see its tensors.</div>;
  const oneDimensional = row.shape.length <= 1;
  const isFloat = /^(F|BF|C)/.test(row.dtype);

  return (
    <div className="tensor-panel" data-testid="tensor-panel">
      <div className="panel-toolbar">
        <span className="panel-title">
          P{row.pass} <b>{row.boundary}</b> {row.dtype} {formatShape(row.shape)}
        </span>
        {!oneDimensional ? (
          <>
            <label>
              metric
              <select value={metric} onChange={(event) => setMetric(event.target.value === 'ulp' ? 'ulp' : 'abs_diff')} data-testid="heatmap-metric">
                <option value="abs_diff">|diff|</option>
                <option value="ulp" disabled={!isFloat}>
                  ULP
                </option>
              </select>
            </label>
            <label>
              <input type="checkbox" checked={sideBySide} onChange={(event) => setSideBySide(event.target.checked)} data-testid="toggle-side-by-side" />
              reference · native · diff
            </label>
            {window !== null ? (
              <button type="button" className="link-button" onClick={() => setWindow(null)}>
                whole tensor
              </button>
            ) : null}
          </>
        ) : null}
        <span className="spacer" />
        <span className="muted" title={row.reason}>
          {row.contract}
        </span>
      </div>
      {oneDimensional ? (
        <SeriesView pass={row.pass} boundary={row.boundary} elements={row.elements} version={version} onElement={selectFlatIndex} onLoaded={onSeriesLoaded} />
      ) : (
        <div className={`heatmaps${sideBySide ? ' side-by-side' : ''}`}>
          {sideBySide ? (
            <>
              <HeatmapView
                pass={row.pass}
                boundary={row.boundary}
                metric="reference"
                window={window}
                version={version}
                compact
                onWindowChange={setWindow}
                onElement={selectFlatIndex}
              />
              <HeatmapView
                pass={row.pass}
                boundary={row.boundary}
                metric="native"
                window={window}
                version={version}
                compact
                onWindowChange={setWindow}
                onElement={selectFlatIndex}
              />
            </>
          ) : null}
          <HeatmapView
            pass={row.pass}
            boundary={row.boundary}
            metric={metric}
            window={window}
            version={version}
            compact={sideBySide}
            testId="heatmap"
            onWindowChange={setWindow}
            onElement={selectFlatIndex}
            onLoaded={onLoaded}
            onSettled={onHeatmapSettled}
          />
        </div>
      )}
      {row.maxAbs !== null ? (
        <ErrorStatsPlots
          pass={row.pass}
          boundary={row.boundary}
          version={version}
          onElement={selectFlatIndex}
          ready={oneDimensional || heatmapSettled === `${row.pass}:${row.boundary}`}
        />
      ) : (
        <div className="muted panel-note">Not compared: {row.reason}</div>
      )}
    </div>
  );
}

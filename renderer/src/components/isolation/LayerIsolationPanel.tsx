// Local vs accumulated error per layer: feed each layer the reference input and see what it adds
// by itself, against what the normal run carries there. A layer whose local error is close to
// the accumulated one is where the error is made; one far below it only inherits.
import { useEffect, useMemo, useState } from 'react';
import type { Data, Layout, PlotMouseEvent } from 'plotly.js';
import { fromWire, type LayerIsolation } from '../../../../protocol/inspector-api.ts';
import { formatWire } from '../../format/numbers.ts';
import { attempt } from '../../store/actions/attempt.ts';
import { revealBoundary } from '../../store/actions/selection-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectBusyLabel, selectRowsVersion } from '../../store/selectors.ts';
import { Plot } from '../plot/Plot.tsx';
import { PLOT_COLORS, plotLayout } from '../plot/plot-theme.ts';

/** Log axis: zero error (exact) cannot be drawn and becomes a gap in the line. */
const positive = (value: number): number | null => (value > 0 && Number.isFinite(value) ? value : null);

/** Rows listed in the table below the plot (the plot shows them all). */
const TABLE_ROWS = 2000;

function isolationTraces(isolation: LayerIsolation): Data[] {
  // x is the execution order: thousands of boundary names cannot be tick labels; hover names them.
  const order = isolation.rows.map((_, index) => index);
  const labels = isolation.rows.map((row) => `P${row.pass} ${row.boundary}`);
  const line = (name: string, color: string, values: (number | null)[]): Data =>
    ({
      type: 'scatter',
      mode: isolation.rows.length > 400 ? 'lines' : 'lines+markers',
      name,
      x: order,
      y: values,
      customdata: labels,
      line: { color, width: 1.2 },
      marker: { size: 4 },
      hovertemplate: `${name} %{y:.3e}<extra>%{customdata}</extra>`,
    }) as Data;
  return [
    line(
      'accumulated',
      PLOT_COLORS.accumulated,
      isolation.rows.map((row) => positive(fromWire(row.accumulated.maxAbs))),
    ),
    line(
      'local',
      PLOT_COLORS.local,
      isolation.rows.map((row) => positive(fromWire(row.local.maxAbs))),
    ),
  ];
}

export function LayerIsolationPanel() {
  const version = useInspectorStore(selectRowsVersion);
  const busy = useInspectorStore(selectBusyLabel);
  const [isolation, setIsolation] = useState<LayerIsolation | null>(null);
  const [running, setRunning] = useState(false);

  useEffect(() => {
    let current = true;
    void attempt('load layer isolation', 'getLayerIsolation', {}).then((result) => {
      if (current && result !== null) setIsolation(result);
    });
    return () => {
      current = false;
    };
  }, [version]);

  const run = async (): Promise<void> => {
    setRunning(true);
    const result = await attempt('run layer isolation', 'runLayerIsolation', {});
    setRunning(false);
    if (result !== null) setIsolation(result);
  };

  const traces = useMemo(() => (isolation === null ? [] : isolationTraces(isolation)), [isolation]);
  const layout = useMemo<Partial<Layout>>(
    () =>
      plotLayout({
        showlegend: true,
        legend: { orientation: 'h', x: 0, y: 1.1, font: { size: 9 } },
        margin: { l: 52, r: 8, t: 24, b: 30 },
        hovermode: 'x unified',
        yaxis: { type: 'log', exponentformat: 'e', title: { text: 'max |diff|' } },
        xaxis: { title: { text: 'boundary, in execution order' } },
      }),
    [],
  );
  const onClick = (event: PlotMouseEvent): void => {
    const index = event.points[0]?.pointIndex;
    const row = typeof index === 'number' && isolation !== null ? isolation.rows[index] : undefined;
    if (row !== undefined) revealBoundary({ pass: row.pass, boundary: row.boundary }, null, 'tensor');
  };

  return (
    <div className="isolation-panel" data-testid="isolation-panel">
      <div className="panel-toolbar">
        <button type="button" onClick={() => void run()} disabled={running || busy !== null} data-testid="btn-run-isolation">
          {running ? 'Running layer isolation…' : isolation?.status === 'ok' ? 'Run again' : 'Run layer isolation'}
        </button>
        <span className="muted">{isolation === null ? '' : isolation.status === 'ok' ? `${isolation.rows.length} boundaries` : isolation.message}</span>
      </div>
      {isolation?.status === 'error' ? <div className="inline-error">{isolation.message}</div> : null}
      {isolation?.status === 'not_run' ? (
        <div className="panel-empty">
          Layer isolation replays each boundary from the reference input, so what a layer adds by itself can be told from what it inherits.
        </div>
      ) : null}
      {isolation?.status === 'ok' && isolation.rows.length > 0 ? (
        <>
          <div className="isolation-plot">
            <Plot data={traces} layout={layout} onClick={onClick} testId="isolation-plot" />
          </div>
          <div className="isolation-table">
            <table>
              <thead>
                <tr>
                  <th>pass</th>
                  <th>boundary</th>
                  <th>stage</th>
                  <th className="num">local max</th>
                  <th className="num">local rmse</th>
                  <th className="num">accum. max</th>
                  <th className="num">accum. rmse</th>
                </tr>
              </thead>
              <tbody>
                {isolation.rows.slice(0, TABLE_ROWS).map((row) => (
                  <tr key={`${row.pass}:${row.boundary}`} onClick={() => revealBoundary({ pass: row.pass, boundary: row.boundary }, null, 'tensor')}>
                    <td className="num">{row.pass}</td>
                    <td>{row.boundary}</td>
                    <td>{row.stage}</td>
                    <td className="num">{formatWire(row.local.maxAbs)}</td>
                    <td className="num">{formatWire(row.local.rmse)}</td>
                    <td className="num">{formatWire(row.accumulated.maxAbs)}</td>
                    <td className="num">{formatWire(row.accumulated.rmse)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {isolation.rows.length > TABLE_ROWS ? (
              <div className="muted panel-note">
                The first {TABLE_ROWS} of {isolation.rows.length} are listed; the plot shows every one.
              </div>
            ) : null}
          </div>
        </>
      ) : null}
    </div>
  );
}

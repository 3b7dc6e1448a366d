// A 1-D boundary as lines: reference and native (min/max bands when pooled, so spikes survive)
// and |diff| on a log axis. Zooming asks for a finer element range; clicking picks an element.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { Data, Layout, PlotMouseEvent, PlotRelayoutEvent } from 'plotly.js';
import { fromWire, type Series, type WireNumber } from '../../../../protocol/inspector-api.ts';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { useElementSize } from '../../hooks/use-element-size.ts';
import { Plot } from '../plot/Plot.tsx';
import { PLOT_COLORS, plotLayout } from '../plot/plot-theme.ts';

interface SeriesViewProps {
  pass: number;
  boundary: string;
  elements: number;
  version: number;
  onElement: (flatIndex: number) => void;
  onLoaded?: (series: Series) => void;
}

/** The element with the largest |diff| when the series is unpooled (pooled buckets have no argmax). */
export function worstElement(series: Series): number | null {
  if (series.step !== 1) return null;
  let best = -Infinity;
  let at: number | null = null;
  series.absDiff.forEach((value, bucket) => {
    const number = fromWire(value);
    const rank = Number.isNaN(number) ? Infinity : number;
    if (rank > best) {
      best = rank;
      at = series.start + bucket;
    }
  });
  return at;
}

const numbers = (values: readonly WireNumber[]): (number | null)[] =>
  values.map((value) => {
    const number = fromWire(value);
    return Number.isFinite(number) ? number : null;
  });

function seriesTraces(series: Series): Data[] {
  const x = series.reference.min.map((_, bucket) => series.start + bucket * series.step);
  const pooled = series.step > 1;
  // The reference is drawn wide underneath, the native thin on top: where they agree, the native
  // line sits inside the reference band; where they part, both show.
  const band = (side: 'reference' | 'native', color: string): Data[] => {
    const width = side === 'reference' ? 3 : 1;
    const max: Data = {
      type: 'scatter',
      mode: 'lines',
      x,
      y: numbers(series[side].max),
      line: { color, width },
      name: side,
      hovertemplate: `${side} %{y}<extra>[%{x}]</extra>`,
    } as Data;
    if (!pooled) return [max];
    const min: Data = {
      type: 'scatter',
      mode: 'lines',
      x,
      y: numbers(series[side].min),
      line: { color, width },
      fill: 'tonexty',
      fillcolor: `${color}33`,
      name: `${side} min`,
      hoverinfo: 'skip',
    } as Data;
    return [max, min];
  };
  const diff: Data = {
    type: 'scatter',
    mode: 'lines',
    x,
    // Log axis: exact matches have no place on it and are left out rather than faked.
    y: series.absDiff.map((value) => {
      const number = fromWire(value);
      return number > 0 && Number.isFinite(number) ? number : null;
    }),
    yaxis: 'y2',
    line: { color: PLOT_COLORS.diff, width: 1 },
    name: '|diff|',
    hovertemplate: '|diff| %{y:.3e}<extra>[%{x}]</extra>',
  } as Data;
  return [...band('reference', PLOT_COLORS.reference), ...band('native', PLOT_COLORS.native), diff];
}

export function SeriesView({ pass, boundary, elements, version, onElement, onLoaded }: SeriesViewProps) {
  const [sizeRef, size] = useElementSize<HTMLDivElement>();
  const [range, setRange] = useState<{ start: number; end: number } | null>(null);
  const maxPoints = Math.min(100_000, Math.max(2, size.width * 2));
  const request = size.width === 0 ? null : { pass, boundary, maxPoints, ...(range ?? {}) };
  const { data: series, error, loading } = useApiQuery('getSeries', request, version);
  const current = series !== null && series.pass === pass && series.boundary === boundary ? series : null;
  const onLoadedRef = useRef(onLoaded);
  onLoadedRef.current = onLoaded;
  useEffect(() => {
    if (current !== null) onLoadedRef.current?.(current);
  }, [current]);
  const traces = useMemo(() => (current === null ? [] : seriesTraces(current)), [current]);
  const layout = useMemo<Partial<Layout>>(
    () =>
      plotLayout({
        showlegend: true,
        legend: { orientation: 'h', x: 0, y: 1.12, font: { size: 9 } },
        margin: { l: 48, r: 52, t: 24, b: 26 },
        uirevision: `${pass}:${boundary}:${current?.start ?? 0}:${current?.end ?? 0}`,
        xaxis: current === null ? {} : { range: [current.start, Math.max(current.start + 1, current.end - 1)] },
        yaxis: { title: { text: 'value' } },
        yaxis2: { overlaying: 'y', side: 'right', type: 'log', title: { text: '|diff|' }, showgrid: false, exponentformat: 'e' },
      }),
    [current, pass, boundary],
  );

  const onRelayout = (event: PlotRelayoutEvent): void => {
    if (event['xaxis.autorange'] === true) return setRange(null);
    const x0 = event['xaxis.range[0]'];
    const x1 = event['xaxis.range[1]'];
    if (x0 === undefined || x1 === undefined) return;
    const start = Math.max(0, Math.floor(Math.min(x0, x1)));
    const end = Math.min(elements, Math.ceil(Math.max(x0, x1)) + 1);
    if (end - start >= 2) setRange({ start, end });
  };

  const onClick = (event: PlotMouseEvent): void => {
    const x = event.points[0]?.x;
    if (typeof x === 'number') onElement(Math.min(elements - 1, Math.max(0, Math.round(x))));
  };

  return (
    <div className="series-view">
      <div className="heatmap-caption muted">
        {current === null
          ? loading
            ? 'loading…'
            : ''
          : `elements ${current.start}–${current.end}${current.step > 1 ? ` · ${current.step} per point (min/max kept)` : ''}`}
        {range !== null ? (
          <button type="button" className="link-button" onClick={() => setRange(null)}>
            whole tensor
          </button>
        ) : null}
      </div>
      {error !== null ? <div className="inline-error">{error}</div> : null}
      <div className="series-plot" ref={sizeRef}>
        {current !== null ? <Plot data={traces} layout={layout} onRelayout={onRelayout} onClick={onClick} testId="series-plot" /> : null}
      </div>
    </div>
  );
}

// Where the error lives: a histogram of log10 |diff| and error against magnitude (does error
// scale with the value — rounding — or sit on a few elements — a bug?). Clicking a scatter point
// opens that element in the bit inspector.
import { useMemo } from 'react';
import type { Data, Layout, PlotMouseEvent } from 'plotly.js';
import { fromWire, type ErrorStats } from '../../../../protocol/inspector-api.ts';
import { formatCount } from '../../format/numbers.ts';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { Plot } from '../plot/Plot.tsx';
import { PLOT_COLORS, plotLayout } from '../plot/plot-theme.ts';

function histogramTrace(stats: ErrorStats): Data[] {
  const { edges, counts } = stats.histogram;
  const centres = counts.map((_, bin) => ((edges[bin] ?? 0) + (edges[bin + 1] ?? edges[bin] ?? 0)) / 2);
  const widths = counts.map((_, bin) => (edges[bin + 1] ?? 0) - (edges[bin] ?? 0));
  return [
    { type: 'bar', x: centres, y: counts, width: widths, marker: { color: PLOT_COLORS.diff }, hovertemplate: '10^%{x:.2f}: %{y}<extra></extra>' } as Data,
  ];
}

function scatterTrace(stats: ErrorStats): Data[] {
  const x: number[] = [];
  const y: number[] = [];
  const index: number[] = [];
  stats.scatter.magnitude.forEach((magnitude, i) => {
    const m = fromWire(magnitude);
    const d = fromWire(stats.scatter.absDiff[i] ?? 0);
    // Log-log axes: zero magnitude or zero error cannot be placed (counted in the caption).
    if (m > 0 && d > 0 && Number.isFinite(m) && Number.isFinite(d)) {
      x.push(m);
      y.push(d);
      index.push(stats.scatter.flatIndex[i] ?? 0);
    }
  });
  return [
    {
      // SVG scatter: the sample is small, and it needs no WebGL context (headless, remote desktops).
      type: 'scatter',
      mode: 'markers',
      x,
      y,
      customdata: index,
      marker: { color: PLOT_COLORS.native, size: 4, opacity: 0.7 },
      hovertemplate: '|ref| %{x:.3e}<br>|diff| %{y:.3e}<br>element %{customdata}<extra></extra>',
    } as Data,
  ];
}

interface ErrorStatsPlotsProps {
  pass: number;
  boundary: string;
  version: number;
  onElement: (flatIndex: number) => void;
  /**
   * False while the boundary's heatmap is still being built: the statistics read the same two
   * tensors, and on one core thread both would finish late; asked for once the heatmap settled,
   * the first thing an engineer looks at comes first.
   */
  ready: boolean;
}

export function ErrorStatsPlots({ pass, boundary, version, onElement, ready }: ErrorStatsPlotsProps) {
  const { data: stats, error } = useApiQuery('getErrorStats', ready ? { pass, boundary } : null, version);
  const current = stats !== null && stats.pass === pass && stats.boundary === boundary ? stats : null;
  const histogram = useMemo(() => (current === null ? [] : histogramTrace(current)), [current]);
  const scatter = useMemo(() => (current === null ? [] : scatterTrace(current)), [current]);
  const histogramLayout = useMemo<Partial<Layout>>(
    () =>
      plotLayout({
        title: { text: 'log10 |diff| histogram', font: { size: 10 }, x: 0.01, xanchor: 'left' },
        bargap: 0.05,
        xaxis: { title: { text: '' } },
        margin: { l: 40, r: 8, t: 20, b: 24 },
      }),
    [],
  );
  const scatterLayout = useMemo<Partial<Layout>>(
    () =>
      plotLayout({
        title: { text: '|diff| vs |reference|', font: { size: 10 }, x: 0.01, xanchor: 'left' },
        xaxis: { type: 'log', exponentformat: 'e' },
        yaxis: { type: 'log', exponentformat: 'e' },
        margin: { l: 48, r: 8, t: 20, b: 24 },
      }),
    [],
  );
  const onScatterClick = (event: PlotMouseEvent): void => {
    const flatIndex = event.points[0]?.customdata;
    if (typeof flatIndex === 'number') onElement(flatIndex);
  };
  if (error !== null) return <div className="inline-error">{error}</div>;
  const differing = current === null ? 0 : current.histogram.counts.reduce((a, b) => a + b, 0);
  return (
    <div className="error-stats">
      <div className="error-stats-caption muted">
        {current === null
          ? 'loading…'
          : `${formatCount(current.exactlyEqual)} exactly equal · ${formatCount(current.nonFinitePairs)} non-finite pairs · ${formatCount(differing)} differing`}
      </div>
      {current !== null && differing === 0 ? null : (
        <div className="error-stats-plots">
          <div className="stats-plot">{current !== null ? <Plot data={histogram} layout={histogramLayout} testId="error-histogram" /> : null}</div>
          <div className="stats-plot">
            {current !== null ? <Plot data={scatter} layout={scatterLayout} onClick={onScatterClick} testId="error-scatter" /> : null}
          </div>
        </div>
      )}
    </div>
  );
}

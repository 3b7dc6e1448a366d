// Reference, native and residual waveforms (min/max pooled). A horizontal drag selects the loop
// region; the current region is shaded.
import { useMemo } from 'react';
import type { Data, Layout, PlotSelectionEvent } from 'plotly.js';
import { Plot } from '../plot/Plot.tsx';
import { PLOT_COLORS, plotLayout } from '../plot/plot-theme.ts';
import type { LoopRegion } from './audio-player.ts';
import { poolMinMax } from './pcm-math.ts';

interface WaveformPlotProps {
  reference: Float32Array;
  native: Float32Array;
  residual: Float32Array;
  sampleRate: number;
  region: LoopRegion | null;
  onRegion: (region: LoopRegion | null) => void;
}

const BUCKETS = 1500;

function band(samples: Float32Array, sampleRate: number, name: string, color: string): Data[] {
  if (samples.length === 0) return [];
  const pooled = poolMinMax(samples, sampleRate, BUCKETS);
  return [
    {
      type: 'scatter',
      mode: 'lines',
      x: pooled.time,
      y: pooled.max,
      name,
      line: { color, width: 1 },
      hovertemplate: `${name} %{y:.4f}<extra>%{x:.3f} s</extra>`,
    } as Data,
    {
      type: 'scatter',
      mode: 'lines',
      x: pooled.time,
      y: pooled.min,
      name: `${name} min`,
      line: { color, width: 1 },
      fill: 'tonexty',
      fillcolor: `${color}40`,
      hoverinfo: 'skip',
      showlegend: false,
    } as Data,
  ];
}

export function WaveformPlot({ reference, native, residual, sampleRate, region, onRegion }: WaveformPlotProps) {
  const traces = useMemo(
    () => [
      ...band(reference, sampleRate, 'reference', PLOT_COLORS.reference),
      ...band(native, sampleRate, 'native', PLOT_COLORS.native),
      ...band(residual, sampleRate, 'residual', PLOT_COLORS.residual),
    ],
    [reference, native, residual, sampleRate],
  );
  const layout = useMemo<Partial<Layout>>(
    () =>
      plotLayout({
        showlegend: true,
        legend: { orientation: 'h', x: 0, y: 1.15, font: { size: 9 } },
        margin: { l: 44, r: 8, t: 22, b: 24 },
        dragmode: 'select',
        selectdirection: 'h',
        uirevision: 'waveform',
        xaxis: { title: { text: '' }, ticksuffix: ' s' },
        shapes:
          region === null
            ? []
            : [
                {
                  type: 'rect',
                  xref: 'x',
                  yref: 'paper',
                  x0: region.start,
                  x1: region.end,
                  y0: 0,
                  y1: 1,
                  fillcolor: '#ffffff',
                  opacity: 0.08,
                  line: { width: 0 },
                },
              ],
      }),
    [region],
  );
  const onSelected = (event: PlotSelectionEvent | undefined): void => {
    const range = event?.range?.x;
    if (range === undefined || range.length < 2) return onRegion(null);
    const start = Math.max(0, Math.min(Number(range[0]), Number(range[1])));
    const end = Math.max(Number(range[0]), Number(range[1]));
    if (end - start > 0.005) onRegion({ start, end });
  };
  return <Plot data={traces} layout={layout} onSelected={onSelected} testId="waveform" className="waveform-plot" />;
}

// A spectrogram of one signal, computed here (small STFT) from the samples already fetched.
import { useMemo } from 'react';
import type { Data, Layout } from 'plotly.js';
import { Plot } from '../plot/Plot.tsx';
import { plotLayout } from '../plot/plot-theme.ts';
import { spectrogram } from './stft.ts';

export function SpectrogramPlot({ samples, sampleRate, label }: { samples: Float32Array; sampleRate: number; label: string }) {
  const traces = useMemo<Data[]>(() => {
    const result = spectrogram(samples, sampleRate);
    return [
      {
        type: 'heatmap',
        x: result.times,
        y: result.frequencies,
        z: result.db,
        colorscale: 'Viridis',
        zmin: -100,
        zmax: 0,
        colorbar: { thickness: 8, outlinewidth: 0, tickfont: { size: 9 }, title: { text: 'dB', side: 'right' } },
        hovertemplate: '%{x:.3f} s · %{y:.0f} Hz: %{z:.1f} dB<extra></extra>',
      } as Data,
    ];
  }, [samples, sampleRate]);
  const layout = useMemo<Partial<Layout>>(
    () =>
      plotLayout({
        title: { text: `${label} spectrogram`, font: { size: 10 }, x: 0.01, xanchor: 'left' },
        margin: { l: 48, r: 8, t: 20, b: 24 },
        yaxis: { ticksuffix: ' Hz' },
        xaxis: { ticksuffix: ' s' },
      }),
    [label],
  );
  if (samples.length === 0) return <div className="muted panel-note">No {label} samples.</div>;
  return <Plot data={traces} layout={layout} testId="spectrogram" className="spectrogram-plot" />;
}

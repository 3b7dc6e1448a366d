// The objective numbers beside the listening: error-to-signal ratio, SNR, multi-resolution STFT
// distance, the null-test residual level and the offset that best aligns the two signals.
import { fromWire, type AudioMetrics } from '../../../../protocol/inspector-api.ts';
import { formatDb, formatNumber } from '../../format/numbers.ts';

export function AudioMetricsView({ metrics, sampleRate }: { metrics: AudioMetrics | null; sampleRate: number }) {
  if (metrics === null) return <div className="muted panel-note">Metrics appear once both sides hold samples.</div>;
  return (
    <dl className="audio-metrics" data-testid="audio-metrics">
      <dt>ESR</dt>
      <dd>{formatNumber(fromWire(metrics.esr))}</dd>
      <dt>SNR</dt>
      <dd>{formatDb(metrics.snrDb)}</dd>
      <dt>MR-STFT</dt>
      <dd>{formatNumber(fromWire(metrics.mrStft))}</dd>
      <dt>null residual</dt>
      <dd>{formatDb(metrics.nullResidualDbfs)}FS</dd>
      <dt>offset</dt>
      <dd>
        {metrics.nullOffset} samples ({((metrics.nullOffset / sampleRate) * 1000).toFixed(2)} ms)
      </dd>
    </dl>
  );
}

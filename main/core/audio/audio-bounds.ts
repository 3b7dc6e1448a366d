// Audio bounds of a contract (manifest `contract.audio`) against measured audio metrics: what
// the metrics are, which bounds they break, and how a broken bound is told. Pure functions; the
// comparator applies them to one record, the gate to a whole stream.
import { AUDIO_BOUND_NAMES, type AudioBoundName, type AudioBounds } from '../bundle/manifest-schema.ts';
import type { AudioComparison, AudioMetricValues, AudioViolation } from '../compare/comparison-types.ts';
import { errorToSignalRatio, multiResolutionStft, nullTest, snrDb } from './audio-metrics.ts';

export type AudioBoundValues = Omit<AudioBounds, 'derivation'>;

/** The metric each bound limits, how it is named in reasons, and which way it may not go. */
const BOUND_SPECS: Readonly<Record<AudioBoundName, { metric: keyof AudioMetricValues; label: string; unit: string; upper: boolean }>> = {
  max_esr: { metric: 'esr', label: 'ESR', unit: '', upper: true },
  min_snr_db: { metric: 'snrDb', label: 'SNR', unit: ' dB', upper: false },
  max_mr_stft: { metric: 'mrStft', label: 'MR-STFT distance', unit: '', upper: true },
  max_null_residual_dbfs: { metric: 'nullResidualDbfs', label: 'null-test residual', unit: ' dBFS', upper: true },
  max_null_offset: { metric: 'nullOffset', label: 'null-test offset', unit: ' samples', upper: true },
};

/** The four metrics of native `n` against reference `r` (equal lengths, at least one sample). */
export function measureAudio(n: Float32Array, r: Float32Array): AudioMetricValues {
  const nulled = nullTest(n, r);
  return {
    esr: errorToSignalRatio(n, r),
    snrDb: snrDb(n, r),
    mrStft: multiResolutionStft(n, r).distance,
    nullResidualDbfs: nulled.residualDbfs,
    nullOffset: nulled.offset,
  };
}

/** The bound fields alone (the derivation stays in the contract, which the results reference). */
export function boundValues(bounds: AudioBounds | AudioBoundValues): AudioBoundValues {
  return {
    max_esr: bounds.max_esr,
    min_snr_db: bounds.min_snr_db,
    max_mr_stft: bounds.max_mr_stft,
    max_null_residual_dbfs: bounds.max_null_residual_dbfs,
    max_null_offset: bounds.max_null_offset,
  };
}

/**
 * Every bound the metrics break. Written as "not inside" so that a NaN metric (NaN samples on
 * the native side) breaks every bound on it: fail closed. The offset is bounded in magnitude.
 */
export function audioViolations(metrics: AudioMetricValues, bounds: AudioBoundValues): AudioViolation[] {
  const violations: AudioViolation[] = [];
  for (const bound of AUDIO_BOUND_NAMES) {
    const limit = bounds[bound];
    if (limit === null) continue;
    const spec = BOUND_SPECS[bound];
    const measured = metrics[spec.metric];
    const value = bound === 'max_null_offset' ? Math.abs(measured) : measured;
    const inside = spec.upper ? value <= limit : value >= limit;
    if (!inside) violations.push({ bound, value: measured, limit });
  }
  return violations;
}

export function judgeAudio(samples: number, metrics: AudioMetricValues, bounds: AudioBoundValues): AudioComparison {
  const violations = audioViolations(metrics, bounds);
  return { samples, metrics, bounds: boundValues(bounds), violations, passed: violations.length === 0 };
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0 || Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  return abs >= 1e-3 && abs < 1e6 ? String(Number(value.toPrecision(4))) : value.toExponential(3);
}

/** "ESR 0.1234 exceeds max_esr 3.1e-07": the metric, its value and the bound, in one phrase. */
export function describeViolation(violation: AudioViolation): string {
  const spec = BOUND_SPECS[violation.bound];
  const verb = spec.upper ? (violation.bound === 'max_null_offset' ? 'exceeds in magnitude' : 'exceeds') : 'is below';
  return `${spec.label} ${formatNumber(violation.value)}${spec.unit} ${verb} ${violation.bound} ${formatNumber(violation.limit)}`;
}

/** One line of metrics with their bounds, for reports: "ESR 1.2e-9 (max 3e-7), SNR 89.1 dB (min 65), ...". */
export function formatAudioMetrics(metrics: AudioMetricValues, bounds: AudioBoundValues | null): string {
  const part = (bound: AudioBoundName): string => {
    const spec = BOUND_SPECS[bound];
    const limit = bounds?.[bound] ?? null;
    const shown = `${spec.label} ${formatNumber(metrics[spec.metric])}${spec.unit}`;
    return limit === null ? shown : `${shown} (${spec.upper ? 'max' : 'min'} ${formatNumber(limit)})`;
  };
  return AUDIO_BOUND_NAMES.map(part).join(', ');
}

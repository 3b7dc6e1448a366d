// The listening-free audio verdict helpers the reports print for a case with PCM output:
// the native stream against the reference stream (both concatenated from a declared audio
// boundary's valid regions, at its declared rate), as ESR, SNR, multi-resolution STFT distance
// and the null-test residual.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { errorToSignalRatio, multiResolutionStft, nullTest, snrDb } from './audio-metrics.ts';
import { readPcmStream } from './pcm-stream.ts';

export interface AudioSummary {
  boundary: string;
  samples: number;
  seconds: number;
  esr: number;
  snrDb: number;
  mrStft: number;
  nullOffset: number;
  nullResidualDbfs: number;
}

/**
 * null when neither side recorded the boundary; the native stream takes the reference's valid
 * regions (and its audio declaration); both are cut to the shorter.
 */
export async function summarizeAudio(native: TraceBundle, reference: TraceBundle, boundary = 'detok.pcm'): Promise<AudioSummary | null> {
  const [nativeStream, referenceStream] = await Promise.all([readPcmStream(native, boundary, reference), readPcmStream(reference, boundary)]);
  const length = Math.min(nativeStream.samples.length, referenceStream.samples.length);
  if (length === 0) return null;
  const n = nativeStream.samples.subarray(0, length);
  const r = referenceStream.samples.subarray(0, length);
  const nulled = nullTest(n, r);
  return {
    boundary,
    samples: length,
    seconds: length / referenceStream.sampleRate,
    esr: errorToSignalRatio(n, r),
    snrDb: snrDb(n, r),
    mrStft: multiResolutionStft(n, r).distance,
    nullOffset: nulled.offset,
    nullResidualDbfs: nulled.residualDbfs,
  };
}

export function formatAudioSummary(caseId: string, summary: AudioSummary): string {
  const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : String(value));
  return (
    `audio    ${caseId} ${summary.boundary}: ${summary.samples} samples (${summary.seconds.toFixed(3)} s) ` +
    `ESR ${summary.esr.toExponential(2)}, SNR ${fixed(summary.snrDb, 1)} dB, MR-STFT ${summary.mrStft.toExponential(2)}, ` +
    `null residual ${fixed(summary.nullResidualDbfs, 1)} dBFS at offset ${summary.nullOffset}\n`
  );
}

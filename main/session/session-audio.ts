// Audio of a PCM boundary for the app: the reference's whole stream and the native stream
// captured so far (each the valid part of every pass's record, in pass order, via
// pcm-stream.ts), the objective metrics over their common length (summarizeAudio, as the gate
// prints them), and WAV files of either side or of the null-test residual.
//
// The residual is native − reference at the null test's best offset d over the common length:
// residual[k] = n[lo + k + d] − r[lo + k] for lo = max(0, −d) ≤ lo + k < min(|r|, |n| − d), i.e.
// exactly the samples whose RMS is AudioMetrics.nullResidualDbfs at AudioMetrics.nullOffset.
import { toWire, type Audio, type AudioMetrics } from '../../protocol/inspector-api.ts';
import { nullTest } from '../core/audio/audio-metrics.ts';
import { summarizeAudio } from '../core/audio/audio-summary.ts';
import { readPcmStream, type PcmStream } from '../core/audio/pcm-stream.ts';
import { pcmShapeProblem } from '../core/audio/pcm-boundary.ts';
import { encodeWav } from '../core/audio/wav.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { safePathComponent } from '../core/bundle/path-confinement.ts';

export type WavSide = 'reference' | 'native' | 'residual';

/** Refuses a boundary that is not PCM before anything is read (pcm-boundary.ts says what PCM is). */
function assertPcmBoundary(reference: TraceBundle, boundary: string): void {
  const problem = pcmShapeProblem(reference, boundary);
  if (problem !== null) throw new Error(problem);
}

interface Streams {
  reference: PcmStream;
  /** Empty when there is no native run or it has not reached the boundary yet. */
  native: Float32Array;
  sampleRate: number;
}

async function readStreams(native: TraceBundle | null, reference: TraceBundle, boundary: string): Promise<Streams> {
  assertPcmBoundary(reference, boundary);
  const referenceStream = await readPcmStream(reference, boundary);
  // A native bundle records whole frames: the reference says which samples of each are audio.
  const nativeSamples = native === null ? new Float32Array(0) : (await readPcmStream(native, boundary, reference)).samples;
  // The rate the reference declares for this boundary (audio-declarations.ts).
  return { reference: referenceStream, native: nativeSamples, sampleRate: referenceStream.sampleRate };
}

/** float32 little-endian, base64 (written through a DataView so the host's byte order never matters). */
function pcmBase64(samples: Float32Array): string {
  const bytes = Buffer.alloc(samples.length * 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < samples.length; i++) view.setFloat32(i * 4, samples[i] as number, true);
  return bytes.toString('base64');
}

export async function audioOf(native: TraceBundle | null, reference: TraceBundle, boundary: string): Promise<Audio> {
  const streams = await readStreams(native, reference, boundary);
  // summarizeAudio re-reads the (small) streams itself; it is the one definition of these metrics
  // (common length, the reference's valid regions) that the gate's report prints too.
  const summary = native === null || streams.native.length === 0 ? null : await summarizeAudio(native, reference, boundary);
  const metrics: AudioMetrics | null =
    summary === null
      ? null
      : {
          esr: toWire(summary.esr),
          snrDb: toWire(summary.snrDb),
          mrStft: toWire(summary.mrStft),
          nullResidualDbfs: toWire(summary.nullResidualDbfs),
          nullOffset: summary.nullOffset,
        };
  return {
    boundary,
    sampleRate: streams.sampleRate,
    passes: streams.reference.passes,
    reference: pcmBase64(streams.reference.samples),
    native: pcmBase64(streams.native),
    metrics,
  };
}

/** native − reference at the null test's best offset, over the common length (see the header). */
export function nullResidual(native: Float32Array, reference: Float32Array): { offset: number; samples: Float32Array } {
  const length = Math.min(native.length, reference.length);
  const n = native.subarray(0, length);
  const r = reference.subarray(0, length);
  const { offset } = nullTest(n, r);
  const lo = Math.max(0, -offset);
  const hi = Math.min(r.length, n.length - offset);
  const samples = new Float32Array(Math.max(0, hi - lo));
  for (let i = lo; i < hi; i++) samples[i - lo] = (n[i + offset] as number) - (r[i] as number);
  return { offset, samples };
}

function fileNameOf(reference: TraceBundle, boundary: string, side: WavSide): string {
  return `${safePathComponent(reference.manifest.case.id)}-${safePathComponent(boundary, 'boundary')}-${side}.wav`;
}

export async function wavOf(native: TraceBundle | null, reference: TraceBundle, boundary: string, side: WavSide): Promise<{ fileName: string; bytes: string }> {
  const streams = await readStreams(native, reference, boundary);
  if (side !== 'reference' && streams.native.length === 0) {
    throw new Error(`no ${side} audio for "${boundary}": the native run has no samples of it yet`);
  }
  const samples =
    side === 'reference' ? streams.reference.samples : side === 'native' ? streams.native : nullResidual(streams.native, streams.reference.samples).samples;
  const bytes = encodeWav(samples, streams.sampleRate);
  return { fileName: fileNameOf(reference, boundary, side), bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
}

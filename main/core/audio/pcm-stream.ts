// The PCM stream of a bundle: every audio pass's `detok.pcm` (F32 [1920], 24 kHz) holds one
// frame of which only the manifest's `valid` region (axis 0, `length` samples) is real audio;
// concatenating the valid prefix of each pass, in pass order, gives the stream.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { BundleError, formatFieldPath } from '../bundle/errors.ts';

export const PCM_SAMPLE_RATE = 24000;
export const DEFAULT_PCM_BOUNDARY = 'detok.pcm';

export interface PcmStream {
  readonly sampleRate: typeof PCM_SAMPLE_RATE;
  readonly samples: Float32Array;
  /** Indices of the passes that contributed, in order. */
  readonly passes: number[];
}

/**
 * `regionsFrom`: where the valid regions come from when `bundle` declares none — a native
 * bundle records what the engine emitted, and its reference declares which samples are audio.
 */
export async function readPcmStream(bundle: TraceBundle, boundary: string = DEFAULT_PCM_BOUNDARY, regionsFrom: TraceBundle | null = null): Promise<PcmStream> {
  const parts: Float32Array[] = [];
  const passes: number[] = [];
  const ordered = bundle.passes.map((pass, position) => ({ pass, position })).sort((a, b) => a.pass.index - b.pass.index);
  for (const { pass, position } of ordered) {
    const b = pass.boundaries.findIndex((entry) => entry.name === boundary);
    const entry = pass.boundaries[b];
    if (entry === undefined) continue;
    const at = (name: string): string => formatFieldPath(['passes', position, 'boundaries', b, name]);
    if (entry.dtype !== 'F32') throw new BundleError('E_DTYPE_MISMATCH', bundle.manifestPath, at('dtype'), `"${boundary}" must be F32 PCM, got ${entry.dtype}`);
    if (entry.shape.length !== 1) {
      throw new BundleError('E_SHAPE', bundle.manifestPath, at('shape'), `"${boundary}" must be one-dimensional PCM, got [${entry.shape.join(', ')}]`);
    }
    const extent = entry.shape[0] as number;
    const valid = entry.valid ?? regionsFrom?.boundary(pass.index, boundary)?.valid ?? null;
    if (valid !== null && valid.axis !== 0) {
      throw new BundleError('E_SHAPE', bundle.manifestPath, at('valid'), `"${boundary}" valid region must be on axis 0, got axis ${valid.axis}`);
    }
    const length = valid === null ? extent : Math.min(valid.length, extent);
    parts.push(await readPcmFrame(bundle, position, boundary, length));
    passes.push(pass.index);
  }
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const samples = new Float32Array(total);
  let offset = 0;
  for (const part of parts) {
    samples.set(part, offset);
    offset += part.length;
  }
  return { sampleRate: PCM_SAMPLE_RATE, samples, passes };
}

/**
 * The first `length` samples of one record (`passIndex` is the pass's position in the manifest),
 * digest-checked by the reader. The caller has checked that the record is F32 and long enough.
 */
export async function readPcmFrame(bundle: TraceBundle, passIndex: number, boundary: string, length: number): Promise<Float32Array> {
  const tensor = await bundle.readBoundary(passIndex, boundary);
  // Copy into an aligned buffer: the tensor bytes may start at any offset. Little-endian f32.
  const view = new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  const frame = new Float32Array(length);
  for (let i = 0; i < length; i++) frame[i] = view.getFloat32(i * 4, true);
  return frame;
}

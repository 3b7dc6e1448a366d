// The PCM stream of a bundle's declared audio boundary (audio-declarations.ts): every pass's
// record holds one frame of which only the manifest's `valid` region (axis 0, `length` samples)
// is real audio; concatenating the valid prefix of each pass, in pass order, gives the stream,
// at the sample rate the manifest declares (the reference model's detok.pcm: F32 [1920], 24 kHz).
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { BundleError, formatFieldPath } from '../bundle/errors.ts';
import { bf16ToF32, f16ToF32 } from '../bundle/tensor-view.ts';
import { audioDeclarations, declaredAudioList, REFERENCE_MODEL_PCM_BOUNDARY, REFERENCE_MODEL_SAMPLE_RATE } from './audio-declarations.ts';

/** The reference model's rate (audio-declarations.ts), kept under its older name. */
export const PCM_SAMPLE_RATE = REFERENCE_MODEL_SAMPLE_RATE;
export const DEFAULT_PCM_BOUNDARY = REFERENCE_MODEL_PCM_BOUNDARY;

export interface PcmStream {
  /** Hz, as the manifest declares it. */
  readonly sampleRate: number;
  readonly samples: Float32Array;
  /** Indices of the passes that contributed, in order. */
  readonly passes: number[];
}

const PCM_DTYPES: readonly string[] = ['F32', 'F64', 'F16', 'BF16'];

/**
 * `regionsFrom`: where the audio declaration and the valid regions come from when `bundle`
 * has none of its own — a native bundle records what the engine emitted, and its reference
 * declares which boundaries are audio, at which rate, and which samples of each record are audio.
 * A boundary that neither declares audio is refused, naming the ones that are.
 */
export async function readPcmStream(bundle: TraceBundle, boundary: string = DEFAULT_PCM_BOUNDARY, regionsFrom: TraceBundle | null = null): Promise<PcmStream> {
  const declaring = regionsFrom ?? bundle;
  const sampleRate = audioDeclarations(declaring.manifest).get(boundary);
  if (sampleRate === undefined) {
    throw new BundleError(
      'E_BOUNDARY_MISSING',
      declaring.manifestPath,
      'audio',
      `"${boundary}" is not declared audio (declared audio boundaries: ${declaredAudioList(declaring.manifest)}); see docs/bundle-format.md, "audio"`,
    );
  }
  const parts: Float32Array[] = [];
  const passes: number[] = [];
  const ordered = bundle.passes.map((pass, position) => ({ pass, position })).sort((a, b) => a.pass.index - b.pass.index);
  for (const { pass, position } of ordered) {
    const b = pass.boundaries.findIndex((entry) => entry.name === boundary);
    const entry = pass.boundaries[b];
    if (entry === undefined) continue;
    const at = (name: string): string => formatFieldPath(['passes', position, 'boundaries', b, name]);
    if (!PCM_DTYPES.includes(entry.dtype)) {
      throw new BundleError(
        'E_DTYPE_MISMATCH',
        bundle.manifestPath,
        at('dtype'),
        `"${boundary}" must be float PCM (F32, F64, F16 or BF16), got ${entry.dtype}`,
      );
    }
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
  return { sampleRate, samples, passes };
}

/**
 * The first `length` samples of one record (`passIndex` is the pass's position in the manifest)
 * as float32, digest-checked by the reader. The caller has checked that the record is float PCM
 * and long enough. Little-endian; F64 rounds to nearest float32, F16 and BF16 widen exactly.
 */
export async function readPcmFrame(bundle: TraceBundle, passIndex: number, boundary: string, length: number): Promise<Float32Array> {
  const tensor = await bundle.readBoundary(passIndex, boundary);
  // Copy into an aligned buffer: the tensor bytes may start at any offset.
  const view = new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  switch (tensor.dtype) {
    case 'F64':
      return Float32Array.from({ length }, (_, i) => view.getFloat64(i * 8, true));
    case 'F16':
      return f16ToF32(tensor.data.slice(0, length * 2));
    case 'BF16':
      return bf16ToF32(tensor.data.slice(0, length * 2));
    default: {
      const frame = new Float32Array(length);
      for (let i = 0; i < length; i++) frame[i] = view.getFloat32(i * 4, true);
      return frame;
    }
  }
}

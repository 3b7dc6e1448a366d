// The audio side of a comparison: when a PCM boundary's contract bounds the audio metrics, the
// record's valid samples (the reference's valid region, on both sides) are measured and judged
// against those bounds. A record is one frame (1920 samples for detok.pcm), so it is read whole.
import { boundValues, judgeAudio, measureAudio } from '../audio/audio-bounds.ts';
import { readPcmFrame } from '../audio/pcm-stream.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import type { AudioBounds, BoundaryEntry } from '../bundle/manifest-schema.ts';
import type { AudioComparison } from './comparison-types.ts';

/**
 * How many samples of a record the audio metrics judge: the reference's valid prefix, on both
 * sides. Null when the native record is missing or not PCM of the reference record's shape.
 */
export function pcmRecordLength(nativeEntry: BoundaryEntry | undefined, referenceEntry: BoundaryEntry): number | null {
  if (nativeEntry === undefined || nativeEntry.dtype !== 'F32' || referenceEntry.dtype !== 'F32') return null;
  if (nativeEntry.shape.length !== 1 || referenceEntry.shape.length !== 1) return null;
  const extent = referenceEntry.shape[0] as number;
  if (nativeEntry.shape[0] !== extent) return null;
  return Math.min(referenceEntry.valid?.length ?? extent, extent);
}

/**
 * Null when the record is not PCM the metrics can read (a structural problem the element
 * comparison reports on its own). The manifest reader has already refused audio bounds on a
 * boundary that is not one-dimensional F32.
 */
export async function compareAudio(
  sides: { readonly native: TraceBundle; readonly reference: TraceBundle },
  pass: number,
  name: string,
  referenceEntry: BoundaryEntry,
  bounds: AudioBounds,
): Promise<AudioComparison | null> {
  const length = pcmRecordLength(sides.native.boundary(pass, name), referenceEntry);
  if (length === null) return null;
  const [native, reference] = await Promise.all([readPcmFrame(sides.native, pass, name, length), readPcmFrame(sides.reference, pass, name, length)]);
  return judgeAudio(length, measureAudio(native, reference), boundValues(bounds));
}

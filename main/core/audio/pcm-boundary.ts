// Which boundaries of a reference bundle are PCM the app can play. One definition, used by the
// audio service (to refuse a boundary before reading it) and by the boundary rows (their `pcm`
// flag, which the audio panel lists), so the panel never offers what the service refuses.
//
// A PCM stream is a boundary the reference declares audio (audio-declarations.ts: its manifest's
// `audio` map, or the reference model's detok.pcm in bundles written before the map existed)
// whose every record has the shape readPcmStream concatenates: one-dimensional float. Nothing
// is guessed from names or contracts: an engine without audio gets no Audio panel entries.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { audioDeclarations, declaredAudioList } from './audio-declarations.ts';

const PCM_DTYPES: readonly string[] = ['F32', 'F64', 'F16', 'BF16'];

/** Why `boundary` cannot be read as PCM from `reference`, or null when it can. */
export function pcmShapeProblem(reference: TraceBundle, boundary: string): string | null {
  if (!audioDeclarations(reference.manifest).has(boundary)) {
    return `"${boundary}" is not a PCM boundary: ${reference.manifestPath} does not declare it audio (declared audio boundaries: ${declaredAudioList(reference.manifest)})`;
  }
  let recorded = false;
  for (const pass of reference.passes) {
    const entry = pass.boundaries.find((candidate) => candidate.name === boundary);
    if (entry === undefined) continue;
    recorded = true;
    if (!PCM_DTYPES.includes(entry.dtype) || entry.shape.length !== 1) {
      return (
        `"${boundary}" is not a PCM boundary: pass ${pass.index} of ${reference.manifestPath} records it as ${entry.dtype} [${entry.shape.join(', ')}]; ` +
        'audio needs a one-dimensional float record per pass'
      );
    }
  }
  return recorded ? null : `"${boundary}" is not a PCM boundary: no pass of ${reference.manifestPath} records it`;
}

const streamsByBundle = new WeakMap<TraceBundle, ReadonlySet<string>>();

/** The boundaries of `reference` that are PCM streams (see the header); computed once per bundle. */
export function pcmStreams(reference: TraceBundle): ReadonlySet<string> {
  const known = streamsByBundle.get(reference);
  if (known !== undefined) return known;
  const streams = new Set([...audioDeclarations(reference.manifest).keys()].filter((name) => pcmShapeProblem(reference, name) === null));
  streamsByBundle.set(reference, streams);
  return streams;
}

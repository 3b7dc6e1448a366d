// Which boundaries of a reference bundle are PCM the app can play. One definition, used by the
// audio service (to refuse a boundary before reading it) and by the boundary rows (their `pcm`
// flag, which the audio panel lists), so the panel never offers what the service refuses.
//
// Playable needs the record shape readPcmStream concatenates: a one-dimensional F32 record in
// every pass that records the boundary. Listed as a stream (`pcm`) additionally needs evidence
// that the samples are audio frames, not some other 1-D float vector of an audio stage (the
// reference engine's detok.embed / detok.ola / detok.envelope are 1-D F32 per audio pass too):
// the reference gives it audio bounds in its contract (the bundle format's own "this is PCM"),
// or declares a `valid` region on axis 0 for it (the audio prefix of each frame, what
// readPcmStream keeps), or the boundary is named `*.pcm`. The engine's emit kind cannot decide
// it (audio_frame marks every detokenizer boundary), and the reference is what the audio
// service reads, also for opened runs without an engine.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { audioBoundsOf } from '../bundle/manifest-schema.ts';

/** Why `boundary` cannot be read as PCM from `reference`, or null when it can. */
export function pcmShapeProblem(reference: TraceBundle, boundary: string): string | null {
  let recorded = false;
  for (const pass of reference.passes) {
    const entry = pass.boundaries.find((candidate) => candidate.name === boundary);
    if (entry === undefined) continue;
    recorded = true;
    if (entry.dtype !== 'F32' || entry.shape.length !== 1) {
      return (
        `"${boundary}" is not a PCM boundary: pass ${pass.index} of ${reference.manifestPath} records it as ${entry.dtype} [${entry.shape.join(', ')}]; ` +
        'audio needs a one-dimensional F32 record per pass'
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
  const marked = new Set<string>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) {
      if (audioBoundsOf(entry.contract) !== null || entry.name.endsWith('.pcm') || (entry.valid !== null && entry.valid.axis === 0)) marked.add(entry.name);
    }
  }
  const streams = new Set([...marked].filter((name) => pcmShapeProblem(reference, name) === null));
  streamsByBundle.set(reference, streams);
  return streams;
}

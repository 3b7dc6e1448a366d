// Which boundaries of a bundle are audio, and at which sample rate: the one place that says it.
// A manifest declares them in its `audio` map (docs/bundle-format.md): any one-dimensional float
// boundary, by name, with its sample rate. Bundles written before the map existed (the embedded
// reference model's, and every bundle captured from them) declare nothing: for those, the
// reference model's PCM output `detok.pcm` is audio at 24 kHz (docs/reference-model-audio.md),
// derived here and nowhere else. A manifest with an `audio` map, even an empty one, gets exactly
// what it declares.
import type { BundleManifest } from '../bundle/manifest-schema.ts';

/** The reference model's PCM boundary and its rate, for manifests without an `audio` map. */
export const REFERENCE_MODEL_PCM_BOUNDARY = 'detok.pcm';
export const REFERENCE_MODEL_SAMPLE_RATE = 24000;

const declared = new WeakMap<BundleManifest, ReadonlyMap<string, number>>();

/** Boundary name -> sample rate (Hz) of every audio boundary `manifest` declares. */
export function audioDeclarations(manifest: BundleManifest): ReadonlyMap<string, number> {
  const known = declared.get(manifest);
  if (known !== undefined) return known;
  const map = new Map<string, number>();
  if (manifest.audio !== undefined) {
    for (const [name, declaration] of Object.entries(manifest.audio)) map.set(name, declaration.sample_rate);
  } else if (manifest.passes.some((pass) => pass.boundaries.some((entry) => entry.name === REFERENCE_MODEL_PCM_BOUNDARY))) {
    map.set(REFERENCE_MODEL_PCM_BOUNDARY, REFERENCE_MODEL_SAMPLE_RATE);
  }
  declared.set(manifest, map);
  return map;
}

/** "a, b" or "none", for messages that list what a bundle declares. */
export function declaredAudioList(manifest: BundleManifest): string {
  const names = [...audioDeclarations(manifest).keys()];
  return names.length === 0 ? 'none' : names.map((name) => `"${name}"`).join(', ');
}

// Manifests already parsed in this process, by the sha256 of their bytes. Parsing and validating
// a real model's manifest (16 MB of JSON, 16,720 boundaries at 4 GiB) takes over a second and
// allocates several times its size; the closing check before signing reads every manifest
// again, and identical bytes validate to an identical manifest, so the bytes are hashed and
// compared as before but the parse is reused. Held weakly: a manifest nobody keeps any more is
// parsed again, so this holds no memory of its own beyond its keys.
import type { BundleManifest } from './manifest-schema.ts';

const LIMIT = 256;
const bySha256 = new Map<string, WeakRef<BundleManifest>>();

/** The manifest parsed from bytes with this sha256, if one is still alive in this process. */
export function parsedManifest(sha256: string): BundleManifest | undefined {
  const manifest = bySha256.get(sha256)?.deref();
  if (manifest === undefined) bySha256.delete(sha256);
  return manifest;
}

export function rememberParsedManifest(sha256: string, manifest: BundleManifest): void {
  bySha256.delete(sha256);
  bySha256.set(sha256, new WeakRef(manifest));
  if (bySha256.size > LIMIT) bySha256.delete(bySha256.keys().next().value as string);
}

// Manifests already parsed in this process, by the sha256 of their bytes. Parsing and validating
// a real model's manifest (16 MB of JSON, 16,720 boundaries at 4 GiB) takes over a second and
// allocates several times its size; the closing check before signing reads every manifest
// again, and identical bytes validate to an identical manifest, so the bytes are hashed and
// compared as before but the parse is reused. Held weakly: a manifest nobody keeps any more is
// parsed again, so this holds no memory of its own beyond its keys.
import { createHash } from 'node:crypto';
import { GuardedReadError, openRegularFile } from '../io/guarded-read.ts';
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

const HASH_READ_BYTES = 1024 * 1024;

/**
 * The manifest in the file at `path`, when its bytes hash to one still parsed in this process:
 * hashed as they stream, a MiB at a time, so recognising a long run's manifest (tens of MB) costs
 * no copy of it in memory. Null when none is known, or the file cannot be read (the caller reads
 * it whole, parses it, and says why it cannot).
 */
export async function knownManifestAt(path: string, maxBytes: number): Promise<{ manifest: BundleManifest; sha256: string } | null> {
  if (bySha256.size === 0) return null;
  let file;
  try {
    file = await openRegularFile(path, maxBytes);
  } catch (error) {
    if (error instanceof GuardedReadError) return null;
    throw error;
  }
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(Math.min(HASH_READ_BYTES, Math.max(1, file.size)));
    for (let offset = 0; offset < file.size;) {
      const { bytesRead } = await file.handle.read(buffer, 0, Math.min(buffer.length, file.size - offset), offset);
      if (bytesRead === 0) return null; // shorter than at open: read it whole and let that say so
      hash.update(buffer.subarray(0, bytesRead));
      offset += bytesRead;
    }
    const sha256 = hash.digest('hex');
    const manifest = parsedManifest(sha256);
    return manifest === undefined ? null : { manifest, sha256 };
  } finally {
    await file.handle.close();
  }
}

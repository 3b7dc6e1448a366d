// The closing check before a receipt is signed: is the evidence still what was judged? Each
// bundle's manifest is re-read and re-hashed (small) and compared with the sha256 the receipt
// pins, or the one it had when this process opened it; each file it lists is stat'ed, and only a
// file whose pin (file-pins.ts) is missing, untrusted or moved is hashed again (on the worker
// pool, with its tensors, so the message names the tensor that changed). A file the run verified
// and nobody touched costs one stat instead of a full read and hash.
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { readManifestWithDigest } from './bundle-reader.ts';
import { sha256File } from './digest.ts';
import { BundleError, formatFieldPath } from './errors.ts';
import { manifestDigestAtOpen, stillAsPinned } from './file-pins.ts';
import { MANIFEST_FILE_NAME, type BundleManifest } from './manifest-schema.ts';
import { resolveInsideBundle } from './path-confinement.ts';
import { bundleFileProblems } from './verify-bundle-files.ts';

/**
 * Why bundle `dir` is no longer what was verified (the first problem: its manifest, then its
 * files in manifest order), or null. `manifestSha256`: the digest the receipt pins, or null to
 * compare with the digest the manifest had when this process opened the bundle. `filesOf`: the
 * files to check, when not every listed file was judged (a gate shard of some passes).
 */
export async function bundleChangedSinceOpen(
  dir: string,
  manifestSha256: string | null,
  filesOf?: (manifest: BundleManifest) => (path: string) => boolean,
): Promise<string | null> {
  const manifestPath = join(dir, MANIFEST_FILE_NAME);
  let read;
  try {
    read = await readManifestWithDigest(dir, manifestPath);
  } catch (error) {
    if (error instanceof BundleError) return error.message;
    throw error;
  }
  const expected = manifestSha256 ?? manifestDigestAtOpen(read.real) ?? null;
  if (expected !== null && read.sha256 !== expected)
    return `${manifestPath}: lists other contents than when it was judged (sha256 ${read.sha256}, was ${expected})`;
  const { manifest } = read;
  const toHash = new Map<string, string>();
  const checked = filesOf?.(manifest) ?? null;
  for (const [f, entry] of manifest.files.entries()) {
    if (checked !== null && !checked(entry.path)) continue;
    let real: string;
    try {
      real = await resolveInsideBundle(dir, entry.path, { file: manifestPath, field: `${formatFieldPath(['files', f])}.path` });
    } catch (error) {
      if (error instanceof BundleError) return error.message;
      throw error;
    }
    if (!(await stillAsPinned(real, entry.sha256))) toHash.set(entry.path, real);
  }
  if (toHash.size === 0) return null;
  const [problem] = await bundleFileProblems(manifest, toHash, (relPath) => join(dir, relPath));
  return problem === undefined ? null : problem.message;
}

/**
 * True when `path` still holds bytes with this sha256: by its pin when the run hashed it
 * (sha256File pins what it hashes) and it has not moved since, else by hashing it again.
 */
export async function fileStillHashesTo(path: string, sha256: string): Promise<boolean> {
  try {
    if (await stillAsPinned(await realpath(path), sha256)) return true;
    return (await sha256File(path)).sha256 === sha256;
  } catch {
    return false;
  }
}

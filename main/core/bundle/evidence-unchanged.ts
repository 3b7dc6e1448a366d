// The closing check before a receipt is signed: is the evidence still what was judged? Each
// bundle's manifest is re-read and re-hashed (small) and compared with the sha256 the receipt
// pins, or the one it had when this process opened it; each file it lists is stat'ed, and only a
// file whose pin (file-pins.ts) is missing, untrusted or moved is hashed again (on the worker
// pool, with its tensors, so the message names the tensor that changed). A file the run verified
// and nobody touched costs one stat instead of a full read and hash.
//
// The manifest itself is hashed as it streams and, when its bytes are the ones opened, its list of
// files is the one recorded when this process parsed those bytes (parsed-manifests.ts): no parse,
// so the check holds no copy of a long run's manifest (tens of MB of JSON, several times that once
// parsed) at the end of a run. Any other case (a manifest changed, unreadable, never parsed here,
// or a shard's check that needs the passes) reads and parses it as before, to say what changed.
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_MANIFEST_BYTES, readManifestWithDigest } from './bundle-reader.ts';
import { sha256File } from './digest.ts';
import { BundleError, formatFieldPath } from './errors.ts';
import { manifestDigestAtOpen, stillAsPinned } from './file-pins.ts';
import { MANIFEST_FILE_NAME, type BundleManifest } from './manifest-schema.ts';
import { listedFilesOf, streamedSha256, type ListedFile } from './parsed-manifests.ts';
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
  const listed = filesOf === undefined ? await listingIfUnchanged(dir, manifestPath, manifestSha256) : null;
  let manifest: BundleManifest | null = null;
  if (listed === null) {
    const read = await manifestAsJudged(dir, manifestPath, manifestSha256);
    if (typeof read === 'string') return read;
    manifest = read;
  }
  const files = listed ?? (manifest as BundleManifest).files;
  const toHash = new Map<string, string>();
  const checked = manifest === null ? null : (filesOf?.(manifest) ?? null);
  for (const [f, entry] of files.entries()) {
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
  // A file to hash again: its tensors are checked too, which takes the manifest (parsed now, once).
  if (manifest === null) {
    const read = await manifestAsJudged(dir, manifestPath, manifestSha256);
    if (typeof read === 'string') return read;
    manifest = read;
  }
  const [problem] = await bundleFileProblems(manifest, toHash, (relPath) => join(dir, relPath));
  return problem === undefined ? null : problem.message;
}

/** `dir`'s manifest, read and parsed, when it is the one judged; else why not. */
async function manifestAsJudged(dir: string, manifestPath: string, manifestSha256: string | null): Promise<BundleManifest | string> {
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
  return read.manifest;
}

/**
 * The files `dir`'s manifest lists, when its bytes still hash to the digest it is checked against
 * (`manifestSha256`, else the one it had when this process opened it) and this process parsed
 * those bytes; null otherwise (the caller reads the manifest and says what is wrong).
 */
async function listingIfUnchanged(dir: string, manifestPath: string, manifestSha256: string | null): Promise<readonly ListedFile[] | null> {
  let real: string;
  try {
    real = await resolveInsideBundle(dir, MANIFEST_FILE_NAME, { file: manifestPath, field: '(file)' });
  } catch (error) {
    if (error instanceof BundleError) return null;
    throw error;
  }
  const expected = manifestSha256 ?? manifestDigestAtOpen(real);
  const listed = expected === undefined ? undefined : listedFilesOf(expected);
  if (listed === undefined) return null;
  return (await streamedSha256(real, MAX_MANIFEST_BYTES)) === expected ? listed : null;
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

// Manifests already parsed in this process, by the sha256 of their bytes. Parsing and validating
// a real model's manifest (16 MB of JSON, 16,720 boundaries at 4 GiB) takes over a second and
// allocates several times its size; the closing check before signing reads every manifest
// again, and identical bytes validate to an identical manifest, so the bytes are hashed and
// compared as before but the parse is reused. Held weakly: a manifest nobody keeps any more is
// parsed again, so this holds no memory of its own beyond its keys.
//
// What it does hold strongly is each parsed manifest's list of files (path and sha256, a few
// hundred entries): the closing check before a receipt is signed needs only that list, of a
// manifest whose bytes still hash the same, so it never parses a manifest again once the run's
// own parse is gone (a 10 GiB run's reference manifest is 40 MB of JSON; its parse took 110 MB of
// heap for the moment and the gate process's peak with it: docs/performance.md).
import { createHash } from 'node:crypto';
import { GuardedReadError, openRegularFile } from '../io/guarded-read.ts';
import type { BundleManifest } from './manifest-schema.ts';

const LIMIT = 256;
const bySha256 = new Map<string, WeakRef<BundleManifest>>();

/** A file a manifest lists, as the closing check reads it. */
export interface ListedFile {
  readonly path: string;
  readonly sha256: string;
}
const listedBySha256 = new Map<string, readonly ListedFile[]>();

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
  listedBySha256.delete(sha256);
  listedBySha256.set(
    sha256,
    manifest.files.map((file) => ({ path: file.path, sha256: file.sha256 })),
  );
  if (listedBySha256.size > LIMIT) listedBySha256.delete(listedBySha256.keys().next().value as string);
}

/** The files (in manifest order) of the manifest parsed in this process from bytes with this sha256, if any was. */
export function listedFilesOf(sha256: string): readonly ListedFile[] | undefined {
  return listedBySha256.get(sha256);
}

const HASH_READ_BYTES = 1024 * 1024;

/**
 * The sha256 of the file at `path`, hashed as it streams, a MiB at a time (a long run's manifest,
 * tens of MB, is never held in memory); null when it cannot be read or is not what it was at open
 * (the caller reads it whole and says why).
 */
export async function streamedSha256(path: string, maxBytes: number): Promise<string | null> {
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
    return hash.digest('hex');
  } finally {
    await file.handle.close();
  }
}

/**
 * The manifest in the file at `path`, when its bytes hash to one still parsed in this process
 * (streamedSha256: recognising a long run's manifest costs no copy of it in memory). Null when
 * none is known, or the file cannot be read (the caller reads it whole, parses it, and says why
 * it cannot).
 */
export async function knownManifestAt(path: string, maxBytes: number): Promise<{ manifest: BundleManifest; sha256: string } | null> {
  if (bySha256.size === 0) return null;
  const sha256 = await streamedSha256(path, maxBytes);
  if (sha256 === null) return null;
  const manifest = parsedManifest(sha256);
  return manifest === undefined ? null : { manifest, sha256 };
}

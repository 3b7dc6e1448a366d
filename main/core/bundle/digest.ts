// sha256 of files (streamed in chunks, never the whole file in memory) and of byte arrays.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { realpath, statfs } from 'node:fs/promises';
import { GuardedReadError, openRegularFile } from '../io/guarded-read.ts';
import { identityKey, recordPin } from './file-pins.ts';

export const DIGEST_CHUNK_BYTES = 8 * 1024 * 1024;

export interface FileDigest {
  readonly sha256: string;
  readonly bytes: number;
}

export function sha256Bytes(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Streaming hasher for callers that see the bytes piece by piece. */
export function createSha256(): Hash {
  return createHash('sha256');
}

/**
 * sha256 of a regular file (guarded-read.ts: a FIFO, device or folder is refused before it is
 * read, so hashing always ends), read up to the size it had when opened. `onChunk`, when given,
 * sees every chunk with its file offset as it is hashed (valid only during the call): callers
 * hash parts of the file in the same read. A file nobody wrote to while it was hashed is pinned
 * (file-pins.ts), so a later check that it is unchanged can stat it instead of hashing again.
 */
export async function sha256File(path: string, chunkBytes = DIGEST_CHUNK_BYTES, onChunk?: (chunk: Uint8Array, offset: number) => void): Promise<FileDigest> {
  const hash = createHash('sha256');
  const { handle, size } = await openRegularFile(path);
  try {
    const statAtMs = Date.now();
    const before = await handle.stat({ bigint: true });
    const digest = await hashHandle(handle, size, path, hash, chunkBytes, onChunk);
    const after = await handle.stat({ bigint: true });
    if (identityKey(after) === identityKey(before)) {
      const fsType = await statfs(path).then(
        (info) => info.type,
        () => 0,
      );
      recordPin(await realpath(path), { identity: identityKey(before), ctimeNs: String(before.ctimeNs), statAtMs, fsType }, digest.sha256, new Map());
    }
    return digest;
  } finally {
    await handle.close();
  }
}

async function hashHandle(
  handle: Awaited<ReturnType<typeof openRegularFile>>['handle'],
  size: number,
  path: string,
  hash: Hash,
  chunkBytes: number,
  onChunk?: (chunk: Uint8Array, offset: number) => void,
): Promise<FileDigest> {
  {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let bytes = 0;
    while (bytes < size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(chunkBytes, size - bytes), bytes);
      if (bytesRead === 0) throw new GuardedReadError('changed', path, `shrank while being hashed (${bytes} of ${size} bytes)`);
      hash.update(buffer.subarray(0, bytesRead));
      onChunk?.(buffer.subarray(0, bytesRead), bytes);
      bytes += bytesRead;
    }
    return { sha256: hash.digest('hex'), bytes };
  }
}

/** Synchronous variant for the capture writer, which runs synchronously on the engine's thread. */
export function sha256FileSync(path: string, chunkBytes = DIGEST_CHUNK_BYTES): FileDigest {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let bytes = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, 0, chunkBytes, bytes);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      bytes += bytesRead;
    }
    return { sha256: hash.digest('hex'), bytes };
  } finally {
    closeSync(fd);
  }
}

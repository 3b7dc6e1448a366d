// The one way trace-inspector reads a file whose path a user, a bundle or an API caller named.
// A hostile or unlucky path must not block or exhaust the tool:
//   - the path is stat'ed first and anything but a regular file (FIFO, character or block
//     device, socket, folder) is refused before it is opened, so /dev/zero or a FIFO is never read;
//   - it is then opened with O_NONBLOCK (a FIFO swapped in between cannot block the open) and
//     fstat'ed again: the file read is the regular file that was checked;
//   - its size is checked against a cap chosen for its kind before a byte is read, and never
//     more than the size fstat reported is read (a file growing meanwhile is an error).
// Each caller passes the size cap of its kind of file (a key: 64 KiB, a ledger: 4 MiB, a
// receipt: 64 MiB, a manifest: 256 MiB); tensors and weights are bounded by their regular size.
// Reads go through fs/promises (the libuv pool), never a blocking read on the serve thread; the
// synchronous variant exists for callers that must stay synchronous (key files, a few KiB).
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';

export type GuardedReadProblem = 'missing' | 'not_regular' | 'too_large' | 'changed' | 'unreadable';

/** Why a path could not be read; the message names the path and says what it is instead. */
export class GuardedReadError extends Error {
  override name = 'GuardedReadError';
  constructor(
    readonly problem: GuardedReadProblem,
    readonly path: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`${path} ${reason}`, options);
  }
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** What a non-regular file is, in words: "a character device", "a FIFO", ... */
export function describeFileType(info: Stats): string {
  if (info.isFile()) return 'a regular file';
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function statProblem(path: string, error: unknown): GuardedReadError {
  const code = errnoOf(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return new GuardedReadError('missing', path, 'does not exist', { cause: error });
  return new GuardedReadError('unreadable', path, `cannot be read (${code ?? (error as Error).message})`, { cause: error });
}

function requireRegular(path: string, info: Stats, maxBytes: number | null): void {
  if (!info.isFile()) throw new GuardedReadError('not_regular', path, `is ${describeFileType(info)}, not a regular file; refusing to read it`);
  if (maxBytes !== null && info.size > maxBytes) {
    throw new GuardedReadError('too_large', path, `is ${info.size} bytes, more than the ${maxBytes}-byte limit for this kind of file; wrong file?`);
  }
}

function requireSame(path: string, before: Stats, after: Stats): void {
  if (before.dev !== after.dev || before.ino !== after.ino) {
    throw new GuardedReadError('changed', path, 'was replaced between its check and its opening; refusing to read it');
  }
}

export interface GuardedFile {
  readonly handle: FileHandle;
  /** The size fstat reported at open; readers never read past it. */
  readonly size: number;
}

/**
 * Opens a regular file for reading after the checks above (maxBytes null: no size cap, for
 * files whose size another check bounds, such as tensors and weights). The caller closes it.
 */
export async function openRegularFile(path: string, maxBytes: number | null = null): Promise<GuardedFile> {
  let before: Stats;
  try {
    before = await stat(path);
  } catch (error) {
    throw statProblem(path, error);
  }
  requireRegular(path, before, maxBytes);
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    throw statProblem(path, error);
  }
  try {
    const after = await handle.stat();
    requireRegular(path, after, maxBytes);
    requireSame(path, before, after);
    return { handle, size: after.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Checks that `path` is a regular file (and within maxBytes) without reading it. */
export async function assertRegularFile(path: string, maxBytes: number | null = null): Promise<number> {
  const { handle, size } = await openRegularFile(path, maxBytes);
  await handle.close();
  return size;
}

/** The whole of a regular file of at most `maxBytes` bytes. */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer> {
  const { handle, size } = await openRegularFile(path, maxBytes);
  try {
    const bytes = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const { bytesRead } = await handle.read(bytes, done, size - done, done);
      if (bytesRead === 0) throw new GuardedReadError('changed', path, `shrank while being read (${done} of ${size} bytes)`);
      done += bytesRead;
    }
    const { bytesRead: more } = await handle.read(Buffer.alloc(1), 0, 1, size);
    if (more !== 0) throw new GuardedReadError('changed', path, `grew while being read (past ${size} bytes)`);
    return bytes;
  } catch (error) {
    if (error instanceof GuardedReadError) throw error;
    throw new GuardedReadError('unreadable', path, `cannot be read (${errnoOf(error) ?? (error as Error).message})`, { cause: error });
  } finally {
    await handle.close();
  }
}

/** Synchronous readRegularFile, for small files read by synchronous code (key files). */
export function readRegularFileSync(path: string, maxBytes: number): Buffer {
  let before: Stats;
  try {
    before = statSync(path);
  } catch (error) {
    throw statProblem(path, error);
  }
  requireRegular(path, before, maxBytes);
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw statProblem(path, error);
  }
  try {
    const after = fstatSync(fd);
    requireRegular(path, after, maxBytes);
    requireSame(path, before, after);
    const bytes = Buffer.alloc(after.size);
    let done = 0;
    while (done < after.size) {
      const bytesRead = readSync(fd, bytes, done, after.size - done, done);
      if (bytesRead === 0) throw new GuardedReadError('changed', path, `shrank while being read (${done} of ${after.size} bytes)`);
      done += bytesRead;
    }
    if (readSync(fd, Buffer.alloc(1), 0, 1, after.size) !== 0) throw new GuardedReadError('changed', path, `grew while being read (past ${after.size} bytes)`);
    return bytes;
  } catch (error) {
    if (error instanceof GuardedReadError) throw error;
    throw new GuardedReadError('unreadable', path, `cannot be read (${errnoOf(error) ?? (error as Error).message})`, { cause: error });
  } finally {
    closeSync(fd);
  }
}

/** True when `path` is a regular file right now (no throw); for advice that only fits files. */
export function isRegularFileSync(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

// The capture lock (capture.lock): one capture writes into a folder at a time. The file is
// created with O_EXCL before anything else is written there, so of two captures started into
// the same folder at once exactly one gets it; the other is refused with the holder's pid.
// It is removed when the capture ends (finished, aborted, crashed). After a SIGKILL it stays,
// naming a process that no longer exists: `recover` and the messages below tell the two apart.
import { createOutputFolderSync } from '../io/output-folder.ts';
import { closeSync, constants, lstatSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

export const CAPTURE_LOCK_FILE_NAME = 'capture.lock';

/** Bytes read of a lock file at most: it holds one short JSON line. */
const MAX_LOCK_BYTES = 4096;

const LockSchema = z.object({ pid: z.int().min(1), started_at: z.string() });
export type CaptureLockInfo = z.infer<typeof LockSchema>;

export class CaptureLockedError extends Error {
  override readonly name = 'CaptureLockedError';
  constructor(
    readonly dir: string,
    readonly holder: CaptureLockInfo | null,
  ) {
    super(
      `${dir}: another capture is writing into this folder (${holder === null ? 'its capture.lock cannot be read' : `pid ${holder.pid}, started ${holder.started_at}`}); ` +
        'two captures never share a folder',
    );
  }
}

export interface CaptureLock {
  readonly path: string;
  /** Removes the lock (idempotent). */
  release(): void;
}

/**
 * Creates `dir` if needed and takes its lock (O_EXCL). Throws CaptureLockedError when another
 * capture holds it; file-system errors (ENOTDIR, EACCES, ENOSPC...) propagate.
 */
export function acquireCaptureLock(dir: string): CaptureLock {
  // One level at a time: a recursive mkdir under /proc retries for ever (output-folder.ts).
  createOutputFolderSync(dir, '--out');
  const path = join(dir, CAPTURE_LOCK_FILE_NAME);
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new CaptureLockedError(dir, readCaptureLock(dir));
    throw error;
  }
  try {
    writeSync(fd, `${JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() })}\n`);
  } finally {
    closeSync(fd);
  }
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      try {
        unlinkSync(path);
      } catch {
        // already gone (recovered or removed by hand)
      }
    },
  };
}

/** The lock in `dir`, null when there is none or it cannot be read as one. */
export function readCaptureLock(dir: string): CaptureLockInfo | null {
  const path = join(dir, CAPTURE_LOCK_FILE_NAME);
  let text: string;
  try {
    // Only a regular file is read (a FIFO put in its place must not block), and at most 4 KiB.
    if (!lstatSync(path).isFile()) return null;
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const bytes = Buffer.alloc(MAX_LOCK_BYTES);
      const length = readSync(fd, bytes, 0, MAX_LOCK_BYTES, 0);
      text = bytes.subarray(0, length).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  try {
    const parsed = LockSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Whether the process that holds a lock is still running (this machine's pids). */
export function lockHolderAlive(lock: CaptureLockInfo): boolean {
  if (lock.pid === process.pid) return true;
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

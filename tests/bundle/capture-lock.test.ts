// The capture lock: of two captures taking the same folder, exactly one gets it (O_EXCL), the
// other learns who holds it; a lock left by a dead process is told apart from a live one.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireCaptureLock, CaptureLockedError, lockHolderAlive, readCaptureLock } from '../../main/core/bundle/capture-lock.ts';
import { tempDirTracker } from '../helpers/paths.ts';
import { mkfifoSync } from './fifo.ts';

const { tempDir, removeTempDirs } = tempDirTracker('lock');
afterAll(() => removeTempDirs());

describe('capture.lock', () => {
  it('is taken once: a second taker gets CaptureLockedError naming the holder, even from this process', () => {
    const dir = join(tempDir('twice'), 'out');
    const first = acquireCaptureLock(dir);
    const second = (() => {
      try {
        acquireCaptureLock(dir);
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(second).toBeInstanceOf(CaptureLockedError);
    expect((second as CaptureLockedError).holder?.pid).toBe(process.pid);
    expect((second as Error).message).toContain(`pid ${process.pid}`);
    first.release();
    const third = acquireCaptureLock(dir);
    third.release();
    third.release(); // idempotent
  });

  it('tells a dead holder from a live one, and reads nothing it should not', () => {
    const dir = tempDir('stale');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, 'capture.lock'), `${JSON.stringify({ pid: Number(dead.stdout), started_at: 'then' })}\n`);
    const lock = readCaptureLock(dir);
    expect(lock?.pid).toBe(Number(dead.stdout));
    expect(lockHolderAlive(lock!)).toBe(false);
    expect(lockHolderAlive({ pid: process.pid, started_at: 'now' })).toBe(true);
    writeFileSync(join(dir, 'capture.lock'), 'not json');
    expect(readCaptureLock(dir)).toBeNull();
    // A FIFO in place of the lock is not opened for reading (it would block).
    rmSync(join(dir, 'capture.lock'));
    if (mkfifoSync(join(dir, 'capture.lock'))) expect(readCaptureLock(dir)).toBeNull();
  });
});

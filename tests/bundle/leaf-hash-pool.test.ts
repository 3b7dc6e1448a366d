// The leaf hashing workers (main/core/bundle/leaf-hash-pool.ts): ended when idle on request (the
// gate ends them once a case is judged, so their rings and heaps are not carried to its end) and on
// their own after a while idle (the app, between comparisons), and
// started again by the next window, which hashes as before.
import { describe, expect, it } from 'vitest';
import { IDLE_END_MS, LeafHashPool } from '../../main/core/bundle/leaf-hash-pool.ts';
import { leavesOf } from '../../main/core/bundle/tree-digest.ts';

describe('LeafHashPool.endIdleWorkers', () => {
  it('ends the idle workers, and the next window starts one again with the same leaves', async () => {
    const pool = new LeafHashPool(1);
    const window = Uint8Array.from({ length: 3 * 4096 + 17 }, (_, i) => (i * 31) % 251);
    expect(await pool.leaves(window, 4096)).toEqual(leavesOf(window, 4096));
    expect(pool.counts.onWorkers).toBe(1);
    expect(pool.runningWorkers).toBe(1);
    pool.endIdleWorkers();
    expect(pool.runningWorkers).toBe(0);
    expect(await pool.leaves(window, 4096)).toEqual(leavesOf(window, 4096));
    expect(pool.counts.onWorkers).toBe(2);
    expect(pool.runningWorkers).toBe(1);
    pool.endIdleWorkers();
  });
});

describe('LeafHashPool idle workers', () => {
  it('are ended on their own once every window is answered and none came for idleEndMs (the app, between comparisons)', async () => {
    const pool = new LeafHashPool(2, 50);
    const window = Uint8Array.from({ length: 2 * 4096 }, (_, i) => (i * 7) % 253);
    const [first, second] = await Promise.all([pool.leaves(window, 4096), pool.leaves(window, 4096)]);
    expect(first).toEqual(leavesOf(window, 4096));
    expect(second).toEqual(first);
    expect(pool.runningWorkers).toBe(2);
    await expect.poll(() => pool.runningWorkers, { timeout: 10_000, interval: 20 }).toBe(0);
    // The next window starts a worker again and hashes as before.
    expect(await pool.leaves(window, 4096)).toEqual(leavesOf(window, 4096));
    expect(pool.counts.onWorkers).toBe(3);
    pool.endIdleWorkers();
  });
});

describe('LeafHashPool hand-over through shared memory', () => {
  it("answers a window shorter than its leaves' digests (the digests are written where the window was: the job holds room for them)", async () => {
    const pool = new LeafHashPool(1);
    // 40 bytes in leaves of 16: three digests, 96 bytes, longer than the window.
    const window = Uint8Array.from({ length: 40 }, (_, i) => i * 5 + 1);
    const after = Uint8Array.from({ length: 64 }, (_, i) => 255 - i);
    const [first, second] = await Promise.all([pool.leaves(window, 16), pool.leaves(after, 16)]);
    expect(first).toEqual(leavesOf(window, 16));
    expect(second).toEqual(leavesOf(after, 16));
    pool.endIdleWorkers();
  });

  it('answers more windows than a job table holds, handed over before the worker is up, each with its own leaves', async () => {
    // A table of 4 jobs: the fifth window comes before the worker is up and must not take a slot still held.
    const pool = new LeafHashPool(1, IDLE_END_MS, 4);
    const windows = Array.from({ length: 10 }, (_, n) => Uint8Array.from({ length: 64 }, (_, i) => (n * 13 + i) % 256));
    const answers = await Promise.all(windows.map((window) => pool.leaves(window, 32)));
    answers.forEach((leaves, n) => expect(leaves).toEqual(leavesOf(windows[n] as Uint8Array, 32)));
    expect(pool.counts.onWorkers + pool.counts.onThisThread).toBe(10);
    expect(pool.counts.onThisThread).toBeGreaterThan(0);
    pool.endIdleWorkers();
  });
});

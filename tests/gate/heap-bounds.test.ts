// The --gate process bounds its heap growth (main/cli/gate-heap.ts, main/core/tool/heap-bounds.ts):
// set once the process runs, the flags must take effect and stay set across worker starts, or the
// gate's peak resident set grows back (docs/performance.md). Each case runs in its own process.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const Report = z.object({ before: z.number(), largest: z.number() });

function churn(mode: 'bounded' | 'plain-worker' | 'default'): z.infer<typeof Report> {
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'heap-bounds-child.ts'), mode], { encoding: 'utf8' });
  expect(child.status, child.stderr).toBe(0);
  return Report.parse(JSON.parse(child.stdout));
}

describe('the gate heap bounds', () => {
  it('keep the young generation at the capacity it had, across a worker started with startWorker', () => {
    const bounded = churn('bounded');
    expect(bounded.before).toBeGreaterThan(0);
    expect(bounded.largest).toBeLessThanOrEqual(bounded.before);
  });

  it('are lost when a worker starts without startWorker, and V8 alone grows the young generation (so the check above can fail)', () => {
    for (const mode of ['plain-worker', 'default'] as const) {
      const report = churn(mode);
      expect(report.largest, mode).toBeGreaterThan(2 * report.before);
    }
  });
});

// `--gate --isolate` prints, per case, the local error each segment adds given reference inputs
// beside the accumulated error, before the report whose last lines stay the seals. With the
// KV position perturbation, the attention layers (l2, l4) are where the local error jumps.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/run-cli.ts';
import { freshTempDir, referenceBundle } from '../helpers/paths.ts';

describe('trace-inspector --gate --isolate', () => {
  it('prints local vs accumulated error per segment and keeps the seals last', () => {
    const work = join(freshTempDir('gate-isolate'), 'work');
    const run = runCliProcess(['--gate', '--bundle', referenceBundle('greedy'), '--isolate', '--option', 'perturb.kv_position_off_by_one=1', '--work', work]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('layer isolation, case greedy: local error (reference inputs) beside accumulated error');
    const row = (boundary: string): number => {
      const match = new RegExp(`^\\s+1\\s+${boundary.replace('.', '\\.')} \\*\\s+(\\S+)`, 'm').exec(run.stdout);
      expect(match, boundary).not.toBeNull();
      return Number((match as RegExpExecArray)[1]);
    };
    // Pass 1 (first decode): the off-by-one position only changes what attention layers add.
    expect(row('backbone.l2.out')).toBeGreaterThan(100 * row('backbone.l1.out'));
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.at(-2)).toBe('FIDELITY: FAIL');
    expect(lines.at(-1)).toMatch(/^OVERALL: FAIL/);
  });
});

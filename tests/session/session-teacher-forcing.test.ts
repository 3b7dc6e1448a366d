// Teacher forcing in a stepped run makes the same injections as a CLI capture: with
// perturb.prng_double_advance the engine draws other tokens than the reference (a FAIL at the
// sampler), but the forced reference tokens keep the later passes' context, and the finished
// native bundle's provenance records the forcing and the passes where the engine's choice differed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REFERENCE_ENGINE, referenceBundle } from '../helpers/paths.ts';
import { openSession, removeTempDirs } from './session-fixtures.ts';

afterAll(() => removeTempDirs());

describe('teacher forcing in a session', () => {
  it('is recorded in the run bundle, with where the engine differed', async () => {
    const t = openSession('teacher-forcing');
    try {
      await t.call('openEngine', { library: REFERENCE_ENGINE });
      await t.call('openBundle', { dir: referenceBundle('topk_ties') });
      await t.call('setEngineOptions', { options: { 'perturb.prng_double_advance': '1' } });
      const on = await t.call('setTeacherForce', { on: true });
      expect(on.teacherForce).toBe(true);
      const finished = await t.call('runToEnd', {});
      expect(finished.run.status).toBe('completed');
      expect(finished.counts.FAIL).toBeGreaterThan(0);
      // The run is over: the setting may change for the next one.
      expect((await t.call('setTeacherForce', { on: false })).teacherForce).toBe(false);
      const nativeDir = finished.run.message.match(/captured into (\S+)$/)?.[1] ?? '';
      const manifest = JSON.parse(readFileSync(join(nativeDir, 'manifest.json'), 'utf8')) as { provenance: { runtime: Record<string, unknown> } };
      const runtime = manifest.provenance.runtime;
      expect(runtime['teacher_forced']).toBe(true);
      expect(runtime['engine_library']).toBe(REFERENCE_ENGINE);
      expect(Number(runtime['teacher_forced_injections'])).toBeGreaterThan(0);
      expect(Number(runtime['teacher_forced_differences'])).toBeGreaterThan(0);
    } finally {
      await t.session.close();
    }
  });
});

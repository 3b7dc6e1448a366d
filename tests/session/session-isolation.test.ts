// session-isolation: a fresh isolated capture under the work folder, and its local vs
// accumulated rows. perturb.kv_position_off_by_one (self-test.ts: greedy, first shows at pass 1
// backbone.l2.k_append) rotates decode keys one position too far in the attention layers: fed
// the reference input, l2's keys alone are wrong, so its local error jumps from float32
// rounding to the size of the bug, while a layer before it is untouched.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLayerIsolation } from '../../main/session/session-isolation.ts';
import { LayerIsolationSchema, fromWire, type LayerIsolation } from '../../protocol/inspector-api.ts';
import { SEGV_ENGINE, removeTempDirs, tempDir, writeToyCase } from '../gate/gate-fixtures.ts';
import { REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const workDir = freshTempDir('session-isolation');
afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
  removeTempDirs();
});

const isolate = (engineOptions: Record<string, string>, over: Partial<Parameters<typeof runLayerIsolation>[0]> = {}): Promise<LayerIsolation> =>
  runLayerIsolation({
    library: REFERENCE_ENGINE,
    referenceDir: referenceBundle('greedy'),
    engineOptions,
    isolation: 'process',
    workDir,
    teacherForce: false,
    ...over,
  });

function row(result: LayerIsolation, pass: number, boundary: string): LayerIsolation['rows'][number] {
  const found = result.rows.find((candidate) => candidate.pass === pass && candidate.boundary === boundary);
  if (found === undefined) throw new Error(`no row pass ${pass} ${boundary}`);
  return found;
}

describe('runLayerIsolation on the greedy case', () => {
  let clean: LayerIsolation;
  let perturbed: LayerIsolation;
  beforeAll(async () => {
    clean = await isolate({});
    perturbed = await isolate({ 'perturb.kv_position_off_by_one': '1' });
  });

  it('captures each run into its own new folder under the work folder', () => {
    const folders = readdirSync(workDir).filter((name) => name.startsWith('isolation-'));
    expect(folders).toHaveLength(2);
    for (const folder of folders) expect(readdirSync(join(workDir, folder)).sort()).toEqual(['native', 'native-isolated']);
  });

  it('returns float rows only, every one comparable, for the clean engine', () => {
    expect(LayerIsolationSchema.parse(clean).status).toBe('ok');
    expect(clean.rows.length).toBeGreaterThan(100);
    expect(clean.rows.some((candidate) => candidate.boundary === 'sampler.text.order' || candidate.boundary === 'depth.codes')).toBe(false);
    expect(clean.rows.filter((candidate) => typeof candidate.local.maxAbs !== 'number' || typeof candidate.accumulated.maxAbs !== 'number')).toEqual([]);
    expect(clean.message).toMatch(/float boundaries compared .*; 0 where the local error alone is outside the contract/);
  });

  it('shows the perturbation as local error at the perturbed layer, and not before it', () => {
    expect(perturbed.status).toBe('ok');
    const cleanKeys = fromWire(row(clean, 1, 'backbone.l2.k_append').local.maxAbs);
    const perturbedKeys = fromWire(row(perturbed, 1, 'backbone.l2.k_append').local.maxAbs);
    expect(cleanKeys).toBeLessThan(1e-4);
    expect(perturbedKeys).toBeGreaterThan(1000 * Math.max(cleanKeys, 1e-7));
    // Layer 0 is upstream of the first attention layer: the bug does not touch it.
    expect(fromWire(row(perturbed, 1, 'backbone.l0.out').local.maxAbs)).toBe(fromWire(row(clean, 1, 'backbone.l0.out').local.maxAbs));
    // The prefill is unaffected by a decode-only bug.
    expect(fromWire(row(perturbed, 0, 'backbone.l2.k_append').local.maxAbs)).toBe(fromWire(row(clean, 0, 'backbone.l2.k_append').local.maxAbs));
    // Downstream, the normal run carries what l2 added.
    expect(fromWire(row(perturbed, 1, 'backbone.l5.out').accumulated.maxAbs)).toBeGreaterThan(
      100 * fromWire(row(clean, 1, 'backbone.l5.out').accumulated.maxAbs),
    );
    expect(perturbed.message).not.toMatch(/; 0 where the local error alone/);
  });
});

describe('runLayerIsolation when the engine fails', () => {
  it('an option the engine refuses is status error naming it, not a throw', async () => {
    const result = await isolate({ 'perturb.no_such_thing': '1' });
    expect(result).toMatchObject({ status: 'error', rows: [] });
    expect(result.message).toContain('perturb.no_such_thing');
  });

  it('a crashing engine is status error naming the pass and the crash', async () => {
    const toy = writeToyCase(tempDir('isolation-segv'));
    const result = await isolate({}, { library: SEGV_ENGINE, referenceDir: toy.referenceDir });
    expect(LayerIsolationSchema.parse(result)).toMatchObject({ status: 'error', rows: [] });
    expect(result.message).toMatch(/the normal run ended with status crashed in pass 1 after boundary toy\.mix/);
    expect(result.message).toContain('SIGSEGV');
  });
});

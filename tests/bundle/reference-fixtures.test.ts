// The frozen reference bundles (fixtures/, read only) open under the strict reader: schema,
// provenance, confinement, whole-file digests, header cross-checks, and every tensor digest.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBundle, resolveWeights } from '../../main/core/bundle/bundle-reader.ts';
import { verifyFreshness } from '../../main/core/bundle/freshness.ts';
import { CASES } from '../helpers/paths.ts';

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures');
const bundlesRoot = join(fixtures, 'bundles');
const bundleDirs = existsSync(bundlesRoot)
  ? readdirSync(bundlesRoot).flatMap((caseId) => readdirSync(join(bundlesRoot, caseId)).map((kind) => join(bundlesRoot, caseId, kind)))
  : [];

// No skip when the folder is missing: a fixture that disappears must fail here, not vanish.
describe('reference fixtures', () => {
  it('every committed case has its reference and fp64 oracle bundle', () => {
    const names = bundleDirs.map((dir) => dir.slice(bundlesRoot.length + 1));
    for (const caseId of CASES) expect(names).toEqual(expect.arrayContaining([`${caseId}/reference`, `${caseId}/oracle-f64`]));
  });

  it('the fixtures index is fresh', async () => {
    const report = await verifyFreshness(join(fixtures, 'fixtures.sha256'));
    expect(report, JSON.stringify(report, null, 2)).toMatchObject({ fresh: true });
  });

  it.each(bundleDirs.map((dir) => [dir.slice(bundlesRoot.length + 1), dir]))('%s opens and every tensor verifies', async (_name, dir) => {
    const bundle = await openBundle(dir);
    try {
      expect(['reference', 'oracle-f64']).toContain(bundle.manifest.kind);
      expect(bundle.passes.length).toBeGreaterThan(1);
      for (const input of bundle.manifest.inputs) await bundle.readInput(input.name);
      for (const pass of bundle.passes) for (const boundary of pass.boundaries) await bundle.readBoundary(pass.index, boundary.name);
      await resolveWeights(bundle);
    } finally {
      await bundle.close();
    }
  });
});

import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyFreshness } from '../../main/core/bundle/freshness.ts';
import { expectBundleError, removeTempDirs, sha256, tempDir } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

function fixturesTree(label: string): { root: string; index: string } {
  const root = tempDir(label);
  mkdirSync(join(root, 'bundles', 'a'), { recursive: true });
  mkdirSync(join(root, 'weights'));
  const files: Record<string, string> = {
    'bundles/a/manifest.json': '{}',
    'bundles/a/pass-000.safetensors': 'xyz',
    'weights/w.safetensors': 'w',
    'README.md': 'hi',
  };
  for (const [path, content] of Object.entries(files)) writeFileSync(join(root, path), content);
  const index = join(root, 'fixtures.sha256');
  const lines = Object.entries(files).map(([path, content]) => `${sha256(Buffer.from(content))}  ${path}`);
  writeFileSync(index, `# fixtures index\n${lines.join('\n')}\n`);
  return { root, index };
}

describe('verifyFreshness', () => {
  it('reports a tree that matches its index as fresh', async () => {
    const { index } = fixturesTree('fresh');
    const report = await verifyFreshness(index);
    expect(report).toMatchObject({ fresh: true, listed: 4, mismatches: [], missing: [], unlisted: [] });
  });

  it('reports changed, missing and unlisted files without throwing', async () => {
    const { root, index } = fixturesTree('stale');
    writeFileSync(join(root, 'bundles/a/pass-000.safetensors'), 'xyZ');
    unlinkSync(join(root, 'weights/w.safetensors'));
    writeFileSync(join(root, 'bundles/a/pass-001.safetensors'), 'new');
    writeFileSync(join(root, 'notes.txt'), 'outside the listed folders: not my business');
    const report = await verifyFreshness(index);
    expect(report.fresh).toBe(false);
    expect(report.mismatches).toEqual([{ path: 'bundles/a/pass-000.safetensors', expected: sha256(Buffer.from('xyz')), actual: sha256(Buffer.from('xyZ')) }]);
    expect(report.missing).toEqual(['weights/w.safetensors']);
    expect(report.unlisted).toEqual(['bundles/a/pass-001.safetensors']);
  });

  it('throws E_INDEX_FORMAT naming the index file and line for a malformed index', async () => {
    const { index } = fixturesTree('malformed');
    writeFileSync(index, `${'a'.repeat(64)}  ok.txt\nnot a digest line\n`);
    await expectBundleError(verifyFreshness(index), 'E_INDEX_FORMAT', index, 'line 2');
    writeFileSync(index, `${'a'.repeat(64)}  ../escape.txt\n`);
    await expectBundleError(verifyFreshness(index), 'E_INDEX_FORMAT', index, 'line 1');
  });
});

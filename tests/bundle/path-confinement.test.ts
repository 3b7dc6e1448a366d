import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBundlePath, resolveInsideBundle } from '../../main/core/bundle/path-confinement.ts';
import { expectBundleError, removeTempDirs, tempDir } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

describe('path confinement', () => {
  it('classifies paths lexically', () => {
    expect(checkBundlePath('pass-000.safetensors')).toBeNull();
    expect(checkBundlePath('sub/pass-000.safetensors')).toBeNull();
    expect(checkBundlePath('/abs')?.code).toBe('E_PATH_ABSOLUTE');
    expect(checkBundlePath('C:\\x')?.code).toBe('E_PATH_ABSOLUTE');
    expect(checkBundlePath('a/../../x')?.code).toBe('E_PATH_ESCAPE');
    expect(checkBundlePath('..\\x')?.code).toBe('E_PATH_ESCAPE');
    expect(checkBundlePath('a\\b')?.code).toBe('E_PATH_INVALID');
    expect(checkBundlePath('./a')?.code).toBe('E_PATH_INVALID');
    expect(checkBundlePath('a//b')?.code).toBe('E_PATH_INVALID');
    expect(checkBundlePath('')?.code).toBe('E_PATH_INVALID');
  });

  it('follows symlinks and refuses targets outside the bundle, including a linked folder', async () => {
    const root = tempDir('confine');
    const bundle = join(root, 'bundle');
    mkdirSync(join(bundle, 'inside'), { recursive: true });
    writeFileSync(join(root, 'secret'), 's');
    writeFileSync(join(bundle, 'inside', 'ok'), 'o');
    symlinkSync(root, join(bundle, 'up'));
    symlinkSync('inside/ok', join(bundle, 'alias'));
    const blame = { file: join(bundle, 'manifest.json'), field: 'files[0].path' };
    expect(await resolveInsideBundle(bundle, 'alias', blame)).toMatch(/inside[/\\]ok$/);
    await expectBundleError(resolveInsideBundle(bundle, 'up/secret', blame), 'E_PATH_ESCAPE', blame.file, blame.field);
    await expectBundleError(resolveInsideBundle(bundle, 'missing', blame), 'E_FILE_MISSING', blame.file, blame.field);
  });
});

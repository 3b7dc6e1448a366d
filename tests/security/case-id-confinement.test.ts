// Issue 10, class 1: a bundle's case.id (covered by no digest) names the folder a capture writes
// when the user gave none: capture without --out (runs/<case>-<time>) and serve / app prefill
// (<work>/<case>-<time>-<n>). "../../x" must not leave runs/ or the work folder, and a NUL must
// not become an internal error. Every such name goes through safePathComponent and confinedChild.
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { confinedChild, MAX_COMPONENT_CHARS, PathConfinementError, safePathComponent } from '../../main/core/bundle/path-confinement.ts';
import { xorshift32 } from '../helpers/random.ts';
import { REFERENCE_ENGINE } from '../helpers/paths.ts';
import { openSession, removeTempDirs as removeSessionDirs } from '../session/session-fixtures.ts';
import { copyBundle, describeRefusal, hasStackTrace, removeTempDirs, runCliBounded, tempDir } from './hostile-fixtures.ts';

afterAll(() => {
  removeTempDirs();
  removeSessionDirs();
});

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const HOSTILE_IDS = ['../../escaped', '..', '.', '', '/etc/passwd', 'a/../../b', 'nul\u0000inside', '..\\..\\win', 'ü', ' ', '-rf', '.hidden', 'x'.repeat(300)];

describe('safePathComponent', () => {
  it('keeps a safe id as it is', () => {
    expect(safePathComponent('interleaved')).toBe('interleaved');
    expect(safePathComponent('prefill_1tok')).toBe('prefill_1tok');
    expect(safePathComponent('v1.2-rc')).toBe('v1.2-rc');
  });

  it('turns every hostile id into one component that cannot leave its folder', () => {
    for (const id of HOSTILE_IDS) {
      const component = safePathComponent(id);
      expect(component, JSON.stringify(id)).toMatch(SAFE);
      expect(component.length).toBeLessThanOrEqual(MAX_COMPONENT_CHARS);
      expect(relative('/root', join('/root', component)).split(sep)).toHaveLength(1);
    }
    expect(safePathComponent('../../escaped')).toBe('escaped');
    expect(safePathComponent('nul\u0000inside')).toBe('nul_inside');
    expect(safePathComponent('..')).toBe('case');
    expect(safePathComponent('', 'boundary')).toBe('boundary');
  });

  it('holds for random strings of any code points (seeded)', () => {
    const next = xorshift32(0x5afe);
    const random = (): number => next() / 2 ** 32;
    for (let n = 0; n < 2000; n++) {
      const length = Math.floor(random() * 20);
      let id = '';
      for (let i = 0; i < length; i++) id += String.fromCodePoint(Math.floor(random() * (random() < 0.7 ? 128 : 0x10ffff - 0xe000)));
      const component = safePathComponent(id.replace(/[\uD800-\uDFFF]/g, ''));
      expect(component, JSON.stringify(id)).toMatch(SAFE);
    }
  });
});

describe('confinedChild', () => {
  it('joins a safe component under the real root and refuses a taken name that is a symlink out of it', async () => {
    const root = tempDir('confined');
    mkdirSync(join(root, 'runs'));
    expect(await confinedChild(join(root, 'runs'), 'case-1')).toBe(join(root, 'runs', 'case-1'));
    symlinkSync(root, join(root, 'runs', 'case-2'));
    await expect(confinedChild(join(root, 'runs'), 'case-2')).rejects.toThrow(PathConfinementError);
    await expect(confinedChild(join(root, 'runs'), '../x')).rejects.toThrow(PathConfinementError);
  });
});

/** A marker of this test run: where a `..` id would land, nothing else may carry it. */
const MARK = `escaped${process.pid}x${Date.now().toString(36)}`;

/** Every entry beside `dir` and beside its parent whose name carries MARK. */
function escapedBeside(dir: string): string[] {
  const found: string[] = [];
  for (const at of [join(dir, '..'), join(dir, '..', '..')]) for (const name of readdirSync(at)) if (name.includes(MARK)) found.push(join(at, name));
  return found;
}

describe('capture without --out', () => {
  for (const [label, id, folderPrefix] of [
    ['"../../<mark>"', `../../${MARK}`, `${MARK}-`],
    ['a NUL in the id', `nul\u0000${MARK}`, `nul_${MARK}-`],
  ] as const) {
    it(`writes a case id of ${label} inside runs/`, async () => {
      const cwd = join(tempDir('capture-cwd'), 'a', 'b');
      mkdirSync(cwd, { recursive: true });
      const bundle = copyBundle(join(tempDir('capture-bundle'), 'bundle'), (manifest) => {
        manifest.case.id = id;
      });
      const run = await runCliBounded(['capture', '--bundle', bundle], { cwd, timeoutMs: 120_000 });
      const said = describeRefusal(run);
      expect(hasStackTrace(run.stderr), said).toBe(false);
      expect(run.status, said).toBe(0);
      const folders = readdirSync(join(cwd, 'runs'));
      expect(folders, said).toHaveLength(1);
      expect(folders[0], said).toMatch(new RegExp(`^${folderPrefix}`));
      expect(existsSync(join(cwd, 'runs', folders[0] as string, 'manifest.json'))).toBe(true);
      expect(escapedBeside(join(cwd, 'runs'))).toEqual([]);
    }, 150_000);
  }
});

describe('serve / app prefill', () => {
  for (const [label, id, folderPrefix] of [
    ['"../../<mark>"', `../../${MARK}`, `${MARK}-`],
    ['a NUL in the id', `nul\u0000${MARK}`, `nul_${MARK}-`],
  ] as const) {
    it(`captures a case id of ${label} inside the work folder`, async () => {
      const session = openSession(folderPrefix.startsWith('nul') ? 'prefill-nul' : 'prefill-dotdot');
      const bundle = copyBundle(join(tempDir('prefill-bundle'), 'bundle'), (manifest) => {
        manifest.case.id = id;
      });
      await session.call('openEngine', { library: REFERENCE_ENGINE });
      await session.call('openBundle', { dir: bundle });
      const snapshot = await session.call('prefill', {});
      expect(snapshot.run.status, snapshot.run.message).not.toBe('error');
      const folders = readdirSync(session.workDir).filter((name) => name !== 'recent.json');
      expect(folders).toHaveLength(1);
      expect(folders[0]).toMatch(new RegExp(`^${folderPrefix}`));
      expect(escapedBeside(session.workDir)).toEqual([]);
      await session.session.close();
    }, 120_000);
  }
});

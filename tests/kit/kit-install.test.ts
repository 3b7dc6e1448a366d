// The kit installs with `pip install --no-build-isolation ./python` where pip has no `wheel`
// package: its build backend (python/build_backend/ti_build.py) needs the standard library alone.
// Proven on the backend itself (a wheel whose RECORD holds every file's digest, importable as it
// is), and through pip when this machine's python has pip.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDirTracker } from '../helpers/paths.ts';

const { tempDir, removeTempDirs } = tempDirTracker('kit-install');
afterAll(removeTempDirs);

const PYTHON = '/usr/bin/python3';
const KIT = join(REPO_ROOT, 'python');

function python(args: readonly string[], env: Record<string, string> = {}): { status: number | null; out: string } {
  const run = spawnSync(PYTHON, args, { encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

const BUILD = String.raw`
import base64, csv, hashlib, io, sys, zipfile
sys.path.insert(0, sys.argv[1] + "/build_backend")
import ti_build
assert ti_build.get_requires_for_build_wheel() == []
name = ti_build.build_wheel(sys.argv[2])
with zipfile.ZipFile(sys.argv[2] + "/" + name) as wheel:
    names = wheel.namelist()
    record = [row for row in csv.reader(io.StringIO(wheel.read(next(n for n in names if n.endswith("/RECORD"))).decode()))]
    for path, digest, size in record:
        if not digest:
            continue
        data = wheel.read(path)
        assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), path
        assert int(size) == len(data), path
    assert sorted(r[0] for r in record) == sorted(names), (sorted(r[0] for r in record), sorted(names))
print(name)
`;

describe('installing the kit', () => {
  it('the build backend writes a pure-Python wheel from the standard library alone, importable as it is', () => {
    const out = tempDir('wheel');
    const built = python(['-c', BUILD, KIT, out]);
    expect(built.status, built.out).toBe(0);
    expect(built.out.trim()).toBe('trace_inspector_kit-0.1.0-py3-none-any.whl');
    const imported = python(['-c', 'import trace_inspector; print(trace_inspector.__file__)'], { PYTHONPATH: join(out, built.out.trim()) });
    expect(imported.status, imported.out).toBe(0);
    expect(imported.out).toContain('trace_inspector_kit-0.1.0-py3-none-any.whl/trace_inspector/__init__.py');
  });

  it.runIf(python(['-m', 'pip', '--version']).status === 0)(
    'pip install --no-build-isolation installs it, the backend asking pip for nothing to install first',
    () => {
      const target = tempDir('target');
      const installed = python(['-m', 'pip', 'install', '--no-build-isolation', '--no-index', '--no-deps', '--quiet', '--target', target, KIT], {
        PIP_DISABLE_PIP_VERSION_CHECK: '1',
      });
      expect(installed.status, installed.out).toBe(0);
      const imported = python(['-c', 'import trace_inspector; print(trace_inspector.__version__)'], { PYTHONPATH: target });
      expect(imported.out.trim()).toBe('0.1.0');
    },
  );
});

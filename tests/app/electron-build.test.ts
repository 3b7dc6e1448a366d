// The Electron app builds without the Electron binary (electron-vite), and the built output
// keeps the properties only a bundle shows: a sandbox-compatible preload that needs nothing but
// 'electron' (its bridge is tested on the source in tests/electron/preload-bridge.test.ts), a renderer with a strict Content-Security-Policy,
// and a main process that keeps the headless commands on the CLI path. Electron itself cannot run
// here; the window's security settings and the IPC sender check are tested on the source with
// `electron` mocked (tests/electron/), not by reading the bundle.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, freshTempDir } from '../helpers/paths.ts';

// Built into a fresh folder with the project's own config (outputs redirected), so this test
// never empties out/ while serve-mode and end-to-end tests read it.
const out = freshTempDir('app-build');
let main = '';
let preload = '';

beforeAll(() => {
  execFileSync(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'),
      'build',
      '--config',
      join(REPO_ROOT, 'tests', 'app', 'electron-vite.app-test.config.ts'),
    ],
    { cwd: REPO_ROOT, stdio: 'pipe', env: { ...process.env, TI_APP_TEST_OUT: out } },
  );
  main = readFileSync(join(out, 'main', 'index.js'), 'utf8');
  preload = readFileSync(join(out, 'preload', 'index.cjs'), 'utf8');
}, 180_000);

describe('electron-vite build: preload', () => {
  it('bundles the preload as CommonJS that requires only electron', () => {
    const requires = [...preload.matchAll(/require\(["']([^"']+)["']\)/g)].map((match) => match[1]);
    expect(new Set(requires)).toEqual(new Set(['electron']));
  });

  it('bundles the API schemas into the preload, which validates every reply (tests/electron/preload-bridge.test.ts)', () => {
    expect(preload).toContain('exposeInMainWorld');
    expect(preload).toMatch(/safeParse/);
    expect(preload).toContain('InspectorCallError');
  });
});

describe('electron-vite build: renderer', () => {
  it('serves the renderer under a strict Content-Security-Policy', () => {
    const html = readFileSync(join(out, 'renderer', 'index.html'), 'utf8');
    expect(html).toMatch(/Content-Security-Policy/);
    expect(html).toMatch(/default-src 'self'/);
    expect(html).toMatch(/script-src 'self'/);
    expect(html).toMatch(/object-src 'none'/);
    expect(html).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(html).not.toMatch(/https?:\/\//);
  });
});

describe('electron-vite build: main', () => {
  it('bundles the code that imports electron, and exactly one IPC handler: no side doors', () => {
    expect(main).toMatch(/from ["']electron["']/);
    expect([...main.matchAll(/ipcMain\.(handle|on|once|handleOnce)\(/g)]).toHaveLength(1);
  });

  it('keeps the headless commands (--gate, capture, serve...) on the CLI path without a window', () => {
    expect(main).toMatch(/["']--gate["']/);
    expect(main).toMatch(/runCli\(/);
  });
});

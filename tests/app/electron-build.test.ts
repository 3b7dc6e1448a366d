// The Electron app builds without the Electron binary (electron-vite), and the built output
// keeps the security posture: a sandbox-compatible preload that needs nothing but 'electron',
// a renderer with a strict Content-Security-Policy, and a main process that hardens its window.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.ts';

const out = join(REPO_ROOT, 'out');

beforeAll(() => {
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], {
    cwd: REPO_ROOT,
    stdio: 'pipe',
  });
}, 180_000);

describe('electron-vite build', () => {
  it('bundles the preload as CommonJS that requires only electron', () => {
    const preload = readFileSync(join(out, 'preload', 'index.cjs'), 'utf8');
    const requires = [...preload.matchAll(/require\(["']([^"']+)["']\)/g)].map((match) => match[1]);
    expect(new Set(requires)).toEqual(new Set(['electron']));
    expect(preload).toContain('exposeInMainWorld');
  });

  it('serves the renderer under a strict Content-Security-Policy', () => {
    const html = readFileSync(join(out, 'renderer', 'index.html'), 'utf8');
    expect(html).toMatch(/Content-Security-Policy/);
    expect(html).toMatch(/default-src 'self'/);
    expect(html).toMatch(/object-src 'none'/);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('creates its window with context isolation and the sandbox, without node integration', () => {
    const main = readFileSync(join(out, 'main', 'index.js'), 'utf8');
    expect(main).toMatch(/contextIsolation:\s*true/);
    expect(main).toMatch(/sandbox:\s*true/);
    expect(main).toMatch(/nodeIntegration:\s*false/);
    expect(main).toMatch(/from ["']electron["']/);
  });
});

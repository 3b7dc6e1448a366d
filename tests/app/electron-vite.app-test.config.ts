// The project's electron-vite config with every output redirected to the folder named by
// TI_APP_TEST_OUT: the build test proves the app compiles without emptying out/, which serve
// mode and the end-to-end tests read while other test files run.
//
// electron-vite bundles this file together with the config it imports, so the base config's
// `import.meta.dirname` becomes this folder: every path it derived from it is re-rooted at the
// checkout, leaving the base config itself the single source of truth for entries and options.
import { relative, resolve, sep } from 'node:path';
import { defineConfig, type UserConfig } from 'electron-vite';
import base from '../../electron.vite.config.ts';

const target = process.env.TI_APP_TEST_OUT;
if (!target) throw new Error('TI_APP_TEST_OUT must name the output folder of the app build test');
const here = import.meta.dirname;
const repo = resolve(here, '..', '..');

function reroot<T>(value: T): T {
  if (typeof value === 'string') {
    return (value === here || value.startsWith(here + sep) ? resolve(repo, relative(here, value)) : value) as T;
  }
  if (Array.isArray(value)) return value.map((item: unknown) => reroot(item)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, reroot(item)])) as T;
  }
  return value;
}

const config: UserConfig = reroot(base);
export default defineConfig({
  main: { ...config.main, build: { ...config.main?.build, outDir: resolve(target, 'main') } },
  preload: { ...config.preload, build: { ...config.preload?.build, outDir: resolve(target, 'preload') } },
  renderer: { ...config.renderer, build: { ...config.renderer?.build, emptyOutDir: true, outDir: resolve(target, 'renderer') } },
});

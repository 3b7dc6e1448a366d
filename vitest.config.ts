import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The suite by folder (a test belongs to the project of its folder):
//   renderer  the renderer's pure modules and its transports, in Node, no browser
//   native    the C engine, its host process and the engines built on the ABI (examples, kits)
//   e2e       the built products as a user runs them: Chromium over serve mode, the Electron
//             build, the serve server and the CLI's commands
//   unit      everything else: the core (bundle, compare, gate, inspect, receipt...), the session,
//             the Electron host's window, security and IPC code with electron mocked (tests/electron)
// `vitest run` runs them all (npm test); `npm run test:unit`, `test:renderer`, `test:native` and
// `test:e2e` run one.
//
// unit, renderer and native share one module graph per worker (isolate: false): a test file no
// longer loads and evaluates the core again (tests/bundle + tests/receipt: 48 s of CPU isolated,
// 33 s shared; the whole suite 1,589 s, 1,351 s). A file that replaces or stubs modules, globals or
// the environment through vi (REPLACING) would leak that into the next file, or get the real module
// another file loaded first: it runs isolated, in unit:isolated, renderer:isolated or
// native:isolated, found by reading the files, so a new one cannot land in a shared graph by
// mistake. e2e stays isolated, as a user runs the products.
const RENDERER_FOLDERS = ['renderer'];
const NATIVE_FOLDERS = ['capture', 'docs', 'engine', 'engine-host', 'examples', 'kit', 'rust', 'scale'];
const E2E_FOLDERS = ['app', 'cli', 'e2e', 'serve'];
const globs = (folders: readonly string[]): string[] => folders.map((folder) => `tests/${folder}/**/*.test.ts`);
const [RENDERER, NATIVE, E2E] = [globs(RENDERER_FOLDERS), globs(NATIVE_FOLDERS), globs(E2E_FOLDERS)];

const REPLACES = /\bvi\.(mock|doMock|stubEnv|stubGlobal|spyOn)\(/;
const ROOT = dirname(fileURLToPath(import.meta.url));
/** The test files below `dir`, named relative to the repository as the include globs are. */
const testFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : [],
  );
const REPLACING = testFiles('tests').filter((file) => REPLACES.test(readFileSync(join(ROOT, file), 'utf8')));
const folderOf = (file: string): string => file.split(/[\\/]/)[1] ?? '';
const REPLACING_RENDERER = REPLACING.filter((file) => RENDERER_FOLDERS.includes(folderOf(file)));
const REPLACING_NATIVE = REPLACING.filter((file) => NATIVE_FOLDERS.includes(folderOf(file)));
// e2e is isolated whole; what is left is unit's.
const REPLACING_UNIT = REPLACING.filter((file) => ![...RENDERER_FOLDERS, ...NATIVE_FOLDERS, ...E2E_FOLDERS].includes(folderOf(file)));

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Engine and bundle tests spawn processes and write temp folders; two cores here.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', isolate: false, include: ['tests/**/*.test.ts'], exclude: [...RENDERER, ...NATIVE, ...E2E, ...REPLACING_UNIT] } },
      { extends: true, test: { name: 'unit:isolated', include: REPLACING_UNIT } },
      { extends: true, test: { name: 'renderer', isolate: false, include: RENDERER, exclude: REPLACING_RENDERER } },
      { extends: true, test: { name: 'renderer:isolated', include: REPLACING_RENDERER } },
      { extends: true, test: { name: 'native', isolate: false, include: NATIVE, exclude: REPLACING_NATIVE } },
      { extends: true, test: { name: 'native:isolated', include: REPLACING_NATIVE } },
      { extends: true, test: { name: 'e2e', include: E2E } },
    ],
  },
});

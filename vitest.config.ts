import { defineConfig } from 'vitest/config';

// The suite in four projects, chosen by folder (a test belongs to the project of its folder):
//   renderer  the renderer's pure modules and its transports, in Node, no browser
//   native    the C engine, its host process and the engines built on the ABI (examples, kits)
//   e2e       the built products as a user runs them: Chromium over serve mode, the Electron
//             build, the serve server and the CLI's commands
//   unit      everything else: the core (bundle, compare, gate, inspect, receipt...), the session,
//             the Electron host's window, security and IPC code with electron mocked (tests/electron)
// `vitest run` runs them all (npm test); `npm run test:unit`, `test:renderer`, `test:native` and
// `test:e2e` run one.
//
// unit, renderer and native share one module graph per worker (isolate: false): a test file
// no longer loads and evaluates the core again, which was about a third of those files' CPU
// (tests/bundle + tests/receipt: 48 s of CPU isolated, 33 s shared). A file there must not rely on
// a fresh module: the files that replace modules with vi.mock (MOCKING) run isolated, in
// unit:isolated and renderer:isolated, and e2e stays isolated as a user runs the products.
const RENDERER = ['tests/renderer/**/*.test.ts'];
const NATIVE = ['capture', 'docs', 'engine', 'engine-host', 'examples', 'kit', 'rust', 'scale'].map((folder) => `tests/${folder}/**/*.test.ts`);
const E2E = ['app', 'cli', 'e2e', 'serve'].map((folder) => `tests/${folder}/**/*.test.ts`);
// Test files that replace modules (vi.mock): a shared module graph would leak the mock into the
// next file, or give this file the real module another file loaded first.
const MOCKING_UNIT = ['tests/electron/**/*.test.ts'];
const MOCKING_RENDERER = ['tests/renderer/websocket-reconnect.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Engine and bundle tests spawn processes and write temp folders; two cores here.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', isolate: false, include: ['tests/**/*.test.ts'], exclude: [...RENDERER, ...NATIVE, ...E2E, ...MOCKING_UNIT] } },
      { extends: true, test: { name: 'unit:isolated', include: MOCKING_UNIT } },
      { extends: true, test: { name: 'renderer', isolate: false, include: RENDERER, exclude: MOCKING_RENDERER } },
      { extends: true, test: { name: 'renderer:isolated', include: MOCKING_RENDERER } },
      { extends: true, test: { name: 'native', isolate: false, include: NATIVE } },
      { extends: true, test: { name: 'e2e', include: E2E } },
    ],
  },
});

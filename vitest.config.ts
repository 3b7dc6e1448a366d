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
const RENDERER = ['tests/renderer/**/*.test.ts'];
const NATIVE = ['capture', 'docs', 'engine', 'engine-host', 'examples', 'kit', 'rust', 'scale'].map((folder) => `tests/${folder}/**/*.test.ts`);
const E2E = ['app', 'cli', 'e2e', 'serve'].map((folder) => `tests/${folder}/**/*.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Engine and bundle tests spawn processes and write temp folders; two cores here.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['tests/**/*.test.ts'], exclude: [...RENDERER, ...NATIVE, ...E2E] } },
      { extends: true, test: { name: 'renderer', include: RENDERER } },
      { extends: true, test: { name: 'native', include: NATIVE } },
      { extends: true, test: { name: 'e2e', include: E2E } },
    ],
  },
});

// electron-vite builds the three Electron faces from top-level folders (not src/):
// main/electron (the only code that imports electron), preload (the typed bridge) and the
// renderer. The core that they call is plain Node and is bundled into the main output.
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';

const root = import.meta.dirname;

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rolldownOptions: {
        input: { index: resolve(root, 'main/electron/main.ts') },
        external: ['koffi', 'electron'],
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // A sandboxed preload can require only 'electron': bundle its other dependencies (zod).
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(root, 'preload/index.ts') },
        // A sandboxed preload runs as a classic script, so it must be CommonJS.
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'renderer'),
    build: {
      outDir: resolve(root, 'out/renderer'),
      rolldownOptions: { input: { index: resolve(root, 'renderer/index.html') } },
    },
  },
});

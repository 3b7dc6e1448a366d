// electron-vite builds the three Electron faces from top-level folders (not src/):
// main/electron (the only code that imports electron), preload (the Electron preload; the typed
// API it forwards is protocol/) and the renderer. The core that they call is plain Node and is
// bundled into the main output.
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
    // Relative asset URLs: Electron loads the renderer from file://, serve mode from http://.
    base: './',
    // React 19's automatic JSX runtime (oxc compiles .tsx; there is no React plugin).
    oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
    build: {
      outDir: resolve(root, 'out/renderer'),
      // Served to a browser too: minified code parses faster (electron-vite leaves it off by default).
      minify: true,
      // Plotly alone is ~5 MB minified; it is loaded on first plot, in its own chunk.
      chunkSizeWarningLimit: 6000,
      rolldownOptions: { input: { index: resolve(root, 'renderer/index.html') } },
    },
  },
});

// Builds everything `trace-inspector` needs to run from a fresh checkout:
// the native reference engine and its test libraries (gcc, via engine/Makefile), the
// Node-side entry points that run outside the TypeScript toolchain (CLI, engine worker,
// engine host process, the app's judging worker), bundled by esbuild into dist/, and the Electron app (electron-vite:
// out/main, out/preload, out/renderer — serve mode serves out/renderer too). Runs on
// `npm install`, before tests and on `npm start`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function buildEngine() {
  execFileSync('make', ['-C', join(root, 'engine'), '--no-print-directory', '-s', 'all'], {
    stdio: 'inherit',
  });
}

async function buildNodeEntries() {
  const esbuild = await import('esbuild');
  const entryPoints = {
    cli: 'main/cli/index.ts',
    'engine-worker': 'main/engine-host/engine-worker.ts',
    'capture-writer': 'main/engine-host/capture-writer-thread.ts',
    'engine-host-process': 'main/engine-host/engine-host-process.ts',
    'judge-worker': 'main/session/judge-worker.ts',
  };
  const present = Object.fromEntries(Object.entries(entryPoints).filter(([, file]) => existsSync(join(root, file))));
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: present,
    outdir: 'dist',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    external: ['koffi', 'electron'],
    // ESM bundles need require() for koffi's CommonJS internals.
    banner: { js: "import { createRequire as __tiCreateRequire } from 'node:module'; const require = __tiCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

/**
 * electron-vite in a child process, its output kept quiet unless it fails: then it is shown
 * in full, with a line that says which part of the checkout it concerns.
 */
function buildApp() {
  const cli = join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
  const result = spawnSync(process.execPath, [cli, 'build'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status === 0) return;
  process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `${result.error.message}\n` : ''}`);
  process.stderr.write(
    'trace-inspector build: the app build failed (electron-vite build of main/electron, preload/ and renderer/ into out/); ' +
      'the messages above name the file. The desktop app and serve mode need out/; the engine and dist/ were built.\n',
  );
  process.exit(1);
}

buildEngine();
await buildNodeEntries();
buildApp();

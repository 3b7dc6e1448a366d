// Builds everything `trace-inspector` needs to run from a fresh checkout:
// the native reference engine and its test libraries (gcc, via engine/Makefile), and the
// Node-side entry points that run outside the TypeScript toolchain (CLI, engine worker,
// engine host process), bundled by esbuild into dist/. Runs on `npm install` and before tests.
import { execFileSync } from 'node:child_process';
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
    'engine-worker': 'engine/host/engine-worker.ts',
    'engine-host-process': 'engine/host/engine-host-process.ts',
  };
  const present = Object.fromEntries(
    Object.entries(entryPoints).filter(([, file]) => existsSync(join(root, file))),
  );
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

buildEngine();
await buildNodeEntries();

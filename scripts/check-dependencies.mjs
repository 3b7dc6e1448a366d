// `npm run deps`: checks the import rules of .dependency-cruiser.cjs (which folder may import
// which; docs/architecture.md) over main/, protocol/, preload/ and renderer/, and exits 1 on any
// violation, naming the rule and both files.
//
// dependency-cruiser reads TypeScript with the TypeScript compiler API or with swc. TypeScript 7
// has no JavaScript API, so it runs with swc; its swc parser does not switch on JSX for .tsx files
// (it parses every file as plain TypeScript), so this wrapper passes swc `tsx: true` for them
// before running dependency-cruiser's own command line. The module object is the one
// dependency-cruiser imports, so the change reaches its parser; nothing else in it is altered.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const swc = require('@swc/core');
const parseFileSync = swc.parseFileSync;
swc.parseFileSync = (file, options) => parseFileSync(file, file.endsWith('.tsx') ? { ...options, tsx: true } : options);

process.chdir(root);
process.argv = [
  process.argv[0],
  'depcruise',
  '--config',
  '.dependency-cruiser.cjs',
  '--output-type',
  'err',
  'main',
  'protocol',
  'preload',
  'renderer',
  ...process.argv.slice(2),
];
await import(join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'));

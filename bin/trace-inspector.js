#!/usr/bin/env node
// The `trace-inspector` command: runs the CLI bundled into dist/ by `npm install`.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write(`trace-inspector: ${cli} is missing; run \`npm install\` (or \`npm run build\`) first.\n`);
  process.exit(2);
}
await import(pathToFileURL(cli).href);

// Where the bundled engine entry points live: dist/ under the package root (the folder with
// trace-inspector's package.json, found by walking up from this module), so the same code
// finds them from the TypeScript sources (vitest, tsx) and from an esbuild bundle in dist/.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/tool/tool-info.ts';
import { EngineHostError } from './engine-errors.ts';

export type EngineScript = 'engine-worker' | 'engine-host-process' | 'capture-writer';

export function engineScriptPath(script: EngineScript): string {
  const path = join(packageRoot(), 'dist', `${script}.js`);
  if (!existsSync(path)) {
    throw new EngineHostError(`${path} is missing: run \`node scripts/build.mjs\` (or \`npm install\`) to build the engine host`);
  }
  return path;
}

// Who produced an artifact: the tool's version and the git commit of its checkout. Recorded
// in native bundles and receipts so evidence names the code that made it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The folder holding trace-inspector's package.json, found from this module's location. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const parsed = z.object({ name: z.string() }).safeParse(JSON.parse(readFileSync(candidate, 'utf8')));
      if (parsed.success && parsed.data.name === 'trace-inspector') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`trace-inspector: cannot find its package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export interface ToolInfo {
  name: 'trace-inspector';
  version: string;
  /** git commit of the checkout, or "unknown" outside a git checkout. */
  commit: string;
  /** The checkout had uncommitted changes to tracked files. */
  dirty: boolean;
}

let cached: ToolInfo | undefined;

export function toolInfo(): ToolInfo {
  if (cached) return cached;
  const root = packageRoot();
  const pkg = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
  let commit = 'unknown';
  let dirty = false;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim().length > 0;
  } catch {
    // Not a git checkout (an installed package): the version alone identifies the tool.
  }
  cached = { name: 'trace-inspector', version: pkg.version, commit, dirty };
  return cached;
}

/** The embedded default: the reference engine and its committed fixture bundles. */
export function embeddedDefaults(): { engineLibrary: string; bundlesDir: string; perturbationTable: string; defaultCase: string } {
  const root = packageRoot();
  return {
    engineLibrary: join(root, 'engine', 'build', 'libti_reference.so'),
    bundlesDir: join(root, 'fixtures', 'bundles'),
    /** The reference engine's self-test table (docs/self-test.md). */
    perturbationTable: join(root, 'engine', 'perturbations.json'),
    defaultCase: 'interleaved',
  };
}

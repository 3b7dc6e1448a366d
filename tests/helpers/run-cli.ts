// Runs the installed command (bin/trace-inspector.js → dist/cli.js) as a user would.
import { spawnSync } from 'node:child_process';
import { CLI, REPO_ROOT } from './paths.ts';

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCliProcess(args: readonly string[], cwd = REPO_ROOT, timeoutMs = 120_000): CliRun {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: timeoutMs });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

// Runs the installed command (bin/trace-inspector.js → dist/cli.js) as a user would.
import { spawn, spawnSync } from 'node:child_process';
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

export interface BoundedRun extends CliRun {
  /** The bound passed before stdout and stderr closed (the CLI, or something holding its pipes, hung). */
  timedOut: boolean;
  signal: NodeJS.Signals | null;
  ms: number;
}

/**
 * Runs the installed CLI without blocking the test process, killing it (timedOut) after
 * `timeoutMs`. It resolves on 'close', after stdout and stderr closed too, so an engine's child
 * holding the CLI's pipes past the bound shows as a hang.
 */
export function runCliBounded(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<BoundedRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...(options.env ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

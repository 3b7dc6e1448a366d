// The real CLI started in the background, so a test can wait for a line of its progress and
// then signal it (the interrupted-capture and crash-consistency tests).
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, REPO_ROOT } from '../helpers/paths.ts';

export interface RunningCli {
  readonly child: ChildProcess;
  /** Resolves when stderr so far matches `pattern`; rejects if the process ends first or after `timeoutMs`. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  stderr(): string;
}

export function startCapture(args: readonly string[], env: Readonly<Record<string, string>> = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of waiters) waiter();
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      for (const waiter of waiters) waiter();
      resolve({ code, signal, stdout, stderr });
    });
  });
  let done = false;
  void ended.then(() => {
    done = true;
  });
  return {
    child,
    ended,
    stderr: () => stderr,
    waitForStderr(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${String(pattern)} on stderr within ${timeoutMs} ms; stderr so far:\n${stderr}`));
        }, timeoutMs);
        const check = (): void => {
          if (pattern.test(stderr)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          } else if (done || child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the CLI ended before ${String(pattern)} appeared on stderr:\n${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}

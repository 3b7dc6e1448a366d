// End-to-end harness: starts the real serve mode (the installed command, as a user runs it) and
// drives Debian's Chromium through playwright-core. Nothing here fakes a host or the core: the
// page talks to `trace-inspector serve` over its WebSocket exactly as a browser would.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CLI, freshTempDir, REPO_ROOT } from '../helpers/paths.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];
/** Screenshots of the main views, written on every run (CI keeps the folder as an artifact). */
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts', 'e2e');

export interface ServeProcess {
  /** The URL serve mode printed, token included. */
  url: string;
  origin: string;
  token: string;
  workDir: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `trace-inspector serve --port 0` and resolves when it printed its URL. */
export async function startServe(extraArgs: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const workDir = freshTempDir('e2e-work');
  const configDir = freshTempDir('e2e-config');
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--work', workDir, ...extraArgs], {
    cwd: REPO_ROOT,
    env: { ...process.env, TRACE_INSPECTOR_CONFIG_DIR: configDir, ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL within 60 s:\n${output}`)), 60_000);
    const check = (): void => {
      const match = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match[0]);
      }
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before printing a URL:\n${output}`));
    });
  });
  const parsed = new URL(url);
  return {
    url,
    origin: parsed.origin,
    token: parsed.searchParams.get('token') ?? '',
    workDir,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()));
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium); .ci/run does`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** Saves a screenshot of the page under test-artifacts/e2e/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/** Collects what the page logs as errors, so a test can assert the app never threw. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return errors;
}

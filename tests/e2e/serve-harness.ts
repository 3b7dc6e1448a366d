// End-to-end harness: starts the real serve mode (the installed command, as a user runs it) and
// drives Debian's Chromium through playwright-core. Nothing here fakes a host or the core: the
// page talks to `trace-inspector serve` over its WebSocket exactly as a browser would.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { waitIdle } from './e2e-pages.ts';
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
  /** The serve process (its memory is read from /proc by the benchmarks). */
  pid: number;
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
    pid: child.pid ?? 0,
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

/** A serve process, a Chromium and one page on it: what every end-to-end test file starts from. */
export interface Inspector {
  serve: ServeProcess;
  browser: Browser;
  page: Page;
  /** Page errors and console errors so far; a test may clear it after a deliberate refusal. */
  pageErrors: string[];
  close: () => Promise<void>;
}

/**
 * Starts serve mode and a 1600x1000 Chromium page on it. With `navigate`, the page opens the
 * served URL (token included) and waits until it is connected and the core is idle.
 */
export async function openInspector(options: { navigate: boolean }): Promise<Inspector> {
  const serve = await startServe();
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 }, acceptDownloads: true });
  const pageErrors = collectPageErrors(page);
  if (options.navigate) {
    await page.goto(serve.url);
    await waitIdle(page);
  }
  return {
    serve,
    browser,
    page,
    pageErrors,
    close: async () => {
      await browser.close();
      await serve.stop();
    },
  };
}

// What serve mode refuses, and what the app does with bad input: a request without the token is
// refused; a library that is not an engine, a corrupt bundle and an engine that crashes mid-pass
// each give a visible, specific error, and the app keeps running with what it had captured.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { SEGV_ENGINE, writeToyCase } from '../gate/gate-fixtures.ts';
import { allowWeightsRoot } from '../helpers/weights-roots.ts';
import { freshTempDir, referenceBundle, TESTLIB_DIR } from '../helpers/paths.ts';
import { byTestId, errorTexts, openByPath, passIndicator, runControl, visibleRows, waitIdle } from './e2e-pages.ts';
import { openInspector, screenshot, type Inspector, type ServeProcess } from './serve-harness.ts';

// A flow drives the real engine through several passes in a real browser.
vi.setConfig({ testTimeout: 240_000 });

let inspector: Inspector;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[];

/** Where the toy case goes: made (and listed as a weights root, inherited by serve) before serve starts. */
let toyRoot: string;

beforeAll(async () => {
  toyRoot = freshTempDir('e2e-toy');
  allowWeightsRoot(toyRoot);
  inspector = await openInspector({ navigate: false });
  ({ serve, page, pageErrors } = inspector);
}, 180_000);

afterAll(async () => {
  await inspector?.close();
});

/** Resolves with the HTTP status the upgrade got, or 101 when the socket opened. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('open', () => {
      socket.close();
      resolvePromise(101);
    });
    socket.on('unexpected-response', (_request, response) => {
      resolvePromise(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe('serve mode refuses what lacks the token', () => {
  it('refuses the page without the token and serves it with it', async () => {
    expect((await fetch(`${serve.origin}/`)).status).toBe(403);
    expect((await fetch(`${serve.origin}/?token=${'A'.repeat(43)}`)).status).toBe(403);
    expect((await fetch(serve.url)).status).toBe(200);

    const refused = await page.goto(`${serve.origin}/`);
    expect(refused?.status()).toBe(403);
    expect(await page.textContent('body')).toMatch(/token/i);
  });

  it('refuses the API socket without the token, or from a foreign origin', async () => {
    const api = `ws://127.0.0.1:${new URL(serve.origin).port}/api`;
    expect(await upgradeStatus(api)).toBe(403);
    expect(await upgradeStatus(`${api}?token=wrong`)).toBe(403);
    expect(await upgradeStatus(`${api}?token=${serve.token}`, { Origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(`${api}?token=${serve.token}`, { Origin: serve.origin })).toBe(101);
  });
});

describe('bad input in the UI', () => {
  it('names a library that is not an engine, and keeps the open session', async () => {
    await page.goto(serve.url);
    await waitIdle(page);
    // The refusals above logged their 403s in the console on purpose; from here none is expected.
    pageErrors.length = 0;
    const notAnEngine = join(TESTLIB_DIR, 'libnot_an_engine.so');
    await openByPath(page, 'open-engine', notAnEngine);
    const errors = await errorTexts(page);
    expect(errors.some((text) => text.includes('libnot_an_engine.so'))).toBe(true);
    await expect(byTestId(page, 'engine-summary').textContent()).resolves.toContain('ti-reference');
    await screenshot(page, '08-error-not-an-engine');
  });

  it('names the corrupt file of a bundle, and keeps the open bundle', async () => {
    const copy = join(freshTempDir('e2e-corrupt'), 'reference');
    cpSync(referenceBundle('greedy'), copy, { recursive: true });
    const victim = join(copy, 'pass-001.safetensors');
    const bytes = readFileSync(victim);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
    writeFileSync(victim, bytes);

    await openByPath(page, 'open-bundle', copy);
    const errors = await errorTexts(page);
    expect(errors.some((text) => text.includes('pass-001.safetensors') && /sha256/.test(text))).toBe(true);
    await expect(byTestId(page, 'bundle-summary').textContent()).resolves.toContain('interleaved');
  });

  it('survives an engine crash mid-pass: names the pass and the signal, keeps the rows captured', async () => {
    const toy = writeToyCase(toyRoot, { oracle: true });
    await openByPath(page, 'open-engine', SEGV_ENGINE);
    await openByPath(page, 'open-bundle', toy.referenceDir);
    await runControl(page, 'btn-prefill');
    expect(await passIndicator(page)).toBe('prefill 0');
    await runControl(page, 'btn-step');

    const errors = await errorTexts(page);
    expect(errors.some((text) => /pass 1/.test(text) && text.includes('SIGSEGV'))).toBe(true);
    await expect(byTestId(page, 'run-status').textContent()).resolves.toMatch(/crashed/);
    // The rows arrive in a getRows after the snapshot that ends the run: wait for them to be drawn.
    await expect
      .poll(async () => (await visibleRows(page)).filter((row) => row.id.startsWith('0:')).map((row) => row.verdict), { timeout: 30_000 })
      .toEqual(['PASS', 'PASS', 'PASS']);
    await screenshot(page, '09-engine-crash');

    // The app is alive: the embedded default opens and runs again.
    await runControl(page, 'btn-open-default');
    await runControl(page, 'btn-prefill');
    expect(await passIndicator(page)).toBe('prefill 0');
    expect(pageErrors).toEqual([]);
  });
});

// Engine against engine in the browser: the built renderer in Debian's Chromium on the real
// `trace-inspector serve`, two captures of the reference engine (topk_ties) opened from the session
// bar — one as the bundle, the other with Open run; no engine runs. The second names its layer
// outputs differently (a port), so its rows fail until a map file is picked in the session bar;
// then every row passes, and the bar names the map file and what it did. Picking a contracts file
// names it too; the Receipt panel signs compare's receipt over both bundles and those files. Every count the page shows is recomputed here from the manifests on disk.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { runCli } from '../../main/cli/run-cli.ts';
import { recordingIO } from '../gate/gate-fixtures.ts';
import { freshTempDir, referenceBundle } from '../helpers/paths.ts';
import { byTestId, errorTexts, openByPath, waitIdle } from './e2e-pages.ts';
import { openInspector, screenshot, type Inspector } from './serve-harness.ts';

vi.setConfig({ testTimeout: 180_000 });

const root = freshTempDir('e2e-two-bundles');
const first = join(root, 'first');
const port = join(root, 'port');
let inspector: Inspector;
let page: Page;

const Manifest = z.object({ passes: z.array(z.object({ boundaries: z.array(z.object({ name: z.string() }).loose()) }).loose()) }).loose();
/** Every (pass, boundary) entry of a bundle's manifest, read from disk. */
function entries(dir: string): string[] {
  return Manifest.parse(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))).passes.flatMap((pass) => pass.boundaries.map((entry) => entry.name));
}

async function count(target: Page, verdict: string): Promise<number> {
  const text = (await target.locator(`[data-testid="pass-timeline"] [data-testid="verdict-counts"] [data-verdict="${verdict}"]`).textContent()) ?? '';
  return Number(text.trim().split(/\s+/).at(-1));
}

async function setFile(target: Page, form: 'set-map-file' | 'set-contracts-file', path: string): Promise<void> {
  await byTestId(target, form).locator('input').fill(path);
  await byTestId(target, form).locator('button[type="submit"]').click();
  await waitIdle(target);
}

beforeAll(async () => {
  const io = recordingIO(root);
  expect(await runCli(['capture', '--bundle', referenceBundle('topk_ties'), '--out', first], io), io.err.join('')).toBe(0);
  // The port calls backbone.l<i>.out "layers.<i>.out"; its values are the same run's.
  cpSync(first, port, { recursive: true });
  const manifestPath = join(port, 'manifest.json');
  writeFileSync(manifestPath, readFileSync(manifestPath, 'utf8').replace(/"name":\s*"backbone\.l(\d+)\.out"/g, '"name": "layers.$1.out"'));
  inspector = await openInspector({ navigate: true });
  ({ page } = inspector);
}, 180_000);

afterAll(async () => {
  await inspector?.close();
});

describe('two bundles in the app, no engine', () => {
  it("opens two captures, fails the renamed boundaries until a map file is picked in the session bar, then passes every row and signs compare's receipt; lists what a map leaves out", async () => {
    const rows = entries(first).length;
    const renamed = entries(first).filter((name) => /^backbone\.l\d+\.out$/.test(name)).length;
    expect(renamed).toBeGreaterThan(0);

    await openByPath(page, 'open-bundle', first);
    await expect(byTestId(page, 'bundle-kind').textContent()).resolves.toBe('native');
    await openByPath(page, 'open-run', port);
    await expect(byTestId(page, 'contracts-in-force').textContent()).resolves.toContain(
      'bit_exact for every boundary the native reference declares no contract for',
    );
    // Each renamed reference boundary is missing on the port's side; each port name is unknown to the reference.
    expect(await count(page, 'FAIL')).toBe(renamed);
    expect(await count(page, 'GAP')).toBe(renamed);
    expect(await count(page, 'PASS')).toBe(rows - renamed);

    const map = join(root, 'port.map.json');
    writeFileSync(
      map,
      JSON.stringify({ schema: 'trace-inspector.boundary-map', schema_version: 1, map: [{ candidate: 'layers.{i}.out', reference: 'backbone.l{i}.out' }] }),
    );
    await setFile(page, 'set-map-file', map);
    expect(await count(page, 'PASS')).toBe(rows);
    expect(await count(page, 'FAIL')).toBe(0);
    expect(await count(page, 'GAP')).toBe(0);
    const names = new Set(entries(port).filter((name) => name.startsWith('layers.')));
    await expect(byTestId(page, 'map-in-force').textContent()).resolves.toContain(`port.map.json`);
    await expect(byTestId(page, 'map-in-force').textContent()).resolves.toContain(`${names.size} mapped · 0 unmapped on purpose`);
    const visible = await page.$$eval('[data-testid="boundary-row"]', (items) => items.map((item) => item.getAttribute('data-verdict')));
    expect(visible.length).toBeGreaterThan(10);
    expect(visible.every((verdict) => verdict === 'PASS')).toBe(true);

    // A bad contracts file is refused with its file and field; what is in force stays.
    const bad = join(root, 'bad.contracts.json');
    writeFileSync(bad, JSON.stringify({ schema: 'trace-inspector.contracts', schema_version: 1, rules: [{ boundaries: '*', contract: 'roughly' }] }));
    await setFile(page, 'set-contracts-file', bad);
    expect((await errorTexts(page)).some((text) => text.includes(`${bad}: rules[0].contract`))).toBe(true);
    await expect(byTestId(page, 'contracts-in-force').textContent()).resolves.toContain('bit_exact for every boundary');

    const contracts = join(root, 'port.contracts.json');
    writeFileSync(contracts, JSON.stringify({ schema: 'trace-inspector.contracts', schema_version: 1, rules: [{ boundaries: '*', contract: 'bit_exact' }] }));
    await setFile(page, 'set-contracts-file', contracts);
    await expect(byTestId(page, 'contracts-in-force').textContent()).resolves.toContain('port.contracts.json');
    expect(await count(page, 'PASS')).toBe(rows);
    await screenshot(page, 'two-bundles-mapped');

    // The receipt is compare's over both bundles and the files in force; it verifies here.
    await byTestId(page, 'tab-receipt').click();
    await expect(byTestId(page, 'receipt-what').textContent()).resolves.toContain('signs a compare of the open bundle and the opened run');
    await byTestId(page, 'btn-export-receipt').click();
    const exported = byTestId(page, 'receipt-export-result');
    await exported.waitFor({ timeout: 120_000 });
    expect(await exported.getAttribute('data-overall')).toBe('PASSED');
    expect(await exported.textContent()).toContain('compare.dsse.json');
    await byTestId(page, 'btn-verify-exported').click();
    await byTestId(page, 'btn-verify-receipt').click();
    await page.waitForSelector('[data-testid="receipt-verify-result"][data-ok="true"]', { timeout: 60_000 });
    const checks = (await byTestId(page, 'receipt-verify-result').textContent()) ?? '';
    for (const subject of ['first/manifest.json', 'port/manifest.json', 'port.map.json', 'port.contracts.json']) expect(checks).toContain(subject);

    // Declared unmapped on purpose: listed with its reason, and the reference's boundaries it covered are missing, not passed.
    const partial = join(root, 'partial.map.json');
    writeFileSync(
      partial,
      JSON.stringify({
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        unmapped: [{ candidate: 'layers.*', reason: 'the port fuses its layer outputs' }],
      }),
    );
    await setFile(page, 'set-map-file', partial);
    await expect(byTestId(page, 'map-in-force').textContent()).resolves.toContain(`0 mapped · ${names.size} unmapped on purpose`);
    await byTestId(page, 'map-report').locator('summary').click();
    const listed = await page.$$eval('[data-testid="map-unmapped"]', (items) => items.map((item) => item.textContent ?? ''));
    expect(listed).toHaveLength(names.size);
    expect(listed.every((text) => text.includes('the port fuses its layer outputs'))).toBe(true);
    expect(await count(page, 'FAIL')).toBe(renamed);
    expect(await count(page, 'GAP')).toBe(0);

    await byTestId(page, 'clear-map-file').click();
    await waitIdle(page);
    expect(await count(page, 'FAIL')).toBe(renamed);
    await expect(byTestId(page, 'map-in-force').textContent()).resolves.toContain('none');
  });
});

// The inspector end to end: the built renderer in Debian's Chromium, talking to the real
// `trace-inspector serve` (real core, real reference engine, committed fixtures). Every figure the
// page shows that a test checks is recomputed here from the bundles on disk, independently of the
// code that produced it. Screenshots of the main views go to test-artifacts/e2e on every run.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { openCaptureInProgress } from '../../main/core/bundle/capture-in-progress.ts';
import { referenceBundle } from '../helpers/paths.ts';
import { byTestId, errorTexts, openByPath, passIndicator, runControl, setEngineOptions, visibleRows, waitIdle } from './e2e-pages.ts';
import { openInspector, screenshot, type Inspector, type ServeProcess } from './serve-harness.ts';

// A flow drives the real engine through several passes in a real browser.
vi.setConfig({ testTimeout: 240_000 });

let inspector: Inspector;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  inspector = await openInspector({ navigate: true });
  ({ serve, page, pageErrors } = inspector);
}, 180_000);

afterAll(async () => {
  await inspector?.close();
});

/** The native bundle the session is writing or wrote last (newest folder of the work dir). */
async function latestNative(): Promise<TraceBundle> {
  const folders = readdirSync(serve.workDir)
    .map((name) => join(serve.workDir, name))
    .filter((path) => statSync(path).isDirectory() && (existsSync(join(path, 'manifest.json')) || existsSync(join(path, 'capture.journal.jsonl'))))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const newest = folders[0];
  if (newest === undefined) throw new Error(`no native bundle under ${serve.workDir}`);
  return existsSync(join(newest, 'manifest.json')) ? openBundle(newest) : openCaptureInProgress(newest);
}

const AudioLogSchema = z.array(z.object({ what: z.string(), frames: z.number(), sampleRate: z.number() }));

/** What the page's audio module logged: one entry per buffer source that actually finished playing. */
async function audioLog(target: Page): Promise<z.infer<typeof AudioLogSchema>> {
  return AudioLogSchema.parse(await target.evaluate('window.__traceInspectorAudioLog ?? []'));
}

/** float32 bits as the inspector prints them, computed here from the raw bytes. */
function f32Hex(data: Uint8Array, flatIndex: number): string {
  const bits = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(flatIndex * 4, true);
  return `0x${bits.toString(16).padStart(8, '0')}`;
}

/** ULP distance of two float32 patterns on the ordered integer line (+0 and -0 one point). */
function f32UlpDistance(a: number, b: number): number {
  const ordered = (bits: number): number => (bits & 0x80000000 ? -(bits & 0x7fffffff) : bits);
  return Math.abs(ordered(a) - ordered(b));
}

describe('the embedded default', () => {
  it('opens with the reference engine and its default case, and fills in verdicts pass by pass', async () => {
    await expect(byTestId(page, 'engine-summary').textContent()).resolves.toContain('ti-reference');
    await expect(byTestId(page, 'bundle-summary').textContent()).resolves.toContain('interleaved');
    expect(await passIndicator(page)).toBe('no pass run');

    await runControl(page, 'btn-prefill');
    expect(await passIndicator(page)).toBe('prefill 0');
    // The step's reply ends the busy state; its rows follow in a getRows of their own, so wait for
    // them to be drawn rather than read the table in the same instant.
    await expect.poll(async () => (await visibleRows(page)).length, { timeout: 30_000 }).toBeGreaterThan(10);
    const afterPrefill = await visibleRows(page);
    expect(afterPrefill.every((row) => row.id.startsWith('0:'))).toBe(true);
    expect(afterPrefill.every((row) => row.verdict === 'PASS')).toBe(true);

    await runControl(page, 'btn-step');
    await runControl(page, 'btn-step');
    expect(await passIndicator(page)).toBe('decode 2');
    // The rows of the first k passes, as the reference lists their boundaries.
    const reference = await openBundle(referenceBundle('interleaved'));
    const rowsThrough = (passes: number): string => String(reference.passes.slice(0, passes).reduce((sum, pass) => sum + pass.boundaries.length, 0));
    await reference.close();
    const rowCount = () => byTestId(page, 'boundary-table').getAttribute('data-row-count');
    await expect.poll(rowCount, { timeout: 30_000 }).toBe(rowsThrough(3));
    // The keyboard drives the same controls: "n" steps once more.
    await page.locator('body').press('n');
    await waitIdle(page);
    expect(await passIndicator(page)).toBe('decode 3');
    await expect.poll(rowCount, { timeout: 30_000 }).toBe(rowsThrough(4));
    const failCount = await byTestId(page, 'verdict-counts').locator('[data-verdict="FAIL"]').textContent();
    expect(failCount?.trim().endsWith(' 0')).toBe(true);
    await screenshot(page, '01-default-stepped');

    // A renderer reload loses nothing: the core keeps the session and the page rebuilds from it.
    await page.reload();
    await waitIdle(page);
    expect(await passIndicator(page)).toBe('decode 3');
    await expect.poll(rowCount, { timeout: 30_000 }).toBe(rowsThrough(4));
  });
});

describe('a perturbed run', () => {
  it('stops at the first divergence, highlights it, and shows the right element bits', async () => {
    // The first decode rotates its keys one position too far: the prefill is untouched, the
    // first attention layer's key append of pass 1 is the first boundary that differs.
    await openByPath(page, 'open-bundle', referenceBundle('greedy'));
    await setEngineOptions(page, 'perturb.kv_position_off_by_one=1');
    await expect(byTestId(page, 'engine-options').inputValue()).resolves.toBe('perturb.kv_position_off_by_one=1');
    await runControl(page, 'btn-run-divergence');
    expect(await passIndicator(page)).toBe('decode 1');

    await page.locator('body').press('g');
    const first = page.locator('[data-testid="boundary-row"][data-first-divergence="true"]');
    await first.waitFor();
    expect(await first.getAttribute('data-row-id')).toBe('1:backbone.l2.k_append');
    expect(await first.getAttribute('data-verdict')).toBe('FAIL');
    await first.click();

    await byTestId(page, 'tab-tensor').click();
    const heatmap = byTestId(page, 'heatmap').first();
    await page.waitForSelector('[data-testid="heatmap"][data-heatmap-painted]', { timeout: 60_000 });
    expect(await heatmap.getAttribute('data-heatmap-view')).toContain('backbone.l2.k_append');
    await screenshot(page, '02-first-divergence-heatmap');

    // Click the middle of the plot: the bit inspector opens at that cell's worst element.
    const box = await heatmap.locator('.nsewdrag').first().boundingBox();
    expect(box).not.toBeNull();
    if (box === null) return;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const inspector = byTestId(page, 'bit-inspector');
    await expect.poll(() => inspector.getAttribute('data-flat-index'), { timeout: 30_000 }).toMatch(/^\d+$/);
    await expect.poll(() => byTestId(page, 'bit-nat-hex').textContent(), { timeout: 30_000 }).toMatch(/^0x/);
    const flatIndex = Number(await inspector.getAttribute('data-flat-index'));

    const reference = await openBundle(referenceBundle('greedy'));
    const native = await latestNative();
    try {
      const entry = reference.boundary(1, 'backbone.l2.k_append');
      expect(entry?.dtype).toBe('F32');
      const referenceData = (await reference.readBoundary(1, 'backbone.l2.k_append')).data;
      const nativeData = (await native.readBoundary(1, 'backbone.l2.k_append')).data;
      const referenceHex = f32Hex(referenceData, flatIndex);
      const nativeHex = f32Hex(nativeData, flatIndex);
      expect((await byTestId(page, 'bit-ref-hex').textContent())?.trim()).toBe(referenceHex);
      expect((await byTestId(page, 'bit-nat-hex').textContent())?.trim()).toBe(nativeHex);
      // The click landed on a cell whose worst element really differs.
      expect(nativeHex).not.toBe(referenceHex);
      const ulp = f32UlpDistance(Number.parseInt(referenceHex, 16), Number.parseInt(nativeHex, 16));
      expect((await byTestId(page, 'bit-ulp').textContent())?.replace(/[^0-9]/g, '')).toBe(String(ulp));
      const referenceValue = new DataView(referenceData.buffer, referenceData.byteOffset).getFloat32(flatIndex * 4, true);
      // The decimal is the shortest text that reads back to the same float32.
      expect(Math.fround(Number((await byTestId(page, 'bit-ref-decimal').textContent())?.trim()))).toBe(referenceValue);
    } finally {
      await reference.close();
      await native.close();
    }
    await screenshot(page, '03-bit-inspector');
    await runControl(page, 'btn-reset');
    await setEngineOptions(page, '');
  });
});

describe('special values', () => {
  it('jumps to the first NaN in execution order', async () => {
    await openByPath(page, 'open-bundle', referenceBundle('nan_inf'));
    await runControl(page, 'btn-prefill');
    await byTestId(page, 'tab-specials').click();
    await byTestId(page, 'btn-first-nan').click();
    await byTestId(page, 'first-special-result').waitFor();

    // Independently: the first F32 element that is NaN, walking the prefill's records in the
    // order the engine emitted them (the manifest lists them in that order).
    const native = await latestNative();
    let expected: { boundary: string; flatIndex: number } | null = null;
    try {
      for (const entry of native.passes[0]?.boundaries ?? []) {
        if (entry.dtype !== 'F32') continue;
        const data = (await native.readBoundary(0, entry.name)).data;
        const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
        for (let index = 0; index < data.byteLength / 4; index += 1) {
          if (Number.isNaN(view.getFloat32(index * 4, true))) {
            expected = { boundary: entry.name, flatIndex: index };
            break;
          }
        }
        if (expected !== null) break;
      }
    } finally {
      await native.close();
    }
    expect(expected).not.toBeNull();
    if (expected === null) return;
    const note = (await byTestId(page, 'first-special-result').textContent()) ?? '';
    expect(note).toContain(`pass 0 ${expected.boundary} element ${expected.flatIndex}`);
    await expect.poll(() => byTestId(page, 'bit-inspector').getAttribute('data-flat-index'), { timeout: 30_000 }).toBe(String(expected.flatIndex));
    await expect.poll(() => byTestId(page, 'bit-nat-decimal').textContent(), { timeout: 30_000 }).toMatch(/nan/i);
    await screenshot(page, '04-first-nan');
  });
});

describe('audio', () => {
  it('plays reference, native and X through WebAudio and keeps the ABX score', async () => {
    await openByPath(page, 'open-bundle', referenceBundle('speech'));
    await runControl(page, 'btn-run-end');
    expect(await passIndicator(page)).toMatch(/^decode \d+$/);
    await byTestId(page, 'tab-audio').click();
    await byTestId(page, 'audio-metrics').waitFor();
    await screenshot(page, '05-audio');

    const played = async (what: string): Promise<void> => {
      await expect.poll(async () => (await audioLog(page)).some((entry) => entry.what === what), { timeout: 60_000 }).toBe(true);
    };
    await byTestId(page, 'btn-play-reference').click();
    await played('reference');
    await byTestId(page, 'btn-play-native').click();
    await played('native');

    const score = byTestId(page, 'abx-score');
    expect(await score.getAttribute('data-trials')).toBe('0');
    await byTestId(page, 'abx-play-x').click();
    await played('x');
    await byTestId(page, 'abx-answer-a').click();
    await expect.poll(() => score.getAttribute('data-trials'), { timeout: 30_000 }).toBe('1');
    const correct = Number(await score.getAttribute('data-correct'));
    expect([0, 1]).toContain(correct);
    expect(await score.textContent()).toContain(`${correct}/1`);

    const log = await audioLog(page);
    const reference = log.find((entry) => entry.what === 'reference');
    expect(reference?.sampleRate).toBe(24_000);
    expect(reference?.frames).toBeGreaterThan(0);
  });
});

describe('receipts', () => {
  it('exports a signed receipt, verifies it, and refuses a tampered copy', async () => {
    await byTestId(page, 'tab-receipt').click();
    await byTestId(page, 'btn-export-receipt').click();
    const exported = byTestId(page, 'receipt-export-result');
    await exported.waitFor({ timeout: 120_000 });
    expect(await exported.getAttribute('data-fidelity')).toBe('OK');
    expect(await byTestId(page, 'receipt-seals').textContent()).toContain('FIDELITY: OK');

    // "verify this receipt" fills the verify form with the envelope and the signer's key.
    await byTestId(page, 'btn-verify-exported').click();
    await byTestId(page, 'btn-verify-receipt').click();
    const result = byTestId(page, 'receipt-verify-result');
    await page.waitForSelector('[data-testid="receipt-verify-result"][data-ok="true"]', { timeout: 60_000 });
    await screenshot(page, '06-receipt-verified');

    // Tamper: flip one character of the signature and verify the pasted text.
    const envelopeText = await byTestId(page, 'receipt-envelope').inputValue();
    expect(envelopeText).toContain('payloadType');
    const envelope = JSON.parse(envelopeText) as { signatures: { sig: string }[] };
    const signature = envelope.signatures[0];
    if (signature === undefined) throw new Error('the exported envelope has no signature');
    signature.sig = (signature.sig.startsWith('A') ? 'B' : 'A') + signature.sig.slice(1);
    await byTestId(page, 'receipt-envelope').fill(JSON.stringify(envelope));
    await byTestId(page, 'btn-verify-receipt').click();
    await page.waitForSelector('[data-testid="receipt-verify-result"][data-ok="false"]', { timeout: 60_000 });
    expect((await result.textContent())?.toLowerCase()).toContain('signature');
  });
});

describe('provenance', () => {
  it('shows the bundles with their digests and the fixture inventory', async () => {
    await byTestId(page, 'tab-provenance').click();
    const panel = byTestId(page, 'provenance-panel');
    await panel.waitFor();
    await expect.poll(() => panel.textContent(), { timeout: 30_000 }).toContain('consumed');
    const text = (await panel.textContent()) ?? '';
    expect(text).toContain(referenceBundle('speech'));
    await screenshot(page, '07-provenance');
  });

  it('kept running without a page error through every flow', () => {
    expect(pageErrors).toEqual([]);
  });

  it('has no unexpected errors listed', async () => {
    expect(await errorTexts(page)).toEqual([]);
  });
});

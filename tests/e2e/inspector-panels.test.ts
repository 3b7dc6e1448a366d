// The panels a failing gate sends an engineer to, end to end in Chromium against the real serve
// mode: a heatmap zoom asks the core for a finer slice; the fp64 oracle changes the numbers but
// not the gate's verdict; layer isolation runs and plots; a WAV export downloads a real 24 kHz file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { freshTempDir, referenceBundle } from '../helpers/paths.ts';
import { byTestId, openByPath, runControl, waitIdle } from './e2e-pages.ts';
import { openInspector, screenshot, type Inspector } from './serve-harness.ts';

vi.setConfig({ testTimeout: 240_000 });

let inspector: Inspector;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  inspector = await openInspector({ navigate: true });
  ({ page, pageErrors } = inspector);
  await openByPath(page, 'open-bundle', referenceBundle('speech'));
  await runControl(page, 'btn-run-end');
}, 240_000);

afterAll(async () => {
  await inspector?.close();
});

/** Shows one row through the text filter and selects it. */
async function selectRow(rowId: string): Promise<void> {
  const boundary = rowId.slice(rowId.indexOf(':') + 1);
  await byTestId(page, 'filter-text').fill(boundary);
  const row = page.locator(`[data-testid="boundary-row"][data-row-id="${rowId}"]`);
  await row.click();
}

interface ShownWindow {
  row0: number;
  row1: number;
  col0: number;
  col1: number;
  rowStep: number;
  colStep: number;
}

async function shownWindow(): Promise<ShownWindow | null> {
  const text = await byTestId(page, 'heatmap').first().getAttribute('data-heatmap-window');
  if (text === null) return null;
  const [row0, row1, col0, col1, rowStep, colStep] = text.split(':').map(Number) as [number, number, number, number, number, number];
  return { row0, row1, col0, col1, rowStep, colStep };
}

describe('tensor view', () => {
  it('zooming a heatmap asks the core for a finer window', async () => {
    await selectRow('0:frontend.frames');
    await byTestId(page, 'tab-tensor').click();
    await page.waitForSelector('[data-testid="heatmap"][data-heatmap-painted]', { timeout: 60_000 });
    const reference = await openBundle(referenceBundle('speech'));
    const shape = reference.boundary(0, 'frontend.frames')?.shape ?? [];
    await reference.close();
    const cols = shape.at(-1) ?? 0;
    const whole = await shownWindow();
    expect(whole).not.toBeNull();
    if (whole === null) return;
    expect(whole.col1 - whole.col0).toBe(cols);
    // The whole tensor does not fit the plot's pixel budget: it arrives pooled.
    expect(whole.colStep).toBeGreaterThan(1);

    // Drag a box over the left fifth of the plot: Plotly zooms, the view asks for that window.
    const box = await byTestId(page, 'heatmap').first().locator('.nsewdrag').first().boundingBox();
    expect(box).not.toBeNull();
    if (box === null) return;
    await page.mouse.move(box.x + box.width * 0.05, box.y + box.height * 0.1);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.15, box.y + box.height * 0.5, { steps: 8 });
    await page.mouse.move(box.x + box.width * 0.25, box.y + box.height * 0.9, { steps: 8 });
    await page.mouse.up();
    await expect.poll(async () => (await shownWindow())?.colStep, { timeout: 30_000 }).toBe(1);
    const zoomed = await shownWindow();
    expect(zoomed).not.toBeNull();
    if (zoomed === null) return;
    expect(zoomed.col0).toBeGreaterThanOrEqual(whole.col0);
    expect(zoomed.col1).toBeLessThanOrEqual(whole.col1);
    expect(zoomed.col1 - zoomed.col0).toBeLessThan(whole.col1 - whole.col0);
    await screenshot(page, '10-heatmap-zoomed');
  });
});

describe('oracle choice', () => {
  it('fp64 changes the numbers shown, not the verdict', async () => {
    await selectRow('0:frontend.power');
    const row = page.locator('[data-testid="boundary-row"][data-row-id="0:frontend.power"]');
    const before = { text: await row.textContent(), verdict: await row.getAttribute('data-verdict') };
    await byTestId(page, 'select-oracle').selectOption('fp64');
    await waitIdle(page);
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).not.toBe(before.text);
    expect(await row.getAttribute('data-verdict')).toBe(before.verdict);
    await byTestId(page, 'select-oracle').selectOption('reference');
    await waitIdle(page);
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toBe(before.text);
  });
});

describe('layer isolation', () => {
  it('runs the isolated capture and plots local against accumulated error', async () => {
    await byTestId(page, 'filter-text').fill('');
    await byTestId(page, 'tab-isolation').click();
    await byTestId(page, 'btn-run-isolation').click();
    const panel = byTestId(page, 'isolation-panel');
    await expect.poll(() => panel.textContent(), { timeout: 180_000 }).toMatch(/\d+ boundaries/);
    await page.waitForSelector('[data-testid="isolation-panel"] .js-plotly-plot', { timeout: 60_000 });
    expect(await panel.locator('tbody tr').count()).toBeGreaterThan(0);
    await screenshot(page, '11-layer-isolation');
  });
});

describe('audio export', () => {
  it('downloads the reference PCM as a 24 kHz WAV file', async () => {
    await byTestId(page, 'tab-audio').click();
    await byTestId(page, 'audio-metrics').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), byTestId(page, 'btn-wav-reference').click()]);
    const file = join(freshTempDir('e2e-wav'), download.suggestedFilename());
    await download.saveAs(file);
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString('latin1')).toBe('WAVE');
    expect(bytes.readUInt32LE(24)).toBe(24_000);
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    expect(pageErrors).toEqual([]);
  });
});

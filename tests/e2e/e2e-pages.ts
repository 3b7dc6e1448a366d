// Page-level steps the end-to-end tests share: waiting for the core to go idle, opening things by
// path, reading the table. They click and type as an engineer would; nothing calls the API behind
// the page's back.
import type { Locator, Page } from 'playwright-core';

export const byTestId = (page: Page | Locator, id: string): Locator => page.locator(`[data-testid="${id}"]`);

/** Waits until the page is connected and the core reports no running operation. */
export async function waitIdle(page: Page, timeoutMs = 120_000): Promise<void> {
  // Attached, not visible: the idle indicator is an empty (zero-size) element.
  await page.waitForSelector('[data-testid="connection-state"][data-state="connected"]', { state: 'attached', timeout: timeoutMs });
  await page.waitForSelector('[data-testid="busy-indicator"][data-busy="false"]', { state: 'attached', timeout: timeoutMs });
}

/** Clicks a run control and waits until the operation it started has finished. */
export async function runControl(page: Page, testId: string): Promise<void> {
  await byTestId(page, testId).click();
  // The busy flag may flip and clear between two polls; the idle wait is what matters.
  await waitIdle(page);
}

/** Types a path into one of the session bar's open-by-path forms and submits it. */
export async function openByPath(page: Page, formTestId: 'open-engine' | 'open-bundle' | 'open-run', path: string): Promise<void> {
  const form = byTestId(page, formTestId);
  await form.locator('input').fill(path);
  await form.locator('button[type="submit"]').click();
  await waitIdle(page);
}

export async function setEngineOptions(page: Page, text: string): Promise<void> {
  await byTestId(page, 'engine-options').fill(text);
  await byTestId(page, 'engine-options').press('Enter');
  await waitIdle(page);
}

/** The rows the table has rendered right now (virtualised: only the visible ones). */
export async function visibleRows(page: Page): Promise<{ id: string; verdict: string; first: boolean }[]> {
  return page.$$eval('[data-testid="boundary-row"]', (rows) =>
    rows.map((row) => ({
      id: row.getAttribute('data-row-id') ?? '',
      verdict: row.getAttribute('data-verdict') ?? '',
      first: row.getAttribute('data-first-divergence') === 'true',
    })),
  );
}

export async function passIndicator(page: Page): Promise<string> {
  return (await byTestId(page, 'pass-indicator').textContent())?.trim() ?? '';
}

export async function errorTexts(page: Page): Promise<string[]> {
  return page.$$eval('[data-testid="error-item"]', (items) => items.map((item) => item.textContent ?? ''));
}

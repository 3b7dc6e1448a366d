// The boundary table's sorting and filtering in Chromium, on a small opened run whose verdicts,
// stages and names vary: header clicks cycle descending / ascending / execution order (names
// compared alphanumerically: op2 before op10), and the stage, verdict, kind and text filters show
// exactly the rows they should. The expected orders are computed here from the bundle spec.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bitExact, dummyWeights, faithful } from '../gate/gate-fixtures.ts';
import { writeBundle, type PassSpec, type TensorSpec } from '../helpers/bundle-builder.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { byTestId, openByPath } from './e2e-pages.ts';
import { openInspector, type Inspector } from './serve-harness.ts';

vi.setConfig({ testTimeout: 120_000 });

const NAMES = ['blk.op10', 'blk.op2', 'Blk.op1', 'attn.op3', 'attn.op20', 'mlp.op7'];
/** Boundaries (by index) whose native differs beyond the contract: FAIL. */
const FAILING = new Set([1, 4]);

let inspector: Inspector;
let page: Page;
let pageErrors: string[];

function writeRun(root: string): { reference: string; native: string } {
  const weights = dummyWeights(root);
  const inputs = [{ name: 'prompt_tokens', dtype: 'I32' as const, shape: [1], data: new Uint8Array(Int32Array.from([1]).buffer) }];
  const side = (native: boolean): PassSpec[] =>
    [0, 1].map((pass) => ({
      kind: pass === 0 ? 'prefill' : 'decode',
      mode: 'text',
      boundaries: NAMES.map((name, i): TensorSpec => {
        const values = Float32Array.from({ length: 8 }, (_, k) => Math.sin(pass + i + k));
        if (native && FAILING.has(i)) values[2] = (values[2] ?? 0) + 0.5;
        const data = new Uint8Array(values.buffer);
        const spec = { name, stage: i < 3 ? 'early' : 'late', dtype: 'F32' as const, shape: [2, 4], data };
        return native ? spec : { ...spec, contract: i % 2 === 0 ? bitExact : faithful(1e-5, 1e-5) };
      }),
    }));
  const common = { caseId: 'sort-filter', weightsFile: weights.file, weightsSha256: weights.sha256, inputs };
  return {
    reference: writeBundle(join(root, 'reference'), { kind: 'reference', ...common, passes: side(false) }),
    native: writeBundle(join(root, 'native'), { kind: 'native', ...common, passes: side(true) }),
  };
}

const shownIds = (): Promise<string[]> => page.$$eval('[data-testid="boundary-row"]', (rows) => rows.map((row) => row.getAttribute('data-row-id') ?? ''));
const header = (name: string) => page.locator('[role="columnheader"]', { hasText: new RegExp(`^${name}`) });
const executionOrder = [0, 1].flatMap((pass) => NAMES.map((name) => `${pass}:${name}`));
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
/** Stable sort by name, ties in execution order. */
const byName = (sign: number): string[] =>
  executionOrder
    .map((id, order) => ({ id, order, name: id.slice(id.indexOf(':') + 1) }))
    .sort((a, b) => sign * collator.compare(a.name, b.name) || a.order - b.order)
    .map((entry) => entry.id);

beforeAll(async () => {
  const dirs = writeRun(freshTempDir('e2e-sort-filter'));
  inspector = await openInspector({ navigate: true });
  ({ page, pageErrors } = inspector);
  await openByPath(page, 'open-bundle', dirs.reference);
  await openByPath(page, 'open-run', dirs.native);
  await page.waitForSelector(`[data-testid="boundary-table"][data-row-count="${executionOrder.length}"]`, { timeout: 30_000 });
}, 180_000);

afterAll(async () => {
  await inspector?.close();
});

describe('the boundary table', () => {
  it('sorts by a header: descending, ascending, then execution order again', async () => {
    expect(await shownIds()).toEqual(executionOrder);
    await header('boundary').click();
    expect(await shownIds()).toEqual(byName(-1));
    await expect(header('boundary').getAttribute('aria-sort')).resolves.toBe('descending');
    await header('boundary').click();
    expect(await shownIds()).toEqual(byName(1));
    await header('boundary').click();
    expect(await shownIds()).toEqual(executionOrder);
    // Verdict: the worst first, ties in execution order.
    await header('verdict').click();
    const failing = executionOrder.filter((id) => FAILING.has(NAMES.indexOf(id.slice(2))));
    expect(await shownIds()).toEqual([...failing, ...executionOrder.filter((id) => !failing.includes(id))]);
    await header('verdict').click();
    await header('verdict').click();
    expect(await shownIds()).toEqual(executionOrder);
  });

  it('filters by verdict, stage, kind and text, and counts what it shows', async () => {
    const failing = executionOrder.filter((id) => FAILING.has(NAMES.indexOf(id.slice(2))));
    await byTestId(page, 'filter-verdict').selectOption('FAIL');
    expect(await shownIds()).toEqual(failing);
    await expect(byTestId(page, 'row-count').textContent()).resolves.toBe(`${failing.length} / ${executionOrder.length} rows`);
    await byTestId(page, 'filter-verdict').selectOption('not_pass');
    expect(await shownIds()).toEqual(failing);
    await byTestId(page, 'filter-verdict').selectOption('');

    await byTestId(page, 'filter-stage').selectOption('late');
    expect(await shownIds()).toEqual(executionOrder.filter((id) => NAMES.indexOf(id.slice(2)) >= 3));
    await byTestId(page, 'filter-stage').selectOption('');

    // The failing rows' kind is the only one offered; choosing it shows exactly them.
    const kinds = (
      await byTestId(page, 'filter-kind')
        .locator('option')
        .evaluateAll((options) => options.map((option) => option.getAttribute('value') ?? ''))
    ).filter((value) => value !== '');
    expect(kinds).toHaveLength(1);
    await byTestId(page, 'filter-kind').selectOption(kinds[0] ?? '');
    expect(await shownIds()).toEqual(failing);
    await byTestId(page, 'filter-kind').selectOption('');

    // Text: case-insensitive, over the name (and stage, contract, kind, reason).
    await byTestId(page, 'filter-text').fill('BLK.OP');
    expect(await shownIds()).toEqual(executionOrder.filter((id) => id.toLowerCase().includes('blk.op')));
    await byTestId(page, 'filter-text').fill('bit_exact');
    expect(await shownIds()).toEqual(executionOrder.filter((id) => NAMES.indexOf(id.slice(2)) % 2 === 0));
    await byTestId(page, 'filter-text').fill('');
    expect(await shownIds()).toEqual(executionOrder);
    expect(pageErrors).toEqual([]);
  });
});

// The views on the committed nan_inf case: its NaN enters at audio-in row 1 element 5 (prompt
// position 3) and its +inf at row 2 element 17 (position 4), so in backbone.embed [8, 64] of
// pass 0 they sit at flat 3 * 64 + 5 = 197 and 4 * 64 + 17 = 273, the first ones in execution
// order. The fp64 oracle stands in for a native run (same structure, its own values).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { elementAt } from '../../main/core/inspect/element-bits.ts';
import { findFirstSpecial } from '../../main/core/inspect/first-special.ts';
import { specials } from '../../main/core/inspect/special-values.ts';
import { pooledView } from './decoded-view.ts';
import type { BoundaryRef } from '../../preload/inspector-api.ts';
import { oracleBundle, referenceBundle } from '../helpers/paths.ts';

let reference: TraceBundle;
let oracle: TraceBundle;
let order: BoundaryRef[];

beforeAll(async () => {
  reference = await openBundle(referenceBundle('nan_inf'));
  oracle = await openBundle(oracleBundle('nan_inf'));
  order = reference.passes.flatMap((pass) => pass.boundaries.map((boundary) => ({ pass: pass.index, boundary: boundary.name })));
});

afterAll(async () => {
  await reference.close();
  await oracle.close();
});

describe('the nan_inf fixture', () => {
  it('finds its first NaN and first infinity in backbone.embed of the prefill', async () => {
    expect(await findFirstSpecial(null, reference, order, 'nan')).toEqual({ pass: 0, boundary: 'backbone.embed', flatIndex: 197, side: 'reference' });
    expect(await findFirstSpecial(null, reference, order, 'inf')).toEqual({ pass: 0, boundary: 'backbone.embed', flatIndex: 273, side: 'reference' });
    expect(await findFirstSpecial(oracle, reference, order, 'nan')).toMatchObject({ flatIndex: 197, side: 'native' });
  });

  it('shows that element as a NaN and its cell as a NaN cell', async () => {
    const element = await elementAt(oracle, reference, { pass: 0, boundary: 'backbone.embed', flatIndex: 197 });
    expect(element.index).toEqual([3, 5]);
    expect(element.reference?.class).toBe('nan');
    expect(element.reference?.decimal).toBe('NaN');
    const view = await pooledView(null, reference, { pass: 0, boundary: 'backbone.embed', metric: 'reference', maxRows: 4, maxCols: 8 });
    expect(view.grid).toEqual({ rows: 4, cols: 8, rowStep: 2, colStep: 8 });
    expect(view.nanCells).toContain(1 * 8 + 0);
    expect(view.argmax[8]).toBe(197);
    expect(view.infCells).toContain(2 * 8 + 2);
    expect(view.values.slice(0, 8).every((value) => Number.isFinite(value))).toBe(true); // positions 0-1 stay finite
  });

  it('counts the special values of both sides', async () => {
    const out = await specials(oracle, reference, { pass: 0, boundary: 'backbone.embed' }, 50);
    expect(out.census.reference.nan).toBeGreaterThanOrEqual(1);
    expect(out.census.reference.posInf).toBeGreaterThanOrEqual(1);
    expect(out.census.native.nan).toBe(out.census.reference.nan);
    expect(out.mismatches.every((m) => m.class === 'value')).toBe(true);
  });
});

// The boundary table's model: which rows show (row-filter.ts) and in which order (table-model.ts).
import { describe, expect, it } from 'vitest';
import { visibleOrder } from '../../renderer/src/components/table/table-model.ts';
import { rowFilter } from '../../renderer/src/store/row-filter.ts';
import { initialFiltersSlice, type FiltersSlice } from '../../renderer/src/store/slices/filters-slice.ts';
import { row } from './rows.ts';

const NO_FILTER = initialFiltersSlice.filters;
const filters = (change: Partial<FiltersSlice['filters']>): FiltersSlice['filters'] => ({ ...NO_FILTER, ...change });

const ROWS = [
  row(0, { boundary: 'embed', stage: 'frontend', pass: 0 }),
  row(1, { boundary: 'op10', pass: 0, verdict: 'FAIL', kind: 'value', mismatches: 3, maxAbs: 0.5 }),
  row(2, { boundary: 'op2', pass: 1, verdict: 'GAP', reason: 'no oracle bundle was given' }),
  row(3, { boundary: 'Detok.pcm', stage: 'detok', pass: 1, verdict: 'REVIEW_REQUIRED', maxAbs: 'NaN' }),
  row(4, { boundary: 'op3', pass: 1, verdict: 'FAIL', kind: 'nan_vs_number', mismatches: 1, maxAbs: 2 }),
];

describe('rowFilter', () => {
  it('is null when no filter is active, so every row shows without a predicate', () => {
    expect(rowFilter(NO_FILTER)).toBeNull();
    expect(rowFilter(filters({ text: '   ' }))).toBeNull();
  });

  it('keeps only rows that pass every active filter', () => {
    const shown = (change: Partial<FiltersSlice['filters']>): string[] => {
      const keep = rowFilter(filters(change));
      return ROWS.filter((r) => keep === null || keep(r)).map((r) => r.boundary);
    };
    expect(shown({ pass: 1 })).toEqual(['op2', 'Detok.pcm', 'op3']);
    expect(shown({ stage: 'detok' })).toEqual(['Detok.pcm']);
    expect(shown({ verdict: 'FAIL' })).toEqual(['op10', 'op3']);
    expect(shown({ verdict: 'not_pass' })).toEqual(['op10', 'op2', 'Detok.pcm', 'op3']);
    expect(shown({ kind: 'value' })).toEqual(['op10']);
    expect(shown({ verdict: 'FAIL', pass: 1 })).toEqual(['op3']);
  });

  it('matches free text case-insensitively in the name, stage, contract, kind and reason', () => {
    const shown = (text: string): string[] => {
      const keep = rowFilter(filters({ text }));
      return ROWS.filter((r) => keep?.(r) ?? true).map((r) => r.boundary);
    };
    expect(shown('DETOK')).toEqual(['Detok.pcm']);
    expect(shown('frontend')).toEqual(['embed']);
    expect(shown('oracle')).toEqual(['op2']);
    expect(shown('nan_vs')).toEqual(['op3']);
    expect(shown('  op1 ')).toEqual(['op10']);
    expect(shown('nothing like it')).toEqual([]);
  });
});

describe('visibleOrder', () => {
  const names = (order: number[]): string[] => order.map((index) => ROWS[index]?.boundary ?? '?');

  it('keeps execution order without a sort, after the filters', () => {
    expect(visibleOrder(ROWS, NO_FILTER, [])).toEqual([0, 1, 2, 3, 4]);
    expect(visibleOrder(ROWS, filters({ pass: 1 }), [])).toEqual([2, 3, 4]);
  });

  it('sorts text alphanumerically and ignoring case: op2 before op3 before op10', () => {
    expect(names(visibleOrder(ROWS, NO_FILTER, [{ id: 'boundary', desc: false }]))).toEqual(['Detok.pcm', 'embed', 'op2', 'op3', 'op10']);
    expect(names(visibleOrder(ROWS, NO_FILTER, [{ id: 'boundary', desc: true }]))).toEqual(['op10', 'op3', 'op2', 'embed', 'Detok.pcm']);
  });

  it('sorts verdicts by severity and breaks ties by the next criterion, then by execution order', () => {
    expect(names(visibleOrder(ROWS, NO_FILTER, [{ id: 'verdict', desc: true }]))).toEqual(['op10', 'op3', 'Detok.pcm', 'op2', 'embed']);
    expect(
      names(
        visibleOrder(ROWS, NO_FILTER, [
          { id: 'verdict', desc: true },
          { id: 'mismatches', desc: false },
        ]),
      ),
    ).toEqual(['op3', 'op10', 'Detok.pcm', 'op2', 'embed']);
  });

  it('sorts numbers numerically and ignores a column it does not know', () => {
    const byMaxAbs = visibleOrder(ROWS, filters({ verdict: 'FAIL' }), [{ id: 'maxAbs', desc: true }]);
    expect(names(byMaxAbs)).toEqual(['op3', 'op10']);
    expect(visibleOrder(ROWS, NO_FILTER, [{ id: 'no-such-column', desc: true }])).toEqual([0, 1, 2, 3, 4]);
  });
});

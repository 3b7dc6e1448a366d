// Which rows the table shows, in which order: the filters, then the sort, over indices into the
// rows held. Recomputed only when the rows, the filters or the sort change (BoundaryTable's
// useMemo), never while scrolling or selecting. react-table's row models did the same work
// through a Row object per row (closures, getValue caches): ~250 ms for 50k rows before the first
// paint; here a filter is one predicate per row and a sort compares precomputed numeric keys.
import type { SortingState } from '@tanstack/react-table';
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';
import { rowFilter } from '../../store/row-filter.ts';
import type { FiltersSlice } from '../../store/slices/filters-slice.ts';
import { COLUMN_BY_ID, type BoundaryColumn } from './boundary-columns.tsx';

/** Alphanumeric and case-insensitive: "op2" before "op10", as react-table's text sorting was. */
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * One number per shown row: the column's own number, or for text the rank of the row's string
 * among the distinct strings (rows share a few thousand strings, so only those are collated).
 */
function sortKeys(rows: readonly BoundaryRow[], shown: readonly number[], column: BoundaryColumn): Float64Array {
  const keys = new Float64Array(rows.length);
  const texts = new Map<string, number>();
  let numeric = true;
  for (const index of shown) {
    const row = rows[index];
    if (row === undefined) continue;
    const key = column.sortKey(row);
    if (typeof key === 'number') keys[index] = key;
    else {
      numeric = false;
      texts.set(key, 0);
    }
  }
  if (numeric) return keys;
  const ranked = [...texts.keys()].sort(collator.compare);
  ranked.forEach((text, rank) => texts.set(text, rank));
  for (const index of shown) {
    const row = rows[index];
    if (row !== undefined) keys[index] = texts.get(String(column.sortKey(row))) ?? 0;
  }
  return keys;
}

/** Indices into `rows` of the rows shown, in the order shown (ties keep execution order). */
export function visibleOrder(rows: readonly BoundaryRow[], filters: FiltersSlice['filters'], sorting: SortingState): number[] {
  const keep = rowFilter(filters);
  const shown: number[] = [];
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index];
    if (row !== undefined && (keep === null || keep(row))) shown.push(index);
  }
  const criteria = sorting.flatMap((sort) => {
    const column = COLUMN_BY_ID.get(sort.id);
    return column === undefined ? [] : [{ keys: sortKeys(rows, shown, column), sign: sort.desc ? -1 : 1 }];
  });
  if (criteria.length === 0) return shown;
  return shown.sort((a, b) => {
    for (const { keys, sign } of criteria) {
      const ka = keys[a] ?? 0;
      const kb = keys[b] ?? 0;
      if (ka !== kb) return ka < kb ? -sign : sign;
    }
    return a - b;
  });
}

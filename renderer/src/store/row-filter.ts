// The table's filters as one predicate, shared by the table and by jumps that must know whether
// a row would be hidden. The free text is a case-insensitive substring of the name, stage,
// contract, kind or reason. Built once per filter change, not per row: rows share their strings
// (rows-columns.ts), so each distinct string is lower-cased once however many rows hold it.
import type { BoundaryRow } from '../../../protocol/inspector-api.ts';
import type { FiltersSlice } from './slices/filters-slice.ts';

export type RowPredicate = (row: BoundaryRow) => boolean;

function textMatcher(text: string): RowPredicate | null {
  const needle = text.trim().toLowerCase();
  if (needle === '') return null;
  const found = new Map<string, boolean>();
  const has = (field: string): boolean => {
    let hit = found.get(field);
    if (hit === undefined) {
      hit = field.toLowerCase().includes(needle);
      found.set(field, hit);
    }
    return hit;
  };
  return (row) => has(row.boundary) || has(row.stage) || has(row.contract) || has(row.reason) || has(row.kind ?? '');
}

/** Whether a row passes every active filter; null when no filter is active (every row shows). */
export function rowFilter(filters: FiltersSlice['filters']): RowPredicate | null {
  const { stage, verdict, kind, pass } = filters;
  const text = textMatcher(filters.text);
  if (stage === '' && verdict === '' && kind === '' && pass === null && text === null) return null;
  return (row) =>
    (pass === null || row.pass === pass) &&
    (stage === '' || row.stage === stage) &&
    (kind === '' || (row.kind ?? '') === kind) &&
    (verdict === '' || (verdict === 'not_pass' ? row.verdict !== 'PASS' : row.verdict === verdict)) &&
    (text === null || text(row));
}

// The table's free-text filter, shared by the table and by jumps that must know whether a row
// would be hidden: a case-insensitive substring of the name, stage, contract, kind or reason.
import type { BoundaryRow } from '../../../preload/inspector-api.ts';

export function rowMatchesText(row: BoundaryRow, text: string): boolean {
  const needle = text.trim().toLowerCase();
  if (needle === '') return true;
  return [row.boundary, row.stage, row.contract, row.reason, row.kind ?? ''].some((field) => field.toLowerCase().includes(needle));
}

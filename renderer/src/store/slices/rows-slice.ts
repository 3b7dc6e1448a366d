// Per-boundary summaries of the session, in execution order. Summaries are small enough to keep
// here; tensors never are (views fetch what they draw).
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';

export interface RowsSlice {
  rows: BoundaryRow[];
  /** The rowsVersion these rows belong to; -1 before the first fetch. */
  rowsVersion: number;
}

export const initialRowsSlice: RowsSlice = { rows: [], rowsVersion: -1 };

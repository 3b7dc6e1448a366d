// What the engineer is looking at: one boundary of one pass, and optionally one element of it.
export interface SelectionSlice {
  selection: { pass: number; boundary: string } | null;
  /** Row-major flat index into the selected boundary's tensor, for the bit inspector. */
  flatIndex: number | null;
}

export const initialSelectionSlice: SelectionSlice = { selection: null, flatIndex: null };

// Selecting a boundary and an element. Jumps (first divergence, first NaN) also make sure the
// table can show the target: a filter that hides it is cleared.
import type { BoundaryRef } from '../../../../protocol/inspector-api.ts';
import { getState, setState } from '../inspector-store.ts';
import { rowFilter } from '../row-filter.ts';
import { initialFiltersSlice } from '../slices/filters-slice.ts';
import type { PanelName } from '../slices/ui-slice.ts';

export function selectBoundary(pass: number, boundary: string, flatIndex: number | null = null): void {
  const current = getState().selection;
  if (current !== null && current.pass === pass && current.boundary === boundary && flatIndex === null) return;
  setState({ selection: { pass, boundary }, flatIndex });
}

export function selectFlatIndex(flatIndex: number | null): void {
  setState({ flatIndex });
}

/** Selects a boundary that must be visible in the table (clears filters that would hide it). */
export function revealBoundary(target: BoundaryRef, flatIndex: number | null = null, panel: PanelName | null = null): void {
  const state = getState();
  const row = state.rows.find((candidate) => candidate.pass === target.pass && candidate.boundary === target.boundary);
  const visible = rowFilter(state.filters);
  const hidden = row !== undefined && visible !== null && !visible(row);
  setState({
    selection: { pass: target.pass, boundary: target.boundary },
    flatIndex,
    ...(hidden ? { filters: initialFiltersSlice.filters } : {}),
    ...(panel !== null ? { activePanel: panel } : {}),
  });
}

export function jumpToFirstDivergence(): boolean {
  const first = getState().snapshot?.firstDivergence ?? null;
  if (first === null) return false;
  revealBoundary(first);
  return true;
}

// Table filters and sort order.
import type { SortingState, Updater } from '@tanstack/react-table';
import { getState, setState } from '../inspector-store.ts';
import { initialFiltersSlice, type FiltersSlice } from '../slices/filters-slice.ts';

export function setFilter<K extends keyof FiltersSlice['filters']>(key: K, value: FiltersSlice['filters'][K]): void {
  setState((state) => ({ filters: { ...state.filters, [key]: value } }));
}

export function clearFilters(): void {
  setState({ filters: initialFiltersSlice.filters });
}

/** A pass chip toggles "this pass only". */
export function togglePassFilter(pass: number): void {
  setFilter('pass', getState().filters.pass === pass ? null : pass);
}

export function setSorting(updater: Updater<SortingState>): void {
  setState((state) => ({ sorting: typeof updater === 'function' ? updater(state.sorting) : updater }));
}

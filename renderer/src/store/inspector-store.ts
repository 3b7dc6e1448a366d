// The one store: typed slices composed into one state. It holds ids, summaries and UI state;
// actions (./actions) and selectors (./selectors.ts) are module-level functions over it.
import { create } from 'zustand';
import { initialAbxSlice, type AbxSlice } from './slices/abx-slice.ts';
import { initialFiltersSlice, type FiltersSlice } from './slices/filters-slice.ts';
import { initialRowsSlice, type RowsSlice } from './slices/rows-slice.ts';
import { initialSelectionSlice, type SelectionSlice } from './slices/selection-slice.ts';
import { initialSessionSlice, type SessionSlice } from './slices/session-slice.ts';
import { initialUiSlice, type UiSlice } from './slices/ui-slice.ts';

export type InspectorState = SessionSlice & RowsSlice & SelectionSlice & FiltersSlice & UiSlice & AbxSlice;

export const useInspectorStore = create<InspectorState>()(() => ({
  ...initialSessionSlice,
  ...initialRowsSlice,
  ...initialSelectionSlice,
  ...initialFiltersSlice,
  ...initialUiSlice,
  ...initialAbxSlice,
}));

export const getState = useInspectorStore.getState;
export const setState = useInspectorStore.setState;

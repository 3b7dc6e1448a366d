// The boundary table's filters and sort order. Kept in the store so shortcuts and other panels
// (a pass chip, "jump to first divergence") can change them.
import type { SortingState } from '@tanstack/react-table';
import type { WireVerdict } from '../../../../protocol/inspector-api.ts';

/** '' shows every verdict; 'not_pass' everything but PASS. */
export type VerdictFilter = '' | 'not_pass' | WireVerdict;

export interface FiltersSlice {
  filters: {
    stage: string;
    verdict: VerdictFilter;
    /** A mismatch class / failure kind, '' for any. */
    kind: string;
    /** Case-insensitive substring of the boundary name, contract or reason. */
    text: string;
    pass: number | null;
  };
  sorting: SortingState;
}

export const initialFiltersSlice: FiltersSlice = {
  filters: { stage: '', verdict: '', kind: '', text: '', pass: null },
  sorting: [],
};

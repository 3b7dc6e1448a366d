// Per-column alignment for the boundary grid: numbers align right so their digits line up.
import type { RowData } from '@tanstack/react-table';

declare module '@tanstack/react-table' {
  // The type parameters are unused but must match the declaration being augmented.
  interface ColumnMeta<TData extends RowData, TValue> {
    align?: 'left' | 'right';
  }
}

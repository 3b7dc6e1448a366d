// One row of the virtualised boundary grid. Memoised: scrolling re-renders only rows that
// enter the window, selection changes only the two rows involved.
import { flexRender, type Row } from '@tanstack/react-table';
import { memo } from 'react';
import type { BoundaryRow } from '../../../../preload/inspector-api.ts';

interface BoundaryRowViewProps {
  row: Row<BoundaryRow>;
  top: number;
  selected: boolean;
  onSelect: (row: BoundaryRow) => void;
}

export const BoundaryRowView = memo(function BoundaryRowView({ row, top, selected, onSelect }: BoundaryRowViewProps) {
  const boundary = row.original;
  return (
    <div
      role="row"
      className={`grid-row${selected ? ' selected' : ''}${boundary.firstDivergence ? ' first-divergence' : ''}`}
      style={{ transform: `translateY(${top}px)` }}
      data-testid="boundary-row"
      data-row-id={boundary.id}
      data-verdict={boundary.verdict}
      data-first-divergence={boundary.firstDivergence ? 'true' : undefined}
      aria-selected={selected}
      title={boundary.reason}
      onMouseDown={(event) => {
        // Select on press (not click): the instrument reacts at once, and focus stays on the grid.
        if (event.button === 0) onSelect(boundary);
      }}
    >
      {row.getVisibleCells().map((cell) => (
        <div role="cell" key={cell.column.id} className={`grid-cell col-${cell.column.id}${cell.column.columnDef.meta?.align === 'right' ? ' num' : ''}`}>
          {flexRender(cell.column.columnDef.cell, cell.getContext())}
        </div>
      ))}
    </div>
  );
});

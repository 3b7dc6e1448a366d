// One row of the virtualised boundary grid. Memoised on the row object, which stays the same
// until the rows are fetched again: scrolling re-renders only rows that enter the window,
// selection changes only the two rows involved.
import { memo } from 'react';
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';
import { BOUNDARY_COLUMNS } from './boundary-columns.tsx';

interface BoundaryRowViewProps {
  boundary: BoundaryRow;
  top: number;
  selected: boolean;
  onSelect: (row: BoundaryRow) => void;
}

export const BoundaryRowView = memo(function BoundaryRowView({ boundary, top, selected, onSelect }: BoundaryRowViewProps) {
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
      {BOUNDARY_COLUMNS.map((column) => (
        <div role="cell" key={column.id} className={`grid-cell col-${column.id}${column.align === 'right' ? ' num' : ''}`}>
          {column.render === undefined ? String(column.sortKey(boundary)) : column.render(boundary)}
        </div>
      ))}
    </div>
  );
});

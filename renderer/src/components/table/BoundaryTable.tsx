// The boundary table: every (pass, boundary) of the run with its verdict and error summary.
// Filtering and sorting are table-model.ts over indices, recomputed only when the rows, the
// filters or the sort change; @tanstack/react-table keeps the header's sort state (it is given
// no rows: its per-row models cost ~250 ms at 50k rows). Drawing is a fixed-row-height virtual
// grid, so a run of 100k rows scrolls as smoothly as one of 100.
import { flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';
import { useCallback, useEffect, useLayoutEffect, useMemo } from 'react';
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';
import { useCommand } from '../../keyboard/command-registry.ts';
import { warmPlotly } from '../plot/plotly-loader.ts';
import { setSorting } from '../../store/actions/filter-actions.ts';
import { selectBoundary } from '../../store/actions/selection-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectFilters, selectRows, selectRowsVersion, selectSelection, selectSnapshot, selectSorting } from '../../store/selectors.ts';
import { HEADER_COLUMNS } from './boundary-columns.tsx';
import { BoundaryRowView } from './BoundaryRowView.tsx';
import { TableFilters } from './TableFilters.tsx';
import { visibleOrder } from './table-model.ts';
import { useVirtualWindow } from './use-virtual-window.ts';

const ROW_HEIGHT = 20;

/** react-table sees no rows (headers and sort state only); a stable empty list keeps its memos. */
const NO_ROWS: BoundaryRow[] = [];

export function BoundaryTable() {
  const rows = useInspectorStore(selectRows);
  const rowsVersion = useInspectorStore(selectRowsVersion);
  const filters = useInspectorStore(selectFilters);
  const sorting = useInspectorStore(selectSorting);
  const selection = useInspectorStore(selectSelection);
  const snapshot = useInspectorStore(selectSnapshot);

  const table = useReactTable({
    data: NO_ROWS,
    columns: HEADER_COLUMNS,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    manualSorting: true,
    manualFiltering: true,
    // Rows arrive in execution order; "unsorted" means that order.
    enableSortingRemoval: true,
    sortDescFirst: true,
  });

  const order = useMemo(() => visibleOrder(rows, filters, sorting), [rows, filters, sorting]);
  const shownCount = order.length;
  const rowAt = useCallback((position: number): BoundaryRow | undefined => rows[order[position] ?? -1], [rows, order]);
  const { scrollerRef, first, last, onScroll, reveal, pageRows } = useVirtualWindow(shownCount, ROW_HEIGHT);
  const selectedId = selection === null ? null : `${selection.pass}:${selection.boundary}`;
  const selectedIndex = useMemo(() => {
    if (selectedId === null) return -1;
    for (let position = 0; position < order.length; position += 1) if (rowAt(position)?.id === selectedId) return position;
    return -1;
  }, [order, rowAt, selectedId]);

  // Keep the selection in view however it moved (keys, a jump, a click in another panel).
  useEffect(() => {
    if (selectedIndex >= 0) reveal(selectedIndex);
  }, [selectedIndex, reveal]);

  // The benchmark and the e2e tests read when a new rowsVersion reached the DOM.
  useLayoutEffect(() => {
    if (rowsVersion >= 0) document.body.dataset.rowsPaintedAt = String(performance.now());
  }, [rowsVersion]);

  // The table is up: the next thing an engineer opens is a plot, so fetch Plotly while idle.
  const hasRows = rows.length > 0;
  useEffect(() => {
    if (hasRows) warmPlotly();
  }, [hasRows]);

  const onSelect = useCallback((row: BoundaryRow) => selectBoundary(row.pass, row.boundary), []);

  const move = (delta: number): void => {
    if (shownCount === 0) return;
    const from = selectedIndex < 0 ? (delta > 0 ? -1 : shownCount) : selectedIndex;
    const target = rowAt(Math.min(shownCount - 1, Math.max(0, from + delta)));
    if (target !== undefined) onSelect(target);
  };
  useCommand('selectNext', () => move(1));
  useCommand('selectPrevious', () => move(-1));

  const windowRows: { row: BoundaryRow; position: number }[] = [];
  for (let position = first; position < last; position += 1) {
    const row = rowAt(position);
    if (row !== undefined) windowRows.push({ row, position });
  }

  const headerGroup = table.getHeaderGroups()[0];
  const emptyMessage =
    snapshot === null
      ? 'Connecting to the core…'
      : snapshot.bundle === null
        ? 'Open an engine and a reference bundle — or “Open default”.'
        : rows.length === 0
          ? 'No pass has run yet: Prefill (p), Step (n), Run to end (e).'
          : shownCount === 0
            ? 'No row matches the filters.'
            : null;

  return (
    <div className="boundary-table" data-testid="boundary-table" data-rows-version={rowsVersion} data-row-count={shownCount}>
      <TableFilters rows={rows} shown={shownCount} />
      <div className="grid" role="table" aria-rowcount={shownCount}>
        <div className="grid-header" role="row">
          {headerGroup?.headers.map((header) => {
            const sorted = header.column.getIsSorted();
            return (
              <div
                key={header.id}
                role="columnheader"
                className={`grid-cell col-${header.id}${header.column.columnDef.meta?.align === 'right' ? ' num' : ''}${sorted !== false ? ' sorted' : ''}`}
                aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
                onClick={header.column.getToggleSortingHandler()}
                title="Sort (click again to reverse, a third time for execution order)"
              >
                {flexRender(header.column.columnDef.header, header.getContext())}
                {sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}
              </div>
            );
          })}
        </div>
        <div
          className="grid-body"
          ref={scrollerRef}
          onScroll={onScroll}
          tabIndex={0}
          onKeyDown={(event) => {
            // Page keys move the selection a screen at a time (j/k and arrows are global shortcuts).
            if (event.key === 'PageDown' || event.key === 'PageUp') {
              event.preventDefault();
              move(event.key === 'PageDown' ? pageRows : -pageRows);
            }
          }}
        >
          {emptyMessage !== null ? <div className="grid-empty">{emptyMessage}</div> : null}
          <div className="grid-spacer" style={{ height: shownCount * ROW_HEIGHT }}>
            {windowRows.map(({ row, position }) => (
              <BoundaryRowView key={row.id} boundary={row} top={position * ROW_HEIGHT} selected={row.id === selectedId} onSelect={onSelect} />
            ))}
          </div>
        </div>
      </div>
    </div>
  );
}

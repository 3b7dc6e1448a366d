// The boundary table: every (pass, boundary) of the run with its verdict and error summary.
// @tanstack/react-table does sorting and filtering; drawing is a fixed-row-height virtual grid
// so a run of 100k rows scrolls as smoothly as one of 100.
import {
  flexRender,
  getCoreRowModel,
  getFilteredRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnFiltersState,
} from '@tanstack/react-table';
import { useCallback, useEffect, useLayoutEffect, useMemo } from 'react';
import type { BoundaryRow } from '../../../../preload/inspector-api.ts';
import { useCommand } from '../../keyboard/command-registry.ts';
import { setSorting } from '../../store/actions/filter-actions.ts';
import { selectBoundary } from '../../store/actions/selection-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectFilters, selectRows, selectRowsVersion, selectSelection, selectSnapshot, selectSorting } from '../../store/selectors.ts';
import { BOUNDARY_COLUMNS, HIDDEN_COLUMNS } from './boundary-columns.tsx';
import { BoundaryRowView } from './BoundaryRowView.tsx';
import { TableFilters } from './TableFilters.tsx';
import { useVirtualWindow } from './use-virtual-window.ts';

export const ROW_HEIGHT = 20;

export function BoundaryTable() {
  const rows = useInspectorStore(selectRows);
  const rowsVersion = useInspectorStore(selectRowsVersion);
  const filters = useInspectorStore(selectFilters);
  const sorting = useInspectorStore(selectSorting);
  const selection = useInspectorStore(selectSelection);
  const snapshot = useInspectorStore(selectSnapshot);

  const columnFilters = useMemo<ColumnFiltersState>(() => {
    const active: ColumnFiltersState = [];
    if (filters.stage !== '') active.push({ id: 'stage', value: filters.stage });
    if (filters.verdict !== '') active.push({ id: 'verdict', value: filters.verdict });
    if (filters.kind !== '') active.push({ id: 'kind', value: filters.kind });
    if (filters.pass !== null) active.push({ id: 'pass', value: filters.pass });
    if (filters.text.trim() !== '') active.push({ id: 'boundary', value: filters.text });
    return active;
  }, [filters]);

  const table = useReactTable({
    data: rows,
    columns: BOUNDARY_COLUMNS,
    state: { sorting, columnFilters, columnVisibility: HIDDEN_COLUMNS },
    onSortingChange: setSorting,
    getRowId: (row) => row.id,
    getCoreRowModel: getCoreRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    getSortedRowModel: getSortedRowModel(),
    // Rows arrive in execution order; "unsorted" means that order.
    enableSortingRemoval: true,
    sortDescFirst: true,
  });

  const visibleRows = table.getRowModel().rows;
  const { scrollerRef, first, last, onScroll, reveal, pageRows } = useVirtualWindow(visibleRows.length, ROW_HEIGHT);
  const selectedId = selection === null ? null : `${selection.pass}:${selection.boundary}`;
  const selectedIndex = useMemo(() => (selectedId === null ? -1 : visibleRows.findIndex((row) => row.id === selectedId)), [visibleRows, selectedId]);

  // Keep the selection in view however it moved (keys, a jump, a click in another panel).
  useEffect(() => {
    if (selectedIndex >= 0) reveal(selectedIndex);
  }, [selectedIndex, reveal]);

  // The benchmark and the e2e tests read when a new rowsVersion reached the DOM.
  useLayoutEffect(() => {
    if (rowsVersion >= 0) document.body.dataset.rowsPaintedAt = String(performance.now());
  }, [rowsVersion]);

  const onSelect = useCallback((row: BoundaryRow) => selectBoundary(row.pass, row.boundary), []);

  const move = (delta: number): void => {
    if (visibleRows.length === 0) return;
    const from = selectedIndex < 0 ? (delta > 0 ? -1 : visibleRows.length) : selectedIndex;
    const target = visibleRows[Math.min(visibleRows.length - 1, Math.max(0, from + delta))];
    if (target !== undefined) onSelect(target.original);
  };
  useCommand('selectNext', () => move(1));
  useCommand('selectPrevious', () => move(-1));

  const headerGroup = table.getHeaderGroups()[0];
  const emptyMessage =
    snapshot === null
      ? 'Connecting to the core…'
      : snapshot.bundle === null
        ? 'Open an engine and a reference bundle — or “Open default”.'
        : rows.length === 0
          ? 'No pass has run yet: Prefill (p), Step (n), Run to end (e).'
          : visibleRows.length === 0
            ? 'No row matches the filters.'
            : null;

  return (
    <div className="boundary-table" data-testid="boundary-table" data-rows-version={rowsVersion} data-row-count={visibleRows.length}>
      <TableFilters rows={rows} shown={visibleRows.length} />
      <div className="grid" role="table" aria-rowcount={visibleRows.length}>
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
          <div className="grid-spacer" style={{ height: visibleRows.length * ROW_HEIGHT }}>
            {visibleRows.slice(first, last).map((row, offset) => (
              <BoundaryRowView key={row.id} row={row} top={(first + offset) * ROW_HEIGHT} selected={row.id === selectedId} onSelect={onSelect} />
            ))}
          </div>
        </div>
      </div>
    </div>
  );
}

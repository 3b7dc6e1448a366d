// Filters over the boundary rows: stage, verdict, failure kind, pass, and free text.
import { useMemo, useRef } from 'react';
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';
import { formatCount } from '../../format/numbers.ts';
import { VERDICTS } from '../../format/verdicts.ts';
import { useCommand } from '../../keyboard/command-registry.ts';
import { clearFilters, setFilter } from '../../store/actions/filter-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectFilters } from '../../store/selectors.ts';
import type { VerdictFilter } from '../../store/slices/filters-slice.ts';

function distinct(rows: readonly BoundaryRow[], pick: (row: BoundaryRow) => string | null): string[] {
  const seen = new Set<string>();
  for (const row of rows) {
    const value = pick(row);
    if (value !== null && value !== '') seen.add(value);
  }
  return [...seen].sort();
}

const VERDICT_FILTERS: readonly VerdictFilter[] = ['', 'not_pass', ...VERDICTS];

export function TableFilters({ rows, shown }: { rows: readonly BoundaryRow[]; shown: number }) {
  const filters = useInspectorStore(selectFilters);
  const textInput = useRef<HTMLInputElement>(null);
  const stages = useMemo(() => distinct(rows, (row) => row.stage), [rows]);
  const kinds = useMemo(() => distinct(rows, (row) => row.kind), [rows]);
  useCommand('focusFilter', () => {
    textInput.current?.focus();
    textInput.current?.select();
  });
  const active = filters.stage !== '' || filters.verdict !== '' || filters.kind !== '' || filters.text !== '' || filters.pass !== null;

  return (
    <div className="table-filters" data-testid="table-filters">
      <input
        ref={textInput}
        type="search"
        className="filter-text"
        placeholder="filter boundaries (f)"
        value={filters.text}
        spellCheck={false}
        aria-label="filter text"
        data-testid="filter-text"
        onChange={(event) => setFilter('text', event.target.value)}
      />
      <select value={filters.stage} onChange={(event) => setFilter('stage', event.target.value)} aria-label="stage" data-testid="filter-stage">
        <option value="">all stages</option>
        {stages.map((stage) => (
          <option key={stage} value={stage}>
            {stage}
          </option>
        ))}
      </select>
      <select
        value={filters.verdict}
        onChange={(event) => setFilter('verdict', VERDICT_FILTERS.find((value) => value === event.target.value) ?? '')}
        aria-label="verdict"
        data-testid="filter-verdict"
      >
        <option value="">all verdicts</option>
        <option value="not_pass">not PASS</option>
        {VERDICTS.map((verdict) => (
          <option key={verdict} value={verdict}>
            {verdict}
          </option>
        ))}
      </select>
      <select value={filters.kind} onChange={(event) => setFilter('kind', event.target.value)} aria-label="mismatch kind" data-testid="filter-kind">
        <option value="">any kind</option>
        {kinds.map((kind) => (
          <option key={kind} value={kind}>
            {kind}
          </option>
        ))}
      </select>
      {filters.pass !== null ? (
        <button type="button" className="filter-chip" onClick={() => setFilter('pass', null)} title="Show every pass">
          pass {filters.pass} ×
        </button>
      ) : null}
      {active ? (
        <button type="button" className="link-button" onClick={clearFilters}>
          clear
        </button>
      ) : null}
      <span className="spacer" />
      <span className="row-count muted" data-testid="row-count">
        {shown === rows.length ? `${formatCount(rows.length)} rows` : `${formatCount(shown)} / ${formatCount(rows.length)} rows`}
      </span>
    </div>
  );
}

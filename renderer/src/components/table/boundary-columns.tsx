// The boundary table's columns: what each shows and what it sorts by. Sorting and filtering run
// over the rows in table-model.ts (keys computed once per sort, not per comparison);
// @tanstack/react-table keeps the header state (the sort order a click toggles, shift for more).
import type { ColumnDef } from '@tanstack/react-table';
import type { ReactNode } from 'react';
import type { BoundaryRow, WireVerdict } from '../../../../protocol/inspector-api.ts';
import { formatCount, formatShape, formatWire, wireSortKey } from '../../format/numbers.ts';
import { VERDICT_LABEL, verdictClass } from '../../format/verdicts.ts';

const VERDICT_RANK: Record<WireVerdict, number> = { FAIL: 4, REVIEW_REQUIRED: 3, KNOWN_GAP: 2, GAP: 1, PASS: 0 };

export interface BoundaryColumn {
  id: string;
  header: string;
  align: 'left' | 'right';
  /** The cell's content; the text itself when omitted. */
  render?: (row: BoundaryRow) => ReactNode;
  /** Numbers compare numerically; strings alphanumerically, ignoring case (react-table's default for text). */
  sortKey: (row: BoundaryRow) => number | string;
}

function Badges({ badges }: { badges: BoundaryRow['badges'] }) {
  return (
    <span className="badges">
      {badges.nan ? <span className="badge badge-nan">NaN</span> : null}
      {badges.inf ? <span className="badge badge-inf">inf</span> : null}
      {badges.negZero ? <span className="badge badge-negzero">-0</span> : null}
      {badges.tie ? <span className="badge badge-tie">tie</span> : null}
    </span>
  );
}

export const BOUNDARY_COLUMNS: readonly BoundaryColumn[] = [
  { id: 'pass', header: 'pass', align: 'right', sortKey: (row) => row.pass, render: (row) => `${row.passKind === 'prefill' ? 'P' : 'D'}${row.pass}` },
  { id: 'boundary', header: 'boundary', align: 'left', sortKey: (row) => row.boundary },
  { id: 'stage', header: 'stage', align: 'left', sortKey: (row) => row.stage },
  { id: 'dtype', header: 'dtype', align: 'left', sortKey: (row) => row.dtype },
  { id: 'shape', header: 'shape', align: 'left', sortKey: (row) => row.elements, render: (row) => formatShape(row.shape) },
  { id: 'contract', header: 'contract', align: 'left', sortKey: (row) => row.contract },
  {
    id: 'verdict',
    header: 'verdict',
    align: 'left',
    sortKey: (row) => VERDICT_RANK[row.verdict],
    render: (row) => (
      <span className="verdict-cell">
        <span className={`verdict-tag ${verdictClass(row.verdict)}`}>{VERDICT_LABEL[row.verdict]}</span>
        {row.kind !== null ? <span className="kind">{row.kind}</span> : null}
      </span>
    ),
  },
  { id: 'maxAbs', header: 'max abs', align: 'right', sortKey: (row) => wireSortKey(row.maxAbs), render: (row) => formatWire(row.maxAbs) },
  { id: 'maxUlp', header: 'max ULP', align: 'right', sortKey: (row) => wireSortKey(row.maxUlp), render: (row) => formatWire(row.maxUlp) },
  {
    id: 'mismatches',
    header: 'mism.',
    align: 'right',
    sortKey: (row) => row.mismatches,
    render: (row) => (row.mismatches === 0 ? <span className="muted">0</span> : formatCount(row.mismatches)),
  },
  {
    id: 'badges',
    header: 'specials',
    align: 'left',
    sortKey: (row) => Number(row.badges.nan) * 8 + Number(row.badges.inf) * 4 + Number(row.badges.negZero) * 2 + Number(row.badges.tie),
    render: (row) => <Badges badges={row.badges} />,
  },
];

export const COLUMN_BY_ID: ReadonlyMap<string, BoundaryColumn> = new Map(BOUNDARY_COLUMNS.map((column) => [column.id, column]));

/** The same columns for react-table's headers: an accessor makes a column sortable there. */
export const HEADER_COLUMNS: ColumnDef<BoundaryRow>[] = BOUNDARY_COLUMNS.map((column) => ({
  id: column.id,
  header: column.header,
  accessorFn: column.sortKey,
  meta: { align: column.align },
}));

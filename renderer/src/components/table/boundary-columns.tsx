// The boundary table's columns: what each shows, how it sorts and how it filters. Filtering and
// sorting run in @tanstack/react-table's row models; rendering is our own virtualised grid.
import type { ColumnDef, FilterFn, Row, SortingFn } from '@tanstack/react-table';
import type { BoundaryRow, WireVerdict } from '../../../../preload/inspector-api.ts';
import { fromWire } from '../../../../preload/inspector-api.ts';
import { formatCount, formatShape, formatWire, wireSortKey } from '../../format/numbers.ts';
import { VERDICT_LABEL, verdictClass } from '../../format/verdicts.ts';
import { rowMatchesText } from '../../store/row-matches-text.ts';
import type { VerdictFilter } from '../../store/slices/filters-slice.ts';

const VERDICT_RANK: Record<WireVerdict, number> = { FAIL: 4, REVIEW_REQUIRED: 3, KNOWN_GAP: 2, GAP: 1, PASS: 0 };

const byVerdict: SortingFn<BoundaryRow> = (a, b) => VERDICT_RANK[a.original.verdict] - VERDICT_RANK[b.original.verdict];
const byWire =
  (field: 'maxAbs' | 'maxUlp'): SortingFn<BoundaryRow> =>
  (a, b) =>
    wireSortKey(a.original[field]) - wireSortKey(b.original[field]);

const verdictFilter: FilterFn<BoundaryRow> = (row: Row<BoundaryRow>, _columnId: string, value: VerdictFilter) => {
  if (value === '') return true;
  if (value === 'not_pass') return row.original.verdict !== 'PASS';
  return row.original.verdict === value;
};

const exactFilter: FilterFn<BoundaryRow> = (row, columnId, value: string | number) => row.getValue(columnId) === value;

/** The text filter looks at the boundary name, the contract, the kind and the gate's reason. */
export const textFilter: FilterFn<BoundaryRow> = (row, _columnId, value: string) => rowMatchesText(row.original, value);

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

export const BOUNDARY_COLUMNS: ColumnDef<BoundaryRow>[] = [
  { id: 'pass', header: 'pass', accessorFn: (row) => row.pass, filterFn: exactFilter, cell: ({ row }) => `${row.original.passKind === 'prefill' ? 'P' : 'D'}${row.original.pass}`, meta: { align: 'right' } },
  { id: 'boundary', header: 'boundary', accessorFn: (row) => row.boundary, sortingFn: 'alphanumeric', filterFn: textFilter, meta: { align: 'left' } },
  { id: 'stage', header: 'stage', accessorFn: (row) => row.stage, filterFn: exactFilter, meta: { align: 'left' } },
  { id: 'dtype', header: 'dtype', accessorFn: (row) => row.dtype, meta: { align: 'left' } },
  { id: 'shape', header: 'shape', accessorFn: (row) => row.elements, cell: ({ row }) => formatShape(row.original.shape), meta: { align: 'left' } },
  { id: 'contract', header: 'contract', accessorFn: (row) => row.contract, meta: { align: 'left' } },
  {
    id: 'verdict',
    header: 'verdict',
    accessorFn: (row) => row.verdict,
    sortingFn: byVerdict,
    filterFn: verdictFilter,
    cell: ({ row }) => (
      <span className="verdict-cell">
        <span className={`verdict-tag ${verdictClass(row.original.verdict)}`}>{VERDICT_LABEL[row.original.verdict]}</span>
        {row.original.kind !== null ? <span className="kind">{row.original.kind}</span> : null}
      </span>
    ),
    meta: { align: 'left' },
  },
  { id: 'kind', header: 'kind', accessorFn: (row) => row.kind ?? '', filterFn: exactFilter, enableHiding: true },
  { id: 'maxAbs', header: 'max abs', accessorFn: (row) => (row.maxAbs === null ? null : fromWire(row.maxAbs)), sortingFn: byWire('maxAbs'), cell: ({ row }) => formatWire(row.original.maxAbs), meta: { align: 'right' } },
  { id: 'maxUlp', header: 'max ULP', accessorFn: (row) => (row.maxUlp === null ? null : fromWire(row.maxUlp)), sortingFn: byWire('maxUlp'), cell: ({ row }) => formatWire(row.original.maxUlp), meta: { align: 'right' } },
  {
    id: 'mismatches',
    header: 'mism.',
    accessorFn: (row) => row.mismatches,
    cell: ({ row }) => (row.original.mismatches === 0 ? <span className="muted">0</span> : formatCount(row.original.mismatches)),
    meta: { align: 'right' },
  },
  {
    id: 'badges',
    header: 'specials',
    accessorFn: (row) => Number(row.badges.nan) * 8 + Number(row.badges.inf) * 4 + Number(row.badges.negZero) * 2 + Number(row.badges.tie),
    cell: ({ row }) => <Badges badges={row.original.badges} />,
    meta: { align: 'left' },
  },
];

/** Columns that take part in filtering but are not drawn (kind is shown inside the verdict cell). */
export const HIDDEN_COLUMNS = { kind: false } as const;

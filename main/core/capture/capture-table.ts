// The human table `trace-inspector capture` prints: one row per boundary (worst over its
// passes) or, with --per-pass, one row per pass × boundary.
import type { BoundaryDiffRow } from './capture-diff.ts';

export interface CaptureTableOptions {
  perPass: boolean;
}

interface TableRow {
  passes: string;
  boundary: string;
  dtype: string;
  shape: string;
  contract: string;
  maxAbs: string;
  maxUlp: string;
  result: string;
}

function formatNumber(value: number): string {
  if (value === 0) return '0';
  if (!Number.isFinite(value)) return String(value);
  return value.toExponential(2);
}

function resultText(row: BoundaryDiffRow): string {
  switch (row.status) {
    case 'identical':
      return 'identical';
    case 'within':
      return 'within bound';
    case 'outside':
      return `OUTSIDE ${row.diff ? `${row.diff.mismatches}/${row.diff.elements}` : ''}`.trim();
    case 'differs':
      return `DIFFERS ${row.diff ? `${row.diff.mismatches}/${row.diff.elements}` : ''}`.trim();
    case 'missing':
      return 'MISSING in native';
    case 'extra':
      return 'not in reference';
    case 'mismatch':
      return `MISMATCH ${row.detail}`;
  }
}

const SEVERITY: Record<BoundaryDiffRow['status'], number> = {
  identical: 0,
  within: 1,
  extra: 2,
  outside: 3,
  differs: 3,
  mismatch: 4,
  missing: 4,
};

function toTableRow(row: BoundaryDiffRow, passes: string): TableRow {
  const isFloat = row.diff !== null && row.floating;
  return {
    passes,
    boundary: row.boundary,
    dtype: row.dtype,
    shape: `[${row.shape.join(',')}]`,
    contract: row.contract,
    maxAbs: isFloat && row.diff ? formatNumber(row.diff.maxAbs) : '',
    maxUlp: isFloat && row.diff ? String(row.diff.maxUlp) : '',
    result: resultText(row),
  };
}

/** Aggregates per boundary name: the worst row over all passes, and how many passes it covers. */
function aggregate(rows: readonly BoundaryDiffRow[]): TableRow[] {
  const byName = new Map<string, BoundaryDiffRow[]>();
  for (const row of rows) {
    const list = byName.get(row.boundary) ?? [];
    list.push(row);
    byName.set(row.boundary, list);
  }
  const table: TableRow[] = [];
  for (const [, list] of byName) {
    let worst = list[0] as BoundaryDiffRow;
    let maxAbs = 0;
    let maxUlp = 0;
    for (const row of list) {
      if (SEVERITY[row.status] > SEVERITY[worst.status]) worst = row;
      if (row.diff) {
        maxAbs = Math.max(maxAbs, row.diff.maxAbs);
        maxUlp = Math.max(maxUlp, row.diff.maxUlp);
      }
    }
    const tableRow = toTableRow(worst, String(list.length));
    if (worst.diff && worst.floating) {
      tableRow.maxAbs = formatNumber(maxAbs);
      tableRow.maxUlp = String(maxUlp);
    }
    if (SEVERITY[worst.status] >= 3) tableRow.result += ` (first at pass ${worst.pass})`;
    table.push(tableRow);
  }
  return table;
}

export function formatCaptureTable(rows: readonly BoundaryDiffRow[], options: CaptureTableOptions): string {
  const tableRows = options.perPass ? rows.map((row) => toTableRow(row, String(row.pass))) : aggregate(rows);
  const header: TableRow = {
    passes: options.perPass ? 'pass' : 'passes',
    boundary: 'boundary',
    dtype: 'dtype',
    shape: 'shape',
    contract: 'contract',
    maxAbs: 'max abs',
    maxUlp: 'max ULP',
    result: 'result',
  };
  const columns: (keyof TableRow)[] = ['passes', 'boundary', 'dtype', 'shape', 'contract', 'maxAbs', 'maxUlp', 'result'];
  const widths = columns.map((column) => Math.max(header[column].length, ...tableRows.map((row) => row[column].length)));
  const line = (row: TableRow): string =>
    columns
      .map((column, i) => (column === 'result' ? row[column] : row[column].padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(header), ...tableRows.map(line)].join('\n');
}

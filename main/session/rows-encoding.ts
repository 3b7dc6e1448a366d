// Building getRows' columns (inspector-api.ts RowsReplySchema) from BoundaryRows: each field
// dictionary-coded (a run repeats its boundary names, stages, contracts and reasons pass after
// pass), the two error figures as float64, the booleans as one flags byte per row. Base64 through
// Node's Buffer (encodeBase64): a 50k-row reply is ~2 MiB of it, and the serve process is single
// threaded (protocol/base64-bytes.ts's portable loop took ~0.2 s for that; Buffer ~1 ms).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fromWire, type BoundaryRow, type RowColumns, type RowsReply } from '../../protocol/inspector-api.ts';
import { encodeBase64 } from '../core/receipt/base64.ts';
import { CODED_COLUMNS, ROW_FLAGS, codeWidth } from '../../protocol/row-columns-check.ts';

/** Dictionary key of a value: shapes are arrays, so they are keyed by their text. */
const keyOf = (value: unknown): unknown => (Array.isArray(value) ? value.join(',') : value);

function codedColumn<T>(rows: readonly BoundaryRow[], pick: (row: BoundaryRow) => T): { values: T[]; codes: string } {
  const index = new Map<unknown, number>();
  const values: T[] = [];
  const codes = new Uint32Array(rows.length);
  rows.forEach((row, i) => {
    const value = pick(row);
    const key = keyOf(value);
    let code = index.get(key);
    if (code === undefined) {
      code = values.length;
      index.set(key, code);
      values.push(value);
    }
    codes[i] = code;
  });
  const width = codeWidth(values.length);
  const bytes = new Uint8Array(rows.length * width);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < rows.length; i += 1) {
    const code = codes[i] ?? 0;
    if (width === 1) bytes[i] = code;
    else if (width === 2) view.setUint16(i * 2, code, true);
    else view.setUint32(i * 4, code, true);
  }
  return { values, codes: encodeBase64(bytes) };
}

/** Unmeasured (null) is 0 in the column; its flag bit tells it apart. */
const measured = (value: BoundaryRow['maxAbs']): number => (value === null ? 0 : fromWire(value));

function floatColumn(rows: readonly BoundaryRow[], pick: (row: BoundaryRow) => BoundaryRow['maxAbs']): string {
  const bytes = new Uint8Array(rows.length * 8);
  const view = new DataView(bytes.buffer);
  rows.forEach((row, i) => view.setFloat64(i * 8, measured(pick(row)), true));
  return encodeBase64(bytes);
}

function flagsOf(row: BoundaryRow): number {
  return (
    (row.badges.nan ? ROW_FLAGS.nan : 0) |
    (row.badges.inf ? ROW_FLAGS.inf : 0) |
    (row.badges.negZero ? ROW_FLAGS.negZero : 0) |
    (row.badges.tie ? ROW_FLAGS.tie : 0) |
    (row.firstDivergence ? ROW_FLAGS.firstDivergence : 0) |
    (row.pcm ? ROW_FLAGS.pcm : 0) |
    (row.maxAbs !== null ? ROW_FLAGS.maxAbsMeasured : 0) |
    (row.maxUlp !== null ? ROW_FLAGS.maxUlpMeasured : 0)
  );
}

/** The columns of `rows` (consecutive in execution order), one at a time, in the order the reply lists them. */
function* rowColumnParts(rows: readonly BoundaryRow[]): Generator<readonly [keyof RowColumns, unknown]> {
  for (const name of CODED_COLUMNS) yield [name, codedColumn(rows, (row) => row[name])];
  yield ['maxAbs', floatColumn(rows, (row) => row.maxAbs)];
  yield ['maxUlp', floatColumn(rows, (row) => row.maxUlp)];
  yield ['flags', encodeBase64(Uint8Array.from(rows, flagsOf))];
}

/** A getRows reply carrying `rows`, the first of which has order `start`. */
export function rowsReply(rowsVersion: number, mode: RowsReply['mode'], start: number, rows: readonly BoundaryRow[]): RowsReply {
  // Each column is built from its field's values (the reply schema checks it before it is sent).
  const columns = Object.fromEntries(rowColumnParts(rows)) as unknown as RowColumns;
  return { rowsVersion, mode, start, count: rows.length, columns };
}

/**
 * Rows past which rowsReplyInTurns lets the event loop run between columns. A whole long run's
 * columns (40,899 rows of the 10 GiB scale trace) took about 90 ms to encode in one piece on the
 * serving thread, a column taking a few ms.
 */
export const ROWS_PER_TURN = 4096;

/** rowsReply, the same reply, with a turn of the event loop between its columns when it carries many rows. */
export async function rowsReplyInTurns(rowsVersion: number, mode: RowsReply['mode'], start: number, rows: readonly BoundaryRow[]): Promise<RowsReply> {
  if (rows.length <= ROWS_PER_TURN) return rowsReply(rowsVersion, mode, start, rows);
  const columns: Partial<Record<keyof RowColumns, unknown>> = {};
  for (const [name, column] of rowColumnParts(rows)) {
    if (Object.keys(columns).length > 0) await nextTurn();
    columns[name] = column;
  }
  return { rowsVersion, mode, start, count: rows.length, columns: columns as unknown as RowColumns };
}

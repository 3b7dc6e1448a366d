// Reading getRows' columns (inspector-api.ts RowsReplySchema) into BoundaryRows. Shared by the
// renderer's store and the tests, so the layout is read by one piece of code. The rows share
// what the dictionaries share (strings, shape arrays, badge objects): a 50k-row table is 50k
// small objects pointing at a few thousand values, built in one pass with no per-row parsing.
import { base64ToBytes } from './base64-bytes.ts';
import { toWire, type BoundaryRow, type RowsReply } from './inspector-api.ts';
import { CODED_COLUMNS, ROW_FLAGS, codeWidth, readCodes, type CodedColumn } from './row-columns-check.ts';

type Badges = BoundaryRow['badges'];

/** The 16 badge combinations, frozen and shared: rows only read them. */
const BADGES: readonly Readonly<Badges>[] = Array.from({ length: 16 }, (_, bits) =>
  Object.freeze({
    nan: (bits & ROW_FLAGS.nan) !== 0,
    inf: (bits & ROW_FLAGS.inf) !== 0,
    negZero: (bits & ROW_FLAGS.negZero) !== 0,
    tie: (bits & ROW_FLAGS.tie) !== 0,
  }),
);

function bytesOf(base64: string, field: string): Uint8Array {
  const bytes = base64ToBytes(base64);
  // RowsReplySchema refused malformed columns already; this only guards a caller that skipped it.
  if (bytes === null) throw new Error(`getRows: ${field} is not base64`);
  return bytes;
}

type Codes = Record<CodedColumn, Uint8Array | Uint16Array | Uint32Array>;

function codesOf(reply: RowsReply): Codes {
  const out: Partial<Codes> = {};
  for (const name of CODED_COLUMNS) {
    const column = reply.columns[name];
    out[name] = readCodes(bytesOf(column.codes, `columns.${name}.codes`), codeWidth(column.values.length), reply.count);
  }
  return out as Codes;
}

function floatsOf(base64: string, field: string, count: number): Float64Array {
  const bytes = bytesOf(base64, field);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i += 1) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/** The rows of a reply that passed RowsReplySchema, in execution order (`order` = start + i). */
export function decodeRows(reply: RowsReply): BoundaryRow[] {
  const { count, start, columns } = reply;
  const codes = codesOf(reply);
  const maxAbs = floatsOf(columns.maxAbs, 'columns.maxAbs', count);
  const maxUlp = floatsOf(columns.maxUlp, 'columns.maxUlp', count);
  const flags = bytesOf(columns.flags, 'columns.flags');
  // A value the schema allowed is always present: `as` only drops the undefined of indexing.
  const at = <T>(values: readonly T[], code: number | undefined): T => values[code ?? 0] as T;
  const rows = new Array<BoundaryRow>(count);
  for (let i = 0; i < count; i += 1) {
    const bits = flags[i] ?? 0;
    const pass = at(columns.pass.values, codes.pass[i]);
    const boundary = at(columns.boundary.values, codes.boundary[i]);
    rows[i] = {
      id: `${pass}:${boundary}`,
      order: start + i,
      pass,
      passKind: at(columns.passKind.values, codes.passKind[i]),
      boundary,
      stage: at(columns.stage.values, codes.stage[i]),
      dtype: at(columns.dtype.values, codes.dtype[i]),
      shape: at(columns.shape.values, codes.shape[i]),
      contract: at(columns.contract.values, codes.contract[i]),
      contractKind: at(columns.contractKind.values, codes.contractKind[i]),
      verdict: at(columns.verdict.values, codes.verdict[i]),
      kind: at(columns.kind.values, codes.kind[i]),
      reason: at(columns.reason.values, codes.reason[i]),
      maxAbs: (bits & ROW_FLAGS.maxAbsMeasured) !== 0 ? toWire(maxAbs[i] ?? NaN) : null,
      maxUlp: (bits & ROW_FLAGS.maxUlpMeasured) !== 0 ? toWire(maxUlp[i] ?? NaN) : null,
      mismatches: at(columns.mismatches.values, codes.mismatches[i]),
      elements: at(columns.elements.values, codes.elements[i]),
      badges: BADGES[bits & 15] as Badges,
      firstDivergence: (bits & ROW_FLAGS.firstDivergence) !== 0,
      pcm: (bits & ROW_FLAGS.pcm) !== 0,
    };
  }
  return rows;
}

// The layout of getRows' columns (inspector-api.ts RowsReplySchema documents it) and the checks
// zod cannot express per element without costing a function call per row: code widths, column
// lengths, codes inside their dictionaries. Kept apart from inspector-api.ts so the schema there
// and the reader (rows-columns.ts) share one definition of the layout.
import { base64ToBytes } from './base64-bytes.ts';

/** Dictionary-coded columns, in the order the reader fills a row. */
export const CODED_COLUMNS = [
  'pass',
  'passKind',
  'boundary',
  'stage',
  'dtype',
  'shape',
  'contract',
  'contractKind',
  'verdict',
  'kind',
  'reason',
  'mismatches',
  'elements',
] as const;
export type CodedColumn = (typeof CODED_COLUMNS)[number];

/** Float64 columns; a row's value counts only where its flag says it was measured. */
export const FLOAT_COLUMNS = ['maxAbs', 'maxUlp'] as const;
export type FloatColumn = (typeof FLOAT_COLUMNS)[number];

/** Bits of the one flags byte per row. */
export const ROW_FLAGS = {
  nan: 1,
  inf: 2,
  negZero: 4,
  tie: 8,
  firstDivergence: 16,
  pcm: 32,
  maxAbsMeasured: 64,
  maxUlpMeasured: 128,
} as const;

/** Bytes per code: the narrowest unsigned width that can index a dictionary of `size` values. */
export function codeWidth(size: number): 1 | 2 | 4 {
  return size <= 0x100 ? 1 : size <= 0x10000 ? 2 : 4;
}

/** The codes of a column as numbers (little-endian, `width` bytes each). */
export function readCodes(bytes: Uint8Array, width: 1 | 2 | 4, count: number): Uint8Array | Uint16Array | Uint32Array {
  if (width === 1) return bytes.subarray(0, count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (width === 2) {
    const out = new Uint16Array(count);
    for (let i = 0; i < count; i += 1) out[i] = view.getUint16(i * 2, true);
    return out;
  }
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i += 1) out[i] = view.getUint32(i * 4, true);
  return out;
}

export interface ColumnsShape {
  mode: 'full' | 'append';
  start: number;
  count: number;
  columns: Record<CodedColumn, { values: readonly unknown[]; codes: string }> & Record<FloatColumn | 'flags', string>;
}

export interface ColumnIssue {
  path: (string | number)[];
  message: string;
}

/** Every problem of the columns' bytes, each naming its field; empty when the reply is well formed. */
export function columnIssues(reply: ColumnsShape): ColumnIssue[] {
  const issues: ColumnIssue[] = [];
  const { count } = reply;
  if (reply.mode === 'full' && reply.start !== 0) issues.push({ path: ['start'], message: `a full reply starts at row 0, not ${reply.start}` });
  for (const name of CODED_COLUMNS) {
    const column = reply.columns[name];
    const width = codeWidth(column.values.length);
    const bytes = base64ToBytes(column.codes);
    if (bytes === null || bytes.length !== count * width) {
      issues.push({
        path: ['columns', name, 'codes'],
        message: `expected ${count} codes of ${width} byte(s), got ${bytes === null ? 'malformed base64' : `${bytes.length} bytes`}`,
      });
      continue;
    }
    const codes = readCodes(bytes, width, count);
    const size = column.values.length;
    for (let row = 0; row < count; row += 1) {
      if ((codes[row] ?? 0) >= size) {
        issues.push({ path: ['columns', name, 'codes'], message: `row ${row}: code ${codes[row]} is outside the ${size}-value dictionary` });
        break;
      }
    }
  }
  for (const name of FLOAT_COLUMNS) {
    const bytes = base64ToBytes(reply.columns[name]);
    if (bytes === null || bytes.length !== count * 8) {
      issues.push({
        path: ['columns', name],
        message: `expected ${count} float64 values, got ${bytes === null ? 'malformed base64' : `${bytes.length} bytes`}`,
      });
    }
  }
  const flags = base64ToBytes(reply.columns.flags);
  if (flags === null || flags.length !== count) {
    issues.push({ path: ['columns', 'flags'], message: `expected ${count} flag bytes, got ${flags === null ? 'malformed base64' : `${flags.length} bytes`}` });
  }
  return issues;
}

// getRows' columnar encoding: what the core builds (rows-encoding.ts) passes the API schema and
// reads back (rows-columns.ts) as the very rows it came from, every field; a malformed column is
// refused by the schema with a message naming the field, on either end.
import { describe, expect, it } from 'vitest';
import { ROWS_PER_TURN, rowsReply, rowsReplyInTurns } from '../../main/session/rows-encoding.ts';
import { base64ToBytes, bytesToBase64 } from '../../protocol/base64-bytes.ts';
import { RowsReplySchema, type BoundaryRow, type RowsReply } from '../../protocol/inspector-api.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';
import { mergeRows } from '../../protocol/rows-merge.ts';
import { countTurns } from '../helpers/event-loop-turns.ts';

const VERDICTS = ['PASS', 'FAIL', 'GAP', 'KNOWN_GAP', 'REVIEW_REQUIRED'] as const;
const WIRE = [0, -0, 1e-300, 3.5, 'NaN', 'Infinity', '-Infinity', 2 ** 60, null] as const;

/** `count` rows from `start` in execution order, varying every field; `names` distinct boundaries. */
function sampleRows(count: number, names: number, start = 0): BoundaryRow[] {
  return Array.from({ length: count }, (_, i): BoundaryRow => {
    const order = start + i;
    const pass = Math.floor(order / names);
    const boundary = `layer${order % names}.op${order % 7}`;
    const maxAbs = WIRE[order % WIRE.length] ?? null;
    return {
      id: `${pass}:${boundary}`,
      order,
      pass,
      passKind: pass === 0 ? 'prefill' : 'decode',
      boundary,
      stage: `stage${order % 5}`,
      dtype: order % 3 === 0 ? 'F32' : 'BF16',
      shape: order % 4 === 0 ? [] : [order % 4, 8],
      contract: order % 2 === 0 ? 'bit_exact' : 'faithful abs 1e-6 rel 1e-5',
      contractKind: order % 9 === 0 ? 'none' : order % 2 === 0 ? 'bit_exact' : 'faithful',
      verdict: VERDICTS[order % VERDICTS.length] ?? 'PASS',
      kind: order % 3 === 0 ? null : order % 3 === 1 ? 'value' : 'nan_vs_number',
      reason: `reason ${order % 11}`,
      maxAbs,
      maxUlp: maxAbs === null ? null : order,
      mismatches: order % 13,
      elements: 2 ** 40 + (order % 3),
      badges: { nan: order % 2 === 0, inf: order % 3 === 0, negZero: order % 5 === 0, tie: order % 7 === 0 },
      firstDivergence: order === 17,
      pcm: order % 6 === 0,
    };
  });
}

/** What a client receives: the reply through JSON and the schema, as both hosts deliver it. */
const overTheWire = (reply: RowsReply): RowsReply => RowsReplySchema.parse(JSON.parse(JSON.stringify(reply)));

const refusal = (reply: unknown): string => {
  const parsed = RowsReplySchema.safeParse(reply);
  if (parsed.success) throw new Error('expected the reply to be refused');
  return parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
};

describe('getRows columns', () => {
  it('base64 helpers agree with Node at every length', () => {
    for (let length = 0; length < 40; length += 1) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 97 + length) & 255);
      const text = bytesToBase64(bytes);
      expect(text).toBe(Buffer.from(bytes).toString('base64'));
      expect(base64ToBytes(text)).toEqual(bytes);
    }
    expect(base64ToBytes('AB$=')).toBeNull();
    expect(base64ToBytes('ABC')).toBeNull();
  });

  it('round-trips every field, -0 and the non-finite values included, with u8, u16 and u32 codes', () => {
    for (const [count, names] of [
      [0, 1],
      [40, 3],
      [3000, 1000],
      [70_000, 70_000],
    ] as const) {
      const rows = sampleRows(count, names);
      const reply = overTheWire(rowsReply(9, 'full', 0, rows));
      const decoded = decodeRows(reply);
      expect(decoded).toEqual(rows);
      // toEqual treats -0 as 0 only through Object.is: check the sign survived explicitly.
      expect(decoded.filter((row) => Object.is(row.maxAbs, -0))).toHaveLength(rows.filter((row) => Object.is(row.maxAbs, -0)).length);
    }
    expect(JSON.stringify(rowsReply(1, 'full', 0, sampleRows(3000, 1000))).length / 3000).toBeLessThan(60);
  });

  it('an append continues the held rows; one that does not is refused by the merge', () => {
    const rows = sampleRows(300, 100);
    const held = mergeRows([], overTheWire(rowsReply(1, 'full', 0, rows.slice(0, 200))));
    expect(held).toEqual(rows.slice(0, 200));
    const appended = overTheWire(rowsReply(2, 'append', 200, rows.slice(200)));
    expect(mergeRows(held ?? [], appended)).toEqual(rows);
    expect(mergeRows(rows.slice(0, 150), appended)).toBeNull();
    const none = overTheWire(rowsReply(3, 'append', 200, []));
    expect(mergeRows(held ?? [], none)).toBe(held);
  });

  it('refuses malformed columns, naming the field', () => {
    const good = rowsReply(4, 'full', 0, sampleRows(300, 100));
    const withColumn = (name: string, value: unknown): unknown => ({ ...good, columns: { ...good.columns, [name]: value } });
    // Codes one row short.
    const short = bytesToBase64((base64ToBytes(good.columns.verdict.codes) ?? new Uint8Array()).subarray(0, 299));
    expect(refusal(withColumn('verdict', { ...good.columns.verdict, codes: short }))).toMatch(
      /columns\.verdict\.codes: expected 300 codes of 1 byte\(s\), got 299 bytes/,
    );
    // A code outside its dictionary.
    expect(refusal(withColumn('stage', { ...good.columns.stage, values: good.columns.stage.values.slice(0, 2) }))).toMatch(
      /columns\.stage\.codes: row \d+: code \d is outside the 2-value dictionary/,
    );
    // Dictionary values of the wrong type, a value the enum does not allow.
    expect(refusal(withColumn('elements', { ...good.columns.elements, values: [-1] }))).toMatch(/columns\.elements\.values\.0/);
    expect(refusal(withColumn('verdict', { ...good.columns.verdict, values: ['MAYBE', ...good.columns.verdict.values.slice(1)] }))).toMatch(
      /columns\.verdict\.values\.0/,
    );
    // Float and flag columns of the wrong length, and bytes that are not base64.
    expect(refusal(withColumn('maxUlp', bytesToBase64(new Uint8Array(8))))).toMatch(/columns\.maxUlp: expected 300 float64 values, got 8 bytes/);
    expect(refusal(withColumn('flags', 'AAAA'))).toMatch(/columns\.flags: expected 300 flag bytes, got 3 bytes/);
    expect(refusal(withColumn('flags', 'A'))).toMatch(/columns\.flags/);
    expect(refusal({ ...good, columns: { ...good.columns, boundary: undefined } })).toMatch(/columns\.boundary/);
    // A full reply always starts at row 0; a count that the columns do not hold.
    expect(refusal({ ...good, start: 5 })).toMatch(/start: a full reply starts at row 0, not 5/);
    expect(refusal({ ...good, count: 301 })).toMatch(/columns\.pass\.codes: expected 301 codes/);
  });

  it('encodes a long run in turns: the same reply, with the event loop let in between its columns', async () => {
    const rows = sampleRows(3 * ROWS_PER_TURN, 500);
    const counting = countTurns();
    const inTurns = await rowsReplyInTurns(5, 'full', 0, rows);
    const turns = counting.stop();
    const columns = Object.keys(inTurns.columns).length;
    expect(inTurns).toEqual(rowsReply(5, 'full', 0, rows));
    expect(Object.keys(inTurns.columns)).toEqual(Object.keys(rowsReply(5, 'full', 0, rows).columns));
    // One turn before each column but the first, at least: the loop was never held for the whole reply.
    expect(turns).toBeGreaterThanOrEqual(columns - 1);
    expect(decodeRows(overTheWire(inTurns))).toEqual(rows);
  });
});

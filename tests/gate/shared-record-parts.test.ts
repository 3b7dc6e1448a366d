// The rows' comparison records hold their small all-number parts once per distinct content
// (main/core/gate/shared-record-parts.ts). Sharing must never change a serialised byte: two parts
// are one object only when every key and value, in order, is the same (0 and -0, NaN and the
// infinities apart), and a shared part cannot be written to.
import { describe, expect, it } from 'vitest';
import type { SideCensus } from '../../main/core/compare/comparison-types.ts';
import { SharedRecordParts } from '../../main/core/gate/shared-record-parts.ts';
import { canonicalJson } from '../../main/core/receipt/canonical-json.ts';

const census = (finite: number, negZero = 0): SideCensus => ({ nan: 0, posInf: 0, negInf: 0, negZero, subnormal: 0, finite });

describe('SharedRecordParts', () => {
  it('holds parts of the same content once, frozen', () => {
    const shared = new SharedRecordParts();
    const first = shared.numbers({ abs: 0, rel: 0, ulp: 0 });
    expect(shared.numbers({ abs: 0, rel: 0, ulp: 0 })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { abs: number }).abs = 1;
    }).toThrow(TypeError);
    const shape = shared.array([4, 8]);
    expect(shared.array([4, 8])).toBe(shape);
    expect(Object.isFrozen(shape)).toBe(true);
    const pair = shared.census({ native: census(32), reference: census(32) });
    expect(pair.native).toBe(pair.reference);
    expect(shared.census({ native: census(32), reference: census(32) })).toBe(pair);
    expect(shared.notes([])).toBe(shared.notes([]));
  });

  it('keeps apart parts that differ in any value or key, 0 from -0 and NaN from the infinities', () => {
    const shared = new SharedRecordParts();
    const parts = [
      { abs: 0, rel: 0, ulp: 0 },
      { abs: -0, rel: 0, ulp: 0 },
      { abs: Number.NaN, rel: 0, ulp: 0 },
      { abs: Infinity, rel: 0, ulp: 0 },
      { abs: -Infinity, rel: 0, ulp: 0 },
      { abs: 2 ** -24, rel: 0, ulp: 0 },
      { rel: 0, abs: 0, ulp: 0 },
      { abs: 0, rel: 0, ulp: 1 },
    ];
    const held = parts.map((part) => shared.numbers(part));
    expect(new Set(held).size).toBe(parts.length);
    held.forEach((part, i) => {
      expect(Object.is(part.abs, parts[i]?.abs)).toBe(true);
      expect(Object.keys(part)).toEqual(Object.keys(parts[i] as object));
    });
    const arrays = [[2, 3], [3, 2], [2, 3, 1], [0], [-0], [23]].map((items) => shared.array(items));
    expect(new Set(arrays).size).toBe(6);
    const pairs = [
      { native: census(32), reference: census(32) },
      { native: census(32), reference: census(31) },
      { native: census(31), reference: census(32) },
      { native: census(32, 1), reference: census(32) },
    ].map((pair) => shared.census(pair));
    expect(new Set(pairs).size).toBe(4);
    expect(pairs[1]?.reference.finite).toBe(31);
    expect(pairs[2]?.native.finite).toBe(31);
    expect(shared.notes(['a note'])).toEqual(['a note']);
  });

  it('serialises every record as it would have been without sharing, in JSON and canonical JSON', () => {
    const shared = new SharedRecordParts();
    const records = [0, 1, 2, 3].map((row) => ({
      shape: [row % 2, 4],
      classes: { value: row === 3 ? 1 : 0, nan_vs_number: 0 },
      census: { native: census(8, row === 2 ? 1 : 0), reference: census(8) },
      required: { abs: row === 1 ? -0 : row === 3 ? Infinity : 0, rel: 0, ulp: row },
      notes: [] as string[],
    }));
    const expectedJson = JSON.stringify(records);
    const expectedCanonical = canonicalJson(records);
    const kept = records.map((record) => ({
      shape: shared.array(record.shape),
      classes: shared.numbers(record.classes),
      census: shared.census(record.census),
      required: shared.numbers(record.required),
      notes: shared.notes(record.notes),
    }));
    expect(JSON.stringify(kept)).toBe(expectedJson);
    expect(canonicalJson(kept)).toBe(expectedCanonical);
  });
});

// Canonical JSON: one byte string per value (sorted keys, no whitespace), non-finite numbers kept
// as strings that parse back, and values JSON cannot hold refused with the field named.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CanonicalArray, CanonicalJsonText, canonicalJson, canonicalJsonBytes, canonicalNumberSchema } from '../../main/core/receipt/canonical-json.ts';

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    const value = { b: 1, a: { z: [3, { y: true, x: null }], c: 'text' }, A: 'upper first' };
    expect(canonicalJson(value)).toBe('{"A":"upper first","a":{"c":"text","z":[3,{"x":null,"y":true}]},"b":1}');
  });

  it('gives the same bytes for the same value whatever the insertion order', () => {
    expect(canonicalJson({ one: 1, two: [2, 2], three: { c: 3, d: 4 } })).toBe(canonicalJson({ three: { d: 4, c: 3 }, two: [2, 2], one: 1 }));
  });

  it('sorts keys by UTF-16 code units (RFC 8785 order), not by locale', () => {
    // "é" (U+00E9) sorts after "z". "😀" (U+1F600, code units D83D DE00) sorts BEFORE "ｚ"
    // (U+FF5A): code-unit order, where code-point order would put it after.
    expect(canonicalJson({ z: 1, é: 2, a: 3 })).toBe('{"a":3,"z":1,"é":2}');
    expect(canonicalJson({ ｚ: 1, '😀': 2 })).toBe('{"😀":2,"ｚ":1}');
  });

  it('writes strings and finite numbers as JSON.stringify does', () => {
    expect(canonicalJson(['a"b\\c\n\u0001', 0.1, 1e21, -1.5e-7, 42, 'ü'])).toBe('["a\\"b\\\\c\\n\\u0001",0.1,1e+21,-1.5e-7,42,"ü"]');
  });

  it('writes NaN, Infinity and -Infinity as strings, and -0 as 0', () => {
    const text = canonicalJson({ nan: NaN, inf: Infinity, negInf: -Infinity, negZero: -0, list: [NaN, -0] });
    expect(text).toBe('{"inf":"Infinity","list":["NaN",0],"nan":"NaN","negInf":"-Infinity","negZero":0}');
  });

  it('parses non-finite numbers back through canonicalNumberSchema', () => {
    const Stats = z.object({
      nan: canonicalNumberSchema,
      inf: canonicalNumberSchema,
      negInf: canonicalNumberSchema,
      negZero: canonicalNumberSchema,
      plain: canonicalNumberSchema,
    });
    const parsed = Stats.parse(JSON.parse(canonicalJson({ nan: NaN, inf: Infinity, negInf: -Infinity, negZero: -0, plain: 2.5 })));
    expect(parsed.nan).toBeNaN();
    expect(parsed.inf).toBe(Infinity);
    expect(parsed.negInf).toBe(-Infinity);
    expect(Object.is(parsed.negZero, 0)).toBe(true);
    expect(parsed.plain).toBe(2.5);
    expect(Stats.safeParse({ nan: 'nan', inf: 1, negInf: 1, negZero: 1, plain: 1 }).success).toBe(false);
  });

  it('leaves out undefined object properties, as JSON.stringify does', () => {
    expect(canonicalJson({ kept: 1, dropped: undefined })).toBe('{"kept":1}');
  });

  it('encodes as UTF-8 bytes', () => {
    expect(canonicalJsonBytes({ k: 'é' })).toEqual(Buffer.from([0x7b, 0x22, 0x6b, 0x22, 0x3a, 0x22, 0xc3, 0xa9, 0x22, 0x7d]));
  });

  it.each([
    ['a Date', { times: { start: new Date(0) } }, 'times.start: a Date'],
    ['a Map', { m: new Map() }, 'm: a Map'],
    ['a bigint', { n: 10n }, 'n: a bigint'],
    ['a function', { f: () => 1 }, 'f: a function'],
    ['undefined inside an array', { list: [1, undefined] }, 'list[1]: undefined inside an array'],
    ['a typed array', { bytes: new Uint8Array(2) }, 'bytes: a Uint8Array'],
  ])('refuses %s, naming the field', (_label, value, message) => {
    expect(() => canonicalJson(value)).toThrow(message);
  });

  it('refuses a cycle instead of recursing forever', () => {
    const looped: Record<string, unknown> = { a: 1 };
    looped['self'] = looped;
    expect(() => canonicalJson(looped)).toThrow('self: the value contains itself');
  });

  it('accepts a shared (non-cyclic) sub-object twice', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('canonical JSON of streamed and pre-written values', () => {
  it('writes a CanonicalArray exactly as the array of its items, in text and in bytes', () => {
    const items = [{ b: 1, a: [Number.NaN, -0] }, 'x', null];
    const value = { list: new CanonicalArray(() => items.values()), n: 1 };
    expect(canonicalJson(value)).toBe(canonicalJson({ list: items, n: 1 }));
    expect(canonicalJsonBytes(value)).toEqual(canonicalJsonBytes({ list: items, n: 1 }));
  });

  it('refuses undefined from a CanonicalArray, naming the field', () => {
    expect(() => canonicalJsonBytes({ rows: new CanonicalArray(() => [1, undefined]) })).toThrow('rows[1]: undefined inside an array');
  });

  it('writes CanonicalJsonText as it is', () => {
    const inner = canonicalJsonBytes({ z: 'é', a: 1 });
    expect(canonicalJson({ k: new CanonicalJsonText(inner) })).toBe('{"k":{"a":1,"z":"é"}}');
    expect(canonicalJsonBytes({ k: new CanonicalJsonText(inner) }).toString('utf8')).toBe('{"k":{"a":1,"z":"é"}}');
  });

  it('grows its byte buffer past the first block without losing bytes', () => {
    const long = Array.from({ length: 5000 }, (_, i) => `row ${i} é`);
    expect(canonicalJsonBytes(long).toString('utf8')).toBe(canonicalJson(long));
  });
});

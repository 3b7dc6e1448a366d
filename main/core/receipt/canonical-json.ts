// Canonical JSON for signed payloads: one byte string per value, so the signer's bytes are
// reproducible and a verifier can tell a re-formatted payload from the signed one.
//
// Rules (JCS-like, RFC 8785, with one deliberate extension):
//   - object keys sorted by UTF-16 code units (JavaScript's default string order), no
//     whitespace anywhere, arrays keep their order;
//   - strings and finite numbers are written as JSON.stringify writes them (ECMAScript
//     shortest round-trip number form, so 1e21 stays 1e+21 and 0.1 stays 0.1);
//   - NaN, Infinity and -Infinity, which JSON cannot hold, are written as the STRINGS "NaN",
//     "Infinity" and "-Infinity" (a gate statistic such as a max ULP over a tensor with NaNs
//     must survive); a reader's schema turns them back with `canonicalNumberSchema`;
//   - -0 is written as 0 (the sign of a zero statistic carries no meaning in a receipt);
//   - object properties whose value is `undefined` are left out, as JSON.stringify does;
//   - anything else (undefined in an array, bigint, functions, symbols, Dates, Maps, class
//     instances, cycles) is a programming error and throws a TypeError naming the field.
import { z } from 'zod';
import { formatFieldPath } from '../bundle/errors.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export const NON_FINITE_SPELLINGS = ['NaN', 'Infinity', '-Infinity'] as const;

function numberText(value: number): string {
  if (Number.isNaN(value)) return '"NaN"';
  if (value === Infinity) return '"Infinity"';
  if (value === -Infinity) return '"-Infinity"';
  // JSON.stringify(-0) is "0".
  return JSON.stringify(value);
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A JSON array written item by item as `items()` yields them, never held whole: a receipt's
 * verdict table (a row per boundary, tens of thousands on a long run) is written into the signed
 * bytes row by row instead of being built as a tree of arrays first. Written exactly as the array
 * of the items would be.
 */
export class CanonicalArray {
  constructor(readonly items: () => Iterable<unknown>) {}
}

/** JSON already in canonical form (canonicalJsonBytes of a value), written as it is. */
export class CanonicalJsonText {
  constructor(readonly bytes: Uint8Array) {}
}

/** Where the canonical text goes: pieces of a string, or UTF-8 bytes in one growing buffer. */
interface Sink {
  text(piece: string): void;
  bytes(piece: Uint8Array): void;
}

class StringSink implements Sink {
  readonly pieces: string[] = [];
  text(piece: string): void {
    this.pieces.push(piece);
  }
  bytes(piece: Uint8Array): void {
    this.pieces.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('utf8'));
  }
}

// Bytes written straight into one buffer (doubled when full): a receipt of 16,720 rows is about
// half a million pieces, which as an array of strings all survive until the final join.
class ByteSink implements Sink {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;
  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
  text(piece: string): void {
    this.reserve(piece.length * 3);
    this.length += this.buffer.write(piece, this.length, 'utf8');
  }
  bytes(piece: Uint8Array): void {
    this.reserve(piece.byteLength);
    this.buffer.set(piece, this.length);
    this.length += piece.byteLength;
  }
  result(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function writeItems(items: Iterable<unknown>, path: PropertyKey[], ancestors: Set<object>, out: Sink): void {
  out.text('[');
  let index = 0;
  for (const item of items) {
    if (index > 0) out.text(',');
    path.push(index);
    if (item === undefined) throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: undefined inside an array`);
    write(item, path, ancestors, out);
    path.pop();
    index += 1;
  }
  out.text(']');
}

// `path` is one stack, pushed and popped as the walk descends (and formatted only for an error):
// a copy per value made a receipt of 16,720 rows allocate over 200 MB of path arrays.
function write(value: unknown, path: PropertyKey[], ancestors: Set<object>, out: Sink): void {
  if (value === null) {
    out.text('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.text(value ? 'true' : 'false');
      return;
    case 'number':
      out.text(numberText(value));
      return;
    case 'string':
      out.text(JSON.stringify(value));
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: a ${typeof value} is not a JSON value`);
  }
  if (value instanceof CanonicalJsonText) {
    out.bytes(value.bytes);
    return;
  }
  if (ancestors.has(value)) throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: the value contains itself (a cycle)`);
  ancestors.add(value);
  if (Array.isArray(value)) {
    writeItems(value as unknown[], path, ancestors, out);
  } else if (value instanceof CanonicalArray) {
    writeItems(value.items(), path, ancestors, out);
  } else {
    if (!isPlainObject(value)) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: a ${kind} is not a plain JSON object (convert it first, e.g. a Date to an ISO string)`);
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    out.text('{');
    keys.forEach((key, index) => {
      if (index > 0) out.text(',');
      out.text(`${JSON.stringify(key)}:`);
      path.push(key);
      write(record[key], path, ancestors, out);
      path.pop();
    });
    out.text('}');
  }
  ancestors.delete(value);
}

export function canonicalJson(value: unknown): string {
  const out = new StringSink();
  write(value, [], new Set(), out);
  return out.pieces.join('');
}

/** canonicalJson's text as UTF-8, written straight into bytes (no intermediate string). */
export function canonicalJsonBytes(value: unknown): Buffer {
  const out = new ByteSink();
  write(value, [], new Set(), out);
  return out.result();
}

export const canonicalNumberSchema = z.union([z.number(), z.enum(NON_FINITE_SPELLINGS).transform((text) => Number(text))]);

/** Any JSON value, as JSON.parse produces it. */
export const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

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

// `path` is one stack, pushed and popped as the walk descends (and formatted only for an error):
// a copy per value made a receipt of 16,720 rows allocate over 200 MB of path arrays.
function write(value: unknown, path: PropertyKey[], ancestors: Set<object>, out: string[]): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      out.push(numberText(value));
      return;
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: a ${typeof value} is not a JSON value`);
  }
  if (ancestors.has(value)) throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: the value contains itself (a cycle)`);
  ancestors.add(value);
  if (Array.isArray(value)) {
    out.push('[');
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      if (index > 0) out.push(',');
      path.push(index);
      if (item === undefined) throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: undefined inside an array`);
      write(item, path, ancestors, out);
      path.pop();
    }
    out.push(']');
  } else {
    if (!isPlainObject(value)) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new TypeError(`canonical JSON: ${formatFieldPath(path)}: a ${kind} is not a plain JSON object (convert it first, e.g. a Date to an ISO string)`);
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    out.push('{');
    keys.forEach((key, index) => {
      if (index > 0) out.push(',');
      out.push(JSON.stringify(key), ':');
      path.push(key);
      write(record[key], path, ancestors, out);
      path.pop();
    });
    out.push('}');
  }
  ancestors.delete(value);
}

/** The canonical JSON text of `value` (see the rules at the top of this file). */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, [], new Set(), out);
  return out.join('');
}

/** The UTF-8 bytes of the canonical JSON text: what a DSSE envelope signs. */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/**
 * A number field of a canonical-JSON document: a JSON number, or one of the strings "NaN",
 * "Infinity", "-Infinity", which parse back to the non-finite number. Use it in the schema
 * that reads a predicate, wherever the writer may have stored a non-finite number.
 */
export const canonicalNumberSchema = z.union([z.number(), z.enum(NON_FINITE_SPELLINGS).transform((text) => Number(text))]);

/** Any JSON value, as JSON.parse produces it. */
export const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

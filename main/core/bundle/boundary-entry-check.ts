// A fast, exact check of one manifest boundary entry: a long run's manifest holds tens of
// thousands of them (a 50k-row run's is 24 MB of JSON), and zod's generic walk over each was most
// of the second it took to validate one — on the path between opening a run and its first rows.
//
// The check accepts only entries BoundaryEntrySchema accepts, and returns what that schema would
// return (a fresh object, the schema's key order, copied shape and strides); anything it is not
// sure of — a wrong type, a missing or unknown key, a value it does not check itself — it leaves
// to the schema (returns null), so every message about a bad entry is still zod's, naming the
// field. The nested objects it does not check by hand (a contract, a valid region, chunk digests:
// few per manifest, or small) go through their own zod schemas.
// (manifest-schema.ts hands it the nested schemas: it imports this module.)
import type { z } from 'zod';
import { DTYPES } from './dtype.ts';

const REQUIRED_KEYS = ['name', 'stage', 'dtype', 'shape', 'strides', 'layout', 'key', 'sha256', 'byte_length', 'valid', 'contract'] as const;
const KNOWN_KEYS: ReadonlySet<string> = new Set([...REQUIRED_KEYS, 'chunks']);
const DTYPE_SET: ReadonlySet<unknown> = new Set(DTYPES);
const SHA256_HEX = /^[0-9a-f]{64}$/;

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** A copy of `value` when it is an array of safe integers (at least `min`), else null. */
function integers(value: unknown, min: number): number[] | null {
  if (!Array.isArray(value)) return null;
  const out = new Array<number>(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (!Number.isSafeInteger(item) || (item as number) < min) return null;
    out[i] = item as number;
  }
  return out;
}

/** The schemas of a boundary entry's nested objects, as BoundaryEntrySchema declares them. */
export interface NestedEntrySchemas {
  readonly valid: z.ZodType;
  readonly contract: z.ZodType;
  readonly chunks: z.ZodType;
}

/**
 * Contracts already parsed in one manifest, by their JSON: a reference states a contract per
 * boundary, most of them equal (a 50k-boundary reference held 50k copies, about half its ~100 MB
 * in memory, on every thread that opened it). Entries with equal contracts share one parsed
 * object; nothing mutates a manifest's contracts.
 */
export type ContractsSeen = Map<string, unknown>;

/** The parsed `contract`, or the equal one parsed before it (keyed by the parsed value's JSON). */
function shared(contract: unknown, seen: ContractsSeen | undefined): unknown {
  if (seen === undefined || contract === null || typeof contract !== 'object') return contract;
  const text = JSON.stringify(contract);
  const before = seen.get(text);
  if (before !== undefined) return before;
  seen.set(text, contract);
  return contract;
}

/**
 * BoundaryEntrySchema's output for `value` when this check can tell it is valid; null when it is
 * invalid or the check cannot tell (the caller then parses it with the schema). With `seen`,
 * equal contracts come out as one shared object.
 */
export function checkedBoundaryEntry(value: unknown, nested: NestedEntrySchemas, seen?: ContractsSeen): Record<string, unknown> | null {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return null;
  const entry = value as Record<string, unknown>;
  let keys = 0;
  for (const key in entry) {
    // An unknown key (a strict object refuses it), or a key holding undefined (zod's call).
    if (!KNOWN_KEYS.has(key) || entry[key] === undefined) return null;
    keys += 1;
  }
  const hasChunks = Object.hasOwn(entry, 'chunks');
  if (keys !== REQUIRED_KEYS.length + (hasChunks ? 1 : 0)) return null;
  const { name, stage, dtype, layout, key, sha256, byte_length: byteLength, valid, contract, chunks } = entry;
  if (!isNonEmptyString(name) || !isNonEmptyString(stage) || !isNonEmptyString(key)) return null;
  if (!DTYPE_SET.has(dtype) || (layout !== 'row-major' && layout !== 'strided')) return null;
  if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) return null;
  if (!Number.isSafeInteger(byteLength) || (byteLength as number) < 0) return null;
  const shape = integers(entry['shape'], 0);
  const strides = integers(entry['strides'], Number.MIN_SAFE_INTEGER);
  if (shape === null || strides === null) return null;
  const checkedValid = valid === null ? null : nested.valid.safeParse(valid);
  const checkedContract = contract === null ? null : nested.contract.safeParse(contract);
  const checkedChunks = hasChunks ? nested.chunks.safeParse(chunks) : null;
  if (checkedValid?.success === false || checkedContract?.success === false || checkedChunks?.success === false) return null;
  const out: Record<string, unknown> = {
    name,
    stage,
    dtype,
    shape,
    strides,
    layout,
    key,
    sha256,
    byte_length: byteLength,
    valid: checkedValid === null ? null : checkedValid.data,
    contract: checkedContract === null ? null : shared(checkedContract.data, seen),
  };
  if (checkedChunks !== null) out['chunks'] = checkedChunks.data;
  return out;
}

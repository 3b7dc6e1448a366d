// The safetensors header: its zod schema, the layout rules the reference implementation
// enforces (no overlap, no hole, data section fully used, sizes agree with dtype x shape), and
// its encoding for writers (sorted keys, padded with spaces to 8-byte alignment).
import { z } from 'zod';
import { DTypeSchema, DTYPES, DTYPE_SIZE, elementCount, type DType } from './dtype.ts';
import { BundleError, formatFieldPath, type BundleIssue } from './errors.ts';
import { issuesFromZod } from './zod-issues.ts';

/** Bound on the JSON header, as in the reference implementation (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;
export const METADATA_KEY = '__metadata__';

const Count = z.int().min(0);
export const SafetensorsEntrySchema = z.strictObject({
  dtype: DTypeSchema,
  shape: z.array(Count),
  data_offsets: z.tuple([Count, Count]),
});
export const SafetensorsMetadataSchema = z.record(z.string(), z.string());

export interface SafetensorsTensorInfo {
  readonly key: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Offsets relative to the start of the data section. */
  readonly begin: number;
  readonly end: number;
  readonly byteLength: number;
}

export interface SafetensorsHeader {
  /** Tensors in data order (ascending offsets). */
  readonly tensors: readonly SafetensorsTensorInfo[];
  readonly metadata: Readonly<Record<string, string>> | null;
}

const DTYPE_SET: ReadonlySet<unknown> = new Set(DTYPES);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * SafetensorsEntrySchema's result for an entry this check can tell is valid (a fresh object with
 * a copied shape), else null: the schema then parses it and names what is wrong. A pass file of
 * a long run holds thousands of entries, and zod's walk over each was most of reading its header.
 */
function checkedEntry(value: unknown): { success: true; data: z.infer<typeof SafetensorsEntrySchema> } | null {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return null;
  const entry = value as Record<string, unknown>;
  let keys = 0;
  for (const key in entry) {
    if ((key !== 'dtype' && key !== 'shape' && key !== 'data_offsets') || entry[key] === undefined) return null;
    keys += 1;
  }
  const { dtype, shape, data_offsets: offsets } = entry;
  if (keys !== 3 || !DTYPE_SET.has(dtype) || !Array.isArray(shape) || !shape.every(isCount)) return null;
  if (!Array.isArray(offsets) || offsets.length !== 2 || !isCount(offsets[0]) || !isCount(offsets[1])) return null;
  return { success: true, data: { dtype: dtype as DType, shape: [...(shape as number[])], data_offsets: [offsets[0], offsets[1]] } };
}

const headerField = (key: string, ...rest: PropertyKey[]): string => formatFieldPath(['header', key, ...rest]);

/**
 * Validates header JSON bytes against a data section of `dataBytes` bytes. Every problem is
 * reported at once as E_SAFETENSORS_HEADER naming `file` and the header field.
 */
export function parseSafetensorsHeader(headerBytes: Uint8Array, dataBytes: number, file: string): SafetensorsHeader {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch (cause) {
    throw new BundleError('E_SAFETENSORS_HEADER', file, 'header', 'is not valid UTF-8', { cause });
  }
  if (!text.startsWith('{')) {
    throw new BundleError('E_SAFETENSORS_HEADER', file, 'header', `expected a JSON object starting with "{", found ${JSON.stringify(text.slice(0, 16))}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new BundleError('E_SAFETENSORS_HEADER', file, 'header', `is not valid JSON: ${detail}`, { cause });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new BundleError('E_SAFETENSORS_HEADER', file, 'header', 'expected a JSON object');
  }

  const issues: BundleIssue[] = [];
  let metadata: Record<string, string> | null = null;
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (key === METADATA_KEY) {
      const parsed = SafetensorsMetadataSchema.safeParse(value);
      if (parsed.success) metadata = parsed.data;
      else issues.push(...issuesFromZod(parsed.error, value, 'E_SAFETENSORS_HEADER', ['header', key]));
      continue;
    }
    const parsed = checkedEntry(value) ?? SafetensorsEntrySchema.safeParse(value);
    if (!parsed.success) {
      issues.push(...issuesFromZod(parsed.error, value, 'E_SAFETENSORS_HEADER', ['header', key]));
      continue;
    }
    const {
      dtype,
      shape,
      data_offsets: [begin, end],
    } = parsed.data;
    if (end < begin) {
      issues.push({ code: 'E_SAFETENSORS_HEADER', field: headerField(key, 'data_offsets'), message: `end ${end} is before begin ${begin}` });
      continue;
    }
    const expected = elementCount(shape) * DTYPE_SIZE[dtype];
    if (end - begin !== expected) {
      issues.push({
        code: 'E_SAFETENSORS_HEADER',
        field: headerField(key, 'data_offsets'),
        message: `span [${begin}, ${end}) holds ${end - begin} bytes but ${dtype} of shape [${shape.join(', ')}] needs ${expected}`,
      });
    }
    tensors.push({ key, dtype, shape, begin, end, byteLength: end - begin });
  }

  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  let previous: SafetensorsTensorInfo | undefined;
  for (const tensor of tensors) {
    if (tensor.begin > cursor) {
      const after = previous === undefined ? 'the start of the data section' : `"${previous.key}" (ends at ${cursor})`;
      issues.push({
        code: 'E_SAFETENSORS_HEADER',
        field: headerField(tensor.key, 'data_offsets'),
        message: `begins at ${tensor.begin}, leaving a hole after ${after}`,
      });
    } else if (tensor.begin < cursor && previous !== undefined) {
      issues.push({
        code: 'E_SAFETENSORS_HEADER',
        field: headerField(tensor.key, 'data_offsets'),
        message: `[${tensor.begin}, ${tensor.end}) overlaps "${previous.key}" which ends at ${cursor}`,
      });
    }
    if (tensor.end > dataBytes) {
      issues.push({
        code: 'E_SAFETENSORS_HEADER',
        field: headerField(tensor.key, 'data_offsets'),
        message: `ends at ${tensor.end}, past the end of the data section (${dataBytes} bytes)`,
      });
    }
    cursor = Math.max(cursor, tensor.end);
    previous = tensor;
  }
  if (cursor < dataBytes) {
    issues.push({
      code: 'E_SAFETENSORS_HEADER',
      field: 'data_offsets',
      message: `tensors end at ${cursor} but the data section holds ${dataBytes} bytes (trailing bytes not described by the header)`,
    });
  }
  if (issues.length > 0) throw BundleError.fromIssues(file, issues);
  return { tensors, metadata };
}

export interface SafetensorsEntryLayout {
  readonly key: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly byteLength: number;
}

export interface EncodedHeader {
  /** The 8-byte length prefix followed by the padded JSON header. */
  readonly prefix: Buffer;
  /** Entries in data order with their offsets in the data section. */
  readonly entries: readonly SafetensorsTensorInfo[];
  readonly dataBytes: number;
}

/**
 * How a writer lays out the data section: 'key' puts tensors in key order (what the reference
 * implementation does for equal dtypes); 'given' keeps the caller's order, which lets a capture
 * copy its spill in one sequential run. The JSON header lists keys sorted either way, and readers
 * locate tensors by offset, so both are standard safetensors.
 */
export type DataOrder = 'key' | 'given';

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Encodes a header: `__metadata__` first, then the tensors sorted by key (code-unit order); the
 * JSON is padded with spaces so the data section starts on an 8-byte boundary, as the reference
 * implementation does.
 */
export function encodeSafetensorsHeader(
  layouts: readonly SafetensorsEntryLayout[],
  metadata?: Readonly<Record<string, string>> | null,
  dataOrder: DataOrder = 'key',
): EncodedHeader {
  const ordered = dataOrder === 'key' ? [...layouts].sort(byKey) : [...layouts];
  const entries: SafetensorsTensorInfo[] = [];
  const seen = new Set<string>();
  let offset = 0;
  for (const layout of ordered) {
    if (layout.key === METADATA_KEY) throw new Error(`"${METADATA_KEY}" is reserved and cannot name a tensor`);
    if (seen.has(layout.key)) throw new Error(`tensor key "${layout.key}" is given twice`);
    seen.add(layout.key);
    const expected = elementCount(layout.shape) * DTYPE_SIZE[layout.dtype];
    if (layout.byteLength !== expected) {
      throw new Error(`tensor "${layout.key}": ${layout.byteLength} bytes given but ${layout.dtype} of shape [${layout.shape.join(', ')}] needs ${expected}`);
    }
    entries.push({
      key: layout.key,
      dtype: layout.dtype,
      shape: [...layout.shape],
      begin: offset,
      end: offset + layout.byteLength,
      byteLength: layout.byteLength,
    });
    offset += layout.byteLength;
  }
  const header: Record<string, unknown> = {};
  if (metadata !== undefined && metadata !== null) header[METADATA_KEY] = { ...metadata };
  for (const entry of [...entries].sort(byKey)) {
    header[entry.key] = { dtype: entry.dtype, shape: [...entry.shape], data_offsets: [entry.begin, entry.end] };
  }
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const padding = (8 - (json.length % 8)) % 8;
  if (padding > 0) json = Buffer.concat([json, Buffer.alloc(padding, 0x20)]);
  if (json.length > MAX_HEADER_BYTES) throw new Error(`safetensors header of ${json.length} bytes exceeds ${MAX_HEADER_BYTES}`);
  const prefix = Buffer.allocUnsafe(8 + json.length);
  prefix.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(prefix, 8);
  return { prefix, entries, dataBytes: offset };
}

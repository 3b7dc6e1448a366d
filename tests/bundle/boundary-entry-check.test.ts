// The fast checks of manifest boundary entries (boundary-entry-check.ts) and safetensors header
// entries stand in for zod on most entries of a long run's manifest and pass files: it must never accept what BoundaryEntrySchema refuses,
// must return exactly what the schema returns, and must leave every refusal to the schema so the
// message names the field as before.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkedBoundaryEntry } from '../../main/core/bundle/boundary-entry-check.ts';
import { ChunkDigestsSchema } from '../../main/core/bundle/chunk-digests.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { BoundaryEntrySchema, ContractSchema, parseManifest, ValidRegionSchema } from '../../main/core/bundle/manifest-schema.ts';
import { parseSafetensorsHeader, SafetensorsEntrySchema, type SafetensorsHeader } from '../../main/core/bundle/safetensors-header.ts';
import { referenceBundle } from '../helpers/paths.ts';

const nested = { valid: ValidRegionSchema, contract: ContractSchema, chunks: ChunkDigestsSchema };
type Manifest = Record<string, unknown> & { passes: { boundaries: Record<string, unknown>[] }[] };
const committed = (): Manifest => JSON.parse(readFileSync(join(referenceBundle('greedy'), 'manifest.json'), 'utf8')) as Manifest;

const base = (): Record<string, unknown> => ({
  name: 'layer0.out',
  stage: 'backbone',
  dtype: 'F32',
  shape: [2, 3],
  strides: [3, 1],
  layout: 'row-major',
  key: 'layer0.out',
  sha256: 'a'.repeat(64),
  byte_length: 24,
  valid: null,
  contract: null,
});

const contract = { kind: 'bit_exact', nan_policy: 'positions', signed_zero: 'must_match', reason: 'copy' };
const chunks = { bytes: 1 << 20, sha256: ['b'.repeat(64)] };

// Each: a change to a valid entry. Valid variants first, then ones the schema refuses.
const variants: [string, (entry: Record<string, unknown>) => void][] = [
  ['as is', () => undefined],
  ['a contract', (e) => (e['contract'] = { ...contract })],
  ['a valid region', (e) => (e['valid'] = { axis: 0, length: 1, padding: 'zero' })],
  ['chunk digests', (e) => (e['chunks'] = { ...chunks, sha256: [...chunks.sha256] })],
  ['keys in another order', (e) => Object.assign(e, { contract: e['contract'], name: e['name'] })],
  ['-0 in the shape', (e) => (e['shape'] = [-0, 3])],
  ['an empty shape', (e) => (e['shape'] = [])],
  ['a negative stride', (e) => (e['strides'] = [-3, 1])],
  ['strided', (e) => (e['layout'] = 'strided')],
  ['an unknown key', (e) => (e['extra'] = 1)],
  ['a missing name', (e) => delete e['name']],
  ['an empty name', (e) => (e['name'] = '')],
  ['a numeric stage', (e) => (e['stage'] = 3)],
  ['an unknown dtype', (e) => (e['dtype'] = 'F99')],
  ['a lowercase dtype', (e) => (e['dtype'] = 'f32')],
  ['a negative dimension', (e) => (e['shape'] = [-1, 3])],
  ['a fractional dimension', (e) => (e['shape'] = [1.5, 3])],
  ['an unsafe dimension', (e) => (e['shape'] = [2 ** 60, 3])],
  ['a string dimension', (e) => (e['shape'] = ['2', 3])],
  ['a shape that is an object', (e) => (e['shape'] = { 0: 2 })],
  ['a fractional stride', (e) => (e['strides'] = [0.5, 1])],
  ['a NaN stride', (e) => (e['strides'] = [Number.NaN, 1])],
  ['an unknown layout', (e) => (e['layout'] = 'column-major')],
  ['an uppercase sha256', (e) => (e['sha256'] = 'A'.repeat(64))],
  ['a short sha256', (e) => (e['sha256'] = 'a'.repeat(63))],
  ['a sha256 with a newline', (e) => (e['sha256'] = `${'a'.repeat(64)}\n`)],
  ['a negative byte_length', (e) => (e['byte_length'] = -1)],
  ['an infinite byte_length', (e) => (e['byte_length'] = Number.POSITIVE_INFINITY)],
  ['a missing valid', (e) => delete e['valid']],
  ['an undefined contract', (e) => (e['contract'] = undefined)],
  ['undefined chunks', (e) => (e['chunks'] = undefined)],
  ['a bad contract', (e) => (e['contract'] = { ...contract, kind: 'close_enough' })],
  ['a bad valid region', (e) => (e['valid'] = { axis: 0, length: 1, padding: 'ones' })],
  ['a bad chunk size', (e) => (e['chunks'] = { ...chunks, bytes: 3 })],
  ['an array', (e) => Object.setPrototypeOf(e, Array.prototype)],
  ['no prototype', (e) => Object.setPrototypeOf(e, null)],
];

describe('the fast check of a boundary entry', () => {
  it.each(variants)('%s: accepted only when the schema accepts it, with the schema output', (_label, change) => {
    const entry = base();
    change(entry);
    const fast = checkedBoundaryEntry(entry, nested);
    const schema = BoundaryEntrySchema.safeParse(entry);
    if (fast !== null) {
      expect(schema.success).toBe(true);
      // The same values in the same key order, in fresh arrays.
      expect(JSON.stringify(fast)).toBe(JSON.stringify(schema.data));
      expect(fast).toStrictEqual(schema.data);
      expect(fast['shape']).not.toBe(entry['shape']);
    }
    // The valid variants the check is meant for are told valid without zod.
    if (['as is', 'a contract', 'chunk digests', '-0 in the shape', 'a negative stride'].includes(_label)) expect(fast).not.toBeNull();
  });

  it('the committed reference manifest parses to what the schema alone gives', () => {
    const manifest = committed();
    const parsed = parseManifest(manifest, 'manifest.json');
    manifest.passes.forEach((pass, p) =>
      pass.boundaries.forEach((entry, b) => expect(parsed.passes[p]?.boundaries[b]).toStrictEqual(BoundaryEntrySchema.parse(entry))),
    );
  });

  it('equal contracts of a manifest come out as one shared object, different ones apart', () => {
    const manifest = committed();
    const entries = manifest.passes.flatMap((pass) => pass.boundaries);
    const parsed = parseManifest(manifest, 'manifest.json').passes.flatMap((pass) => pass.boundaries);
    const distinct = new Set(entries.map((entry) => JSON.stringify(entry['contract'])));
    expect(entries.length).toBeGreaterThan(distinct.size);
    expect(new Set(parsed.map((entry) => entry.contract)).size).toBe(distinct.size);
    parsed.forEach((entry, i) => expect(entry.contract).toStrictEqual(ContractSchema.parse(entries[i]?.['contract'])));
  });

  it('a corrupt entry late in a long manifest still fails the parse, naming the field', () => {
    const manifest = committed();
    const last = manifest.passes.length - 1;
    const entries = manifest.passes[last]!.boundaries;
    entries[entries.length - 1]!['byte_length'] = -4;
    let error: unknown;
    try {
      parseManifest(manifest, 'manifest.json');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).issues.map((issue) => issue.field)).toEqual([`passes[${last}].boundaries[${entries.length - 1}].byte_length`]);
  });
});

describe('the fast check of a safetensors header entry', () => {
  const header = (entry: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify({ t: entry }));
  const valid = { dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] };
  it.each([
    ['as is', valid],
    ['an unknown key', { ...valid, extra: 1 }],
    ['a missing shape', { dtype: 'F32', data_offsets: [0, 24] }],
    ['an unknown dtype', { ...valid, dtype: 'F99' }],
    ['a fractional dimension', { ...valid, shape: [2.5, 3] }],
    ['a negative offset', { ...valid, data_offsets: [-1, 23] }],
    ['three offsets', { ...valid, data_offsets: [0, 24, 24] }],
    ['string offsets', { ...valid, data_offsets: ['0', 24] }],
    ['an array', [valid]],
  ])('%s: accepted exactly when the schema accepts it', (_label, entry) => {
    const schema = SafetensorsEntrySchema.safeParse(entry);
    let accepted: SafetensorsHeader | null = null;
    let error: unknown = null;
    try {
      accepted = parseSafetensorsHeader(header(entry), 24, 'pass-000.safetensors');
    } catch (caught) {
      error = caught;
    }
    expect(accepted !== null).toBe(schema.success);
    if (accepted !== null) expect(accepted.tensors).toEqual([{ key: 't', dtype: 'F32', shape: [2, 3], begin: 0, end: 24, byteLength: 24 }]);
    // A refusal is zod's, naming the entry's field.
    else expect((error as BundleError).issues[0]?.field).toMatch(/^header\.t/);
  });
});

// A tensor file whose header changed after its bundle was opened is refused when the file is
// opened again to be read (bundle-reader.ts, acquire): the tensor must be where, what and of the
// shape the open checked. The reader keeps what it checked compactly (the offset and byte length
// from the header; dtype and shape from the manifest entry the header had to agree with), and each
// part of that check is proved here by a header that changes only that part.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError, formatFieldPath } from '../../main/core/bundle/errors.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { rawSafetensors, readManifestJson, removeTempDirs, writeSmallBundle } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** A safetensors file's header and data section. */
function splitSafetensors(bytes: Buffer): { header: Record<string, HeaderEntry>; data: Buffer } {
  const length = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as Record<string, HeaderEntry>, data: bytes.subarray(8 + length) };
}

describe('a tensor file whose header changed after the open', () => {
  const { dir } = writeSmallBundle('header-unchanged');
  const manifest = readManifestJson(dir);
  const pass = manifest.passes[0];
  const entry = pass?.boundaries.find((boundary) => boundary.name === 'backbone.embed');
  if (pass === undefined || entry === undefined) throw new Error('the small bundle lost backbone.embed');
  const path = join(dir, pass.file);
  const original = readFileSync(path);
  const { header, data } = splitSafetensors(original);

  /** Opens the bundle on the original file, writes `changed` in its place, and reads the tensor. */
  async function readAfter(changed: Uint8Array): Promise<number> {
    writeFileSync(path, original);
    const bundle = await openBundle(dir);
    try {
      writeFileSync(path, changed);
      return (await bundle.readBoundary(0, entry?.name as string)).data.byteLength;
    } finally {
      await bundle.close();
    }
  }

  /** The file with the tensor's header entry edited; `last`: its bytes moved to the end of the data. */
  const withEntry = (edit: (tensor: HeaderEntry) => HeaderEntry, last = false): Uint8Array => {
    const order = Object.keys(header).sort((a, b) => (header[a] as HeaderEntry).data_offsets[0] - (header[b] as HeaderEntry).data_offsets[0]);
    if (last) order.push(...order.splice(order.indexOf(entry.key), 1));
    const edited: Record<string, HeaderEntry> = {};
    const pieces: Buffer[] = [];
    let offset = 0;
    for (const key of order) {
      const tensor = header[key] as HeaderEntry;
      const bytes = data.subarray(tensor.data_offsets[0], tensor.data_offsets[1]);
      const placed = { ...tensor, data_offsets: [offset, offset + bytes.length] as [number, number] };
      edited[key] = key === entry.key ? edit(placed) : placed;
      pieces.push(bytes);
      offset += bytes.length;
    }
    return rawSafetensors(edited, Buffer.concat(pieces));
  };

  it('reads it when the header is as it was (the check refuses no file that kept its header)', async () => {
    expect(await readAfter(withEntry((tensor) => tensor))).toBe(entry.byte_length);
  });

  it.each([
    ['moved in the file', withEntry((tensor) => tensor, true)],
    ['of another dtype', withEntry((tensor) => ({ ...tensor, dtype: 'I32' }))],
    ['of another shape', withEntry((tensor) => ({ ...tensor, shape: [...tensor.shape].reverse() }))],
  ])('refuses it %s, naming the file and the tensor in the header', async (_what, changed) => {
    const error = await rejectionOf(readAfter(changed), BundleError);
    expect(error.code).toBe('E_SAFETENSORS_HEADER');
    expect(error.file).toBe(path);
    expect(error.field).toBe(formatFieldPath(['header', entry.key]));
    expect(error.message).toContain('changed since the bundle was opened');
  });
});

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DTYPES, DTYPE_SIZE } from '../../main/core/bundle/dtype.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import { writeSafetensorsFile } from '../../main/core/bundle/safetensors-writer.ts';
import { bytes, expectBundleError, rawSafetensors, removeTempDirs, tempDir } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

describe('safetensors writer and reader', () => {
  it('round-trips a tensor of every dtype byte for byte', async () => {
    const dir = tempDir('st-roundtrip');
    const tensors = DTYPES.map((dtype, i) => ({
      key: `t.${dtype.toLowerCase()}`,
      dtype,
      shape: [3, 5 - (i % 3)],
      data: bytes(3 * (5 - (i % 3)) * DTYPE_SIZE[dtype], i + 1),
    }));
    const path = join(dir, 'all.safetensors');
    const written = writeSafetensorsFile(path, tensors, { metadata: { format: 'pt' } });
    expect(written.bytes).toBe(statSync(path).size);

    const file = await SafetensorsFile.open(path);
    try {
      expect(file.metadata).toEqual({ format: 'pt' });
      expect(file.keys().sort()).toEqual(tensors.map((t) => t.key).sort());
      for (const tensor of tensors) {
        const info = file.info(tensor.key);
        expect(info.dtype).toBe(tensor.dtype);
        expect(info.shape).toEqual(tensor.shape);
        expect(Buffer.from(await file.readTensor(tensor.key)).equals(Buffer.from(tensor.data))).toBe(true);
      }
    } finally {
      await file.close();
    }
  });

  it('writes the header as the reference implementation does: metadata first, keys sorted, padded with spaces to 8 bytes', () => {
    const dir = tempDir('st-layout');
    const path = join(dir, 'two.safetensors');
    writeSafetensorsFile(
      path,
      [
        { key: 'b', dtype: 'F32', shape: [1], data: Uint8Array.from([1, 2, 3, 4]) },
        { key: 'a', dtype: 'U8', shape: [2], data: Uint8Array.from([9, 8]) },
      ],
      { metadata: { format: 'pt' } },
    );
    const file = readFileSync(path);
    const json = '{"__metadata__":{"format":"pt"},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}';
    const padded = json + ' '.repeat((8 - (json.length % 8)) % 8);
    const expected = Buffer.alloc(8);
    expected.writeBigUInt64LE(BigInt(padded.length));
    expect(file.equals(Buffer.concat([expected, Buffer.from(padded), Buffer.from([9, 8, 1, 2, 3, 4])]))).toBe(true);
    expect((8 + padded.length) % 8).toBe(0);
  });

  it('reads a tensor larger than the chunk size in chunks that concatenate to the whole', async () => {
    const dir = tempDir('st-chunks');
    const path = join(dir, 'big.safetensors');
    const big = bytes(1_000_003, 7);
    writeSafetensorsFile(path, [
      { key: 'small', dtype: 'U8', shape: [5], data: bytes(5, 8) },
      { key: 'big', dtype: 'U8', shape: [big.length], data: big },
    ]);
    const file = await SafetensorsFile.open(path);
    try {
      const chunks: Uint8Array[] = [];
      for await (const chunk of file.readTensorChunks('big', 65_536)) {
        expect(chunk.byteLength).toBeLessThanOrEqual(65_536);
        chunks.push(chunk);
      }
      expect(chunks.length).toBe(Math.ceil(big.length / 65_536));
      expect(Buffer.concat(chunks).equals(Buffer.from(big))).toBe(true);
      expect(Buffer.from(await file.readTensor('big')).equals(Buffer.from(big))).toBe(true);
    } finally {
      await file.close();
    }
  });

  it('refuses to overwrite an existing file and leaves it and the folder untouched', () => {
    const dir = tempDir('st-refuse');
    const path = join(dir, 'x.safetensors');
    writeFileSync(path, 'precious evidence');
    const before = statSync(path);
    expect(() => writeSafetensorsFile(path, [{ key: 'a', dtype: 'U8', shape: [1], data: Uint8Array.from([1]) }])).toThrow(/already exists/);
    expect(readFileSync(path, 'utf8')).toBe('precious evidence');
    expect(statSync(path).mtimeMs).toBe(before.mtimeMs);
    expect(readdirSync(dir)).toEqual(['x.safetensors']);
  });

  it('rejects data whose length disagrees with dtype x shape before writing anything', () => {
    const dir = tempDir('st-len');
    const path = join(dir, 'bad.safetensors');
    expect(() => writeSafetensorsFile(path, [{ key: 'a', dtype: 'F32', shape: [2], data: Uint8Array.from([1, 2, 3]) }])).toThrow(/needs 8/);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('safetensors header validation', () => {
  const place = (label: string, content: Uint8Array): string => {
    const path = join(tempDir(label), 'bad.safetensors');
    writeFileSync(path, content);
    return path;
  };
  const good = { a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } };

  it('accepts a valid hand-made file', async () => {
    const file = await SafetensorsFile.open(place('st-ok', rawSafetensors(good, bytes(8))));
    expect(file.keys()).toEqual(['a', 'b']);
    await file.close();
  });

  it('rejects a file of fewer than 8 bytes', async () => {
    const path = place('st-tiny', Uint8Array.from([1, 2, 3]));
    await expectBundleError(SafetensorsFile.open(path), 'E_SAFETENSORS_HEADER', path, 'header length');
  });

  it('rejects a header larger than 100 MB without reading it', async () => {
    const path = place('st-huge', rawSafetensors(good, bytes(8), 200_000_000n));
    const error = await expectBundleError(SafetensorsFile.open(path), 'E_SAFETENSORS_HEADER', path, 'header length');
    expect(error.message).toContain('limit');
  });

  it('rejects invalid JSON and a header that is not an object', async () => {
    const notJson = Buffer.concat([Buffer.from([5, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{"a":')]);
    const path = place('st-json', new Uint8Array(notJson));
    await expectBundleError(SafetensorsFile.open(path), 'E_SAFETENSORS_HEADER', path, 'header');
  });

  it('rejects an unknown dtype and a non-integer shape, naming each tensor', async () => {
    const path = place(
      'st-dtype',
      rawSafetensors({ a: { dtype: 'F8', shape: [4], data_offsets: [0, 4] }, b: { dtype: 'U8', shape: [1.5], data_offsets: [4, 5] } }, bytes(5)),
    );
    const error = await expectBundleError(SafetensorsFile.open(path), 'E_SAFETENSORS_HEADER', path, 'header.a.dtype');
    expect(error.message).toContain('header.b.shape[0]');
  });

  it('rejects offsets past the end of the file', async () => {
    const path = place('st-past', rawSafetensors({ a: { dtype: 'U8', shape: [16], data_offsets: [0, 16] } }, bytes(8)));
    await expectBundleError(SafetensorsFile.open(path), 'E_SAFETENSORS_HEADER', path, 'header.a.data_offsets');
  });

  it('rejects trailing bytes the header does not describe', async () => {
    const path = place('st-trail', rawSafetensors({ a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] } }, bytes(6)));
    await expectBundleError(SafetensorsFile.open(path), 'E_SAFETENSORS_HEADER', path, 'data_offsets');
  });

  it('never reads tensor data at open: a header-only read of a large file is fast and bounded', async () => {
    const dir = tempDir('st-lazy');
    const path = join(dir, 'lazy.safetensors');
    writeSafetensorsFile(path, [{ key: 'a', dtype: 'U8', shape: [8_000_000], data: new Uint8Array(8_000_000) }]);
    const file = await SafetensorsFile.open(path);
    expect(file.dataStart).toBeLessThan(200);
    expect(file.tensors[0]?.byteLength).toBe(8_000_000);
    await file.close();
  });
});

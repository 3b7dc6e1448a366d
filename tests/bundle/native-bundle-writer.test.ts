import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { NativeBundleWriter } from '../../main/core/bundle/native-bundle-writer.ts';
import { bytes, expectBundleError, nativeHeader, removeTempDirs, smallRecords, tempDir, writeSmallBundle } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

describe('NativeBundleWriter', () => {
  it('writes a bundle that openBundle accepts and reads back byte for byte', async () => {
    const { dir, records } = writeSmallBundle('roundtrip');
    expect(readdirSync(dir).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors', 'pass-001.safetensors']);
    const bundle = await openBundle(dir);
    try {
      expect(bundle.manifest.kind).toBe('native');
      expect(bundle.manifest.run?.status).toBe('completed');
      expect(bundle.passes.map((pass) => [pass.index, pass.kind, pass.mode])).toEqual([[0, 'prefill', 'text'], [1, 'decode', 'audio']]);
      for (const [index, pass] of records.entries()) {
        // Boundaries keep their emission order.
        expect(bundle.passes[index]?.boundaries.map((boundary) => boundary.name)).toEqual(pass.map((record) => record.name));
        for (const record of pass) {
          const read = await bundle.readBoundary(index, record.name);
          expect(read.dtype).toBe(record.dtype);
          expect(read.shape).toEqual(record.shape);
          expect(read.strides).toEqual(record.strides);
          expect(Buffer.from(read.data).equals(Buffer.from(record.data))).toBe(true);
          const chunks: Uint8Array[] = [];
          for await (const chunk of bundle.readBoundaryChunks(index, record.name, 7)) chunks.push(chunk);
          expect(Buffer.concat(chunks).equals(Buffer.from(record.data))).toBe(true);
          expect(bundle.boundary(index, record.name)?.contract).toBeNull();
        }
      }
      expect(bundle.boundary(0, 'backbone.l0.k_append')?.layout).toBe('strided');
      expect(bundle.boundary(0, 'backbone.embed')?.layout).toBe('row-major');
      const tokens = await bundle.readInput('prompt_tokens');
      expect(Array.from(new Int32Array(tokens.data.buffer, tokens.data.byteOffset, 4))).toEqual([1, 2, -1, 3]);
      await expectBundleError(bundle.readBoundary(1, 'backbone.l0.kv_len'), 'E_BOUNDARY_MISSING', join(dir, 'manifest.json'), 'passes[1]');
    } finally {
      await bundle.close();
    }
  });

  it('accepts input data base64-encoded (a header sent as JSON between threads)', async () => {
    const dir = join(tempDir('base64'), 'bundle');
    const header = nativeHeader();
    const inputs = header.inputs.map((input) => ({ ...input, data: Buffer.from(input.data as Uint8Array).toString('base64') }));
    const writer = NativeBundleWriter.create(dir, JSON.parse(JSON.stringify({ ...header, inputs })) as unknown);
    const path = writer.finish({ status: 'engine_error', message: 'failed before prefill', last_pass: null, last_boundary: null });
    const bundle = await openBundle(dir);
    expect(bundle.manifestPath).toBe(path);
    expect(bundle.passes).toEqual([]);
    expect(Array.from((await bundle.readInput('seed')).data)).toEqual([42, 0, 0, 0, 0, 0, 0, 0]);
    await bundle.close();
  });

  it('refuses a non-empty target folder and leaves its files untouched', () => {
    const dir = tempDir('nonempty');
    writeFileSync(join(dir, 'manifest.json'), '{"precious": true}');
    const before = statSync(join(dir, 'manifest.json')).mtimeMs;
    expect(() => NativeBundleWriter.create(dir, nativeHeader())).toThrowError(expect.objectContaining({ code: 'E_TARGET_NOT_EMPTY' }));
    expect(readdirSync(dir)).toEqual(['manifest.json']);
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toBe('{"precious": true}');
    expect(statSync(join(dir, 'manifest.json')).mtimeMs).toBe(before);
  });

  it('accepts an existing empty folder', () => {
    const dir = join(tempDir('empty'), 'bundle');
    mkdirSync(dir);
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.close();
    expect(existsSync(join(dir, 'capture.journal.jsonl'))).toBe(true);
  });

  it('rejects a header that cannot prove its provenance, naming every missing field, before writing anything', async () => {
    const dir = join(tempDir('bad-header'), 'bundle');
    const header = nativeHeader() as unknown as { provenance: { runtime: Record<string, unknown>; model: Record<string, unknown> } };
    delete header.provenance.runtime['engine_library_sha256'];
    delete header.provenance.model['checkpoint_revision'];
    const error = await expectBundleError(() => NativeBundleWriter.create(dir, header), 'E_PROVENANCE', dir, 'provenance.model.checkpoint_revision');
    expect(error.message).toContain('provenance.runtime.engine_library_sha256');
    expect(existsSync(dir)).toBe(false);
  });

  it('rejects the same boundary twice in a pass, and records of the wrong size', async () => {
    const dir = join(tempDir('duplicate'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    const [first] = smallRecords()[0] ?? [];
    if (first === undefined) throw new Error('no record');
    writer.appendRecord(first);
    await expectBundleError(() => writer.appendRecord(first), 'E_DUPLICATE_BOUNDARY', join(dir, 'pass-000.safetensors'), 'record "backbone.embed".name');
    await expectBundleError(() => writer.appendRecord({ ...first, name: 'short', data: bytes(5) }), 'E_BYTE_LENGTH', join(dir, 'pass-000.safetensors'), 'record "short".data');
    await expectBundleError(() => writer.beginPass(1, 'decode'), 'E_WRITER_STATE', dir, 'beginPass');
    writer.endPass('text');
    await expectBundleError(() => writer.beginPass(2, 'decode'), 'E_PASS_ORDER', dir, 'beginPass.index');
    await expectBundleError(() => writer.appendRecord(first), 'E_WRITER_STATE', dir, 'appendRecord');
    writer.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: 'backbone.embed' });
    const bundle = await openBundle(dir);
    expect(bundle.passes[0]?.boundaries.map((boundary) => boundary.name)).toEqual(['backbone.embed']);
    await bundle.close();
  });
});

describe('NativeBundleWriter.recover', () => {
  /** Captures pass 0 fully and three records of pass 1, then stops without sealing (a crash). */
  function crashedCapture(label: string): { dir: string; writer: NativeBundleWriter } {
    const dir = join(tempDir(label), 'bundle');
    const records = smallRecords();
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    for (const record of records[0] ?? []) writer.appendRecord(record);
    writer.endPass('text');
    writer.beginPass(1, 'decode');
    for (const record of (records[1] ?? []).slice(0, 3)) writer.appendRecord(record);
    writer.close();
    return { dir, writer };
  }

  it('seals a pass whose spill lost the tail of its last record: the torn record is dropped', async () => {
    const { dir } = crashedCapture('recover-short-spill');
    const spill = join(dir, 'pass-001.spill');
    truncateSync(spill, statSync(spill).size - 3);
    const path = NativeBundleWriter.recover(dir, { status: 'crashed', message: 'SIGSEGV in ti_decode' });
    expect(path).toBe(join(dir, 'manifest.json'));
    expect(readdirSync(dir).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors', 'pass-001.safetensors']);

    const bundle = await openBundle(dir);
    try {
      const expected = smallRecords();
      expect(bundle.passes[0]?.boundaries.length).toBe(expected[0]?.length);
      expect(bundle.passes[1]?.boundaries.map((boundary) => boundary.name)).toEqual((expected[1] ?? []).slice(0, 2).map((record) => record.name));
      expect(bundle.passes[1]?.mode).toBeNull();
      for (const [index, pass] of expected.entries()) {
        for (const record of pass) {
          if (bundle.boundary(index, record.name) === undefined) continue;
          expect(Buffer.from((await bundle.readBoundary(index, record.name)).data).equals(Buffer.from(record.data))).toBe(true);
        }
      }
      const run = bundle.manifest.run;
      expect(run?.status).toBe('crashed');
      expect(run?.last_pass).toBe(1);
      expect(run?.last_boundary).toBe('backbone.half');
      expect(run?.message).toContain('SIGSEGV in ti_decode');
      expect(run?.message).toContain('1 torn record dropped');
    } finally {
      await bundle.close();
    }
  });

  it('drops a last record whose spill bytes are present but do not hash to its journaled sha256', async () => {
    const { dir } = crashedCapture('recover-garbled-spill');
    const spill = join(dir, 'pass-001.spill');
    const size = statSync(spill).size;
    const content = readFileSync(spill);
    content.fill(0, size - 8); // same length, different bytes (e.g. a write that never completed)
    writeFileSync(spill, content);
    NativeBundleWriter.recover(dir, { status: 'crashed', message: '' });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.passes[1]?.boundaries.map((boundary) => boundary.name)).toEqual(['backbone.embed', 'backbone.half']);
      expect(bundle.manifest.run?.message).toContain('1 torn record dropped');
    } finally {
      await bundle.close();
    }
  });

  it('ignores a torn journal line and spill bytes no journal line describes', async () => {
    const { dir } = crashedCapture('recover-torn-journal');
    appendFileSync(join(dir, 'pass-001.spill'), bytes(16, 9)); // data of a record whose line never landed
    appendFileSync(join(dir, 'capture.journal.jsonl'), '{"t":"record","pass":1,"name":"depth.spec'); // torn line
    NativeBundleWriter.recover(dir, { status: 'crashed', message: '', last_pass: 1, last_boundary: 'depth.spectrum' });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.passes[1]?.boundaries.map((boundary) => boundary.name)).toEqual(['backbone.embed', 'backbone.half', 'backbone.bhalf']);
      // Outcome fields given by the caller are kept as given.
      expect(bundle.manifest.run?.last_boundary).toBe('depth.spectrum');
    } finally {
      await bundle.close();
    }
  });

  it('recovers a capture whose process was killed by SIGKILL mid-pass', async () => {
    const dir = join(tempDir('recover-sigkill'), 'bundle');
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'capture-crash-child.ts'), dir], { encoding: 'utf8' });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    expect(existsSync(join(dir, 'manifest.json'))).toBe(false);
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'engine host killed' });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.manifest.run).toMatchObject({ status: 'crashed', last_pass: 1, last_boundary: 'backbone.half' });
      expect(bundle.passes.map((pass) => pass.boundaries.length)).toEqual([smallRecords()[0]?.length, 2]);
      const expected = smallRecords()[1]?.[1];
      expect(Buffer.from((await bundle.readBoundary(1, 'backbone.half')).data).equals(Buffer.from(expected?.data ?? []))).toBe(true);
    } finally {
      await bundle.close();
    }
    // A second recovery finds the finished bundle and changes nothing.
    const manifest = readFileSync(join(dir, 'manifest.json'));
    NativeBundleWriter.recover(dir, { status: 'aborted', message: 'again' });
    expect(readFileSync(join(dir, 'manifest.json')).equals(manifest)).toBe(true);
  });

  it('recovers a crash before any pass into a bundle with no passes', async () => {
    const dir = join(tempDir('recover-nopass'), 'bundle');
    NativeBundleWriter.create(dir, nativeHeader()).close();
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'died in prefill setup' });
    const bundle = await openBundle(dir);
    expect(bundle.passes).toEqual([]);
    expect(bundle.manifest.run).toMatchObject({ status: 'crashed', last_pass: null, last_boundary: null });
    await bundle.close();
  });

  it('refuses a folder that holds no capture', async () => {
    const dir = tempDir('recover-nothing');
    await expectBundleError(() => NativeBundleWriter.recover(dir, { status: 'crashed', message: '' }), 'E_JOURNAL', join(dir, 'capture.journal.jsonl'), '(file)');
  });
});

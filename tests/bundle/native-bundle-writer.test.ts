import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { NativeBundleWriter } from '../../main/core/bundle/native-bundle-writer.ts';
import { frameHeaderBytes } from '../../main/core/bundle/capture-frame.ts';
import type { CaptureRecord } from '../../main/core/bundle/native-bundle-writer.ts';
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
      expect(bundle.passes.map((pass) => [pass.index, pass.kind, pass.mode])).toEqual([
        [0, 'prefill', 'text'],
        [1, 'decode', 'audio'],
      ]);
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
    await expectBundleError(
      () => writer.appendRecord({ ...first, name: 'short', data: bytes(5) }),
      'E_BYTE_LENGTH',
      join(dir, 'pass-000.safetensors'),
      'record "short".data',
    );
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
    await expectBundleError(
      () => NativeBundleWriter.recover(dir, { status: 'crashed', message: '' }),
      'E_JOURNAL',
      join(dir, 'capture.journal.jsonl'),
      '(file)',
    );
  });
});

/** Bytes of a record's frame in a spill (capture-frame.ts): header, then its data. */
const headerOf = (record: CaptureRecord): number => frameHeaderBytes(record.shape.length, Buffer.byteLength(record.name), Buffer.byteLength(record.stage));
const frameOf = (record: CaptureRecord): number => headerOf(record) + record.data.byteLength;

describe('NativeBundleWriter.recover, edges of the frame log', () => {
  /** Pass 0 complete and sealed; pass 1 begun with its first `count` records appended; no close (a death). */
  function diedInPass1(label: string, count = 3): { dir: string; spill: string; pass1: CaptureRecord[] } {
    const dir = join(tempDir(label), 'bundle');
    const records = smallRecords();
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    for (const record of records[0] ?? []) writer.appendRecord(record);
    writer.endPass('text');
    writer.beginPass(1, 'decode');
    const pass1 = (records[1] ?? []).slice(0, count);
    for (const record of pass1) writer.appendRecord(record);
    writer.close(); // the descriptors only: nothing is sealed, as after a death
    return { dir, spill: join(dir, 'pass-001.spill'), pass1 };
  }

  async function pass1Names(dir: string): Promise<{ names: string[]; message: string; lastBoundary: string | null | undefined }> {
    const bundle = await openBundle(dir);
    try {
      // Every surviving record reads back byte-exact (readBoundary checks each tensor's sha256).
      for (const [index, pass] of smallRecords().entries()) {
        for (const record of pass) {
          if (bundle.boundary(index, record.name) === undefined) continue;
          expect(Buffer.from((await bundle.readBoundary(index, record.name)).data).equals(Buffer.from(record.data))).toBe(true);
        }
      }
      return {
        names: bundle.passes[1]?.boundaries.map((boundary) => boundary.name) ?? [],
        message: bundle.manifest.run?.message ?? '',
        lastBoundary: bundle.manifest.run?.last_boundary,
      };
    } finally {
      await bundle.close();
    }
  }

  it('drops a record whose frame header was torn (the spill ends inside it)', async () => {
    const { dir, spill, pass1 } = diedInPass1('torn-header');
    const whole = frameOf(pass1[0]!) + frameOf(pass1[1]!);
    truncateSync(spill, whole + 10); // 10 bytes of the third frame's 32-byte fixed header
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'killed' });
    const got = await pass1Names(dir);
    expect(got.names).toEqual(['backbone.embed', 'backbone.half']);
    expect(got.message).toContain('pass 1 sealed from 2 complete records, 1 torn record dropped');
    expect(got.message).not.toContain('(backbone.bhalf)'); // its name never landed
    expect(got.lastBoundary).toBe('backbone.half');
  });

  it('drops a record whose data was torn, naming it from its header', async () => {
    const { dir, spill, pass1 } = diedInPass1('torn-data');
    truncateSync(spill, frameOf(pass1[0]!) + frameOf(pass1[1]!) + headerOf(pass1[2]!) + 3);
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'killed' });
    const got = await pass1Names(dir);
    expect(got.names).toEqual(['backbone.embed', 'backbone.half']);
    expect(got.message).toContain('1 torn record dropped (backbone.bhalf)');
  });

  it('ignores zeros after the last whole frame (a spill that was a shared mapping of a larger file)', async () => {
    const { dir, spill } = diedInPass1('zero-tail');
    appendFileSync(spill, new Uint8Array(64 * 1024));
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'killed' });
    const got = await pass1Names(dir);
    expect(got.names).toEqual(['backbone.embed', 'backbone.half', 'backbone.bhalf']);
    expect(got.message).toContain('pass 1 sealed from 3 complete records');
    expect(got.message).not.toContain('dropped');
  });

  it('stops at a damaged frame in the middle of a spill and says how many whole ones it drops after it', async () => {
    const { dir, spill, pass1 } = diedInPass1('damaged-middle');
    const content = readFileSync(spill);
    const dataOfSecond = frameOf(pass1[0]!) + headerOf(pass1[1]!);
    content[dataOfSecond] = (content[dataOfSecond] as number) ^ 0xff;
    writeFileSync(spill, content);
    NativeBundleWriter.recover(dir, { status: 'crashed', message: '' });
    const got = await pass1Names(dir);
    expect(got.names).toEqual(['backbone.embed']);
    expect(got.message).toContain('2 records dropped from record 1 (backbone.half) on: the frame checksum does not match');
  });

  it('recovers an empty pass: begun, no record, then the death', async () => {
    const { dir } = diedInPass1('empty-pass', 0);
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'died at the start of decode' });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.passes.map((pass) => [pass.index, pass.kind, pass.mode, pass.boundaries.length])).toEqual([
        [0, 'prefill', 'text', 6],
        [1, 'decode', null, 0],
      ]);
      expect(bundle.manifest.run).toMatchObject({ status: 'crashed', last_pass: 0, last_boundary: 'gen.prng' });
      expect(bundle.manifest.run?.message).toContain('pass 1 sealed from 0 complete records');
      expect(readdirSync(dir).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors', 'pass-001.safetensors']);
    } finally {
      await bundle.close();
    }
  });

  it('recovers a crash between passes: after a seal, before the next pass begins', async () => {
    const dir = join(tempDir('between-passes'), 'bundle');
    const records = smallRecords();
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    for (const record of records[0] ?? []) writer.appendRecord(record);
    writer.endPass('text');
    // The sealed pass's spill is kept (emptied) for the next pass's frames: a death leaves it.
    expect(readdirSync(dir).filter((entry) => entry.endsWith('.spill'))).toEqual(['pass-000.spill']);
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'died between passes' });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.passes.map((pass) => [pass.index, pass.mode, pass.boundaries.length])).toEqual([[0, 'text', 6]]);
      expect(bundle.manifest.run).toMatchObject({ status: 'crashed', message: 'died between passes', last_pass: 0, last_boundary: 'gen.prng' });
      expect(readdirSync(dir).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors']);
    } finally {
      await bundle.close();
    }
  });

  it('rebuilds a pass file whose seal never reached the journal (a death while sealing)', async () => {
    const { dir } = diedInPass1('death-while-sealing');
    writeFileSync(join(dir, 'pass-001.safetensors'), bytes(40, 8)); // half-written, never journaled
    NativeBundleWriter.recover(dir, { status: 'crashed', message: '' });
    const got = await pass1Names(dir);
    expect(got.names).toEqual(['backbone.embed', 'backbone.half', 'backbone.bhalf']);
  });

  it('trusts a journaled seal over a spill the death left behind it', async () => {
    const dir = join(tempDir('sealed-spill-left'), 'bundle');
    const records = smallRecords();
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    records.forEach((pass, index) => {
      writer.beginPass(index, index === 0 ? 'prefill' : 'decode');
      for (const record of pass) writer.appendRecord(record);
      writer.endPass(index === 0 ? 'text' : 'audio');
    });
    writeFileSync(join(dir, 'pass-001.spill'), bytes(100, 3)); // whatever it holds, pass 1 is sealed
    NativeBundleWriter.recover(dir, { status: 'aborted', message: 'stopped' });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.passes.map((pass) => [pass.mode, pass.boundaries.length])).toEqual([
        ['text', 6],
        ['audio', 5],
      ]);
      expect(bundle.manifest.run).toMatchObject({ status: 'aborted', message: 'stopped', last_pass: 1, last_boundary: 'gen.prng' });
      expect(readdirSync(dir).some((entry) => entry.endsWith('.spill'))).toBe(false);
    } finally {
      await bundle.close();
    }
  });

  it('keeps one spill file at a time, renamed from pass to pass, and none in the finished bundle', () => {
    const dir = join(tempDir('one-spill'), 'bundle');
    const records = smallRecords();
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    const spills: string[][] = [];
    records.forEach((pass, index) => {
      writer.beginPass(index, index === 0 ? 'prefill' : 'decode');
      spills.push(readdirSync(dir).filter((entry) => entry.endsWith('.spill')));
      for (const record of pass) writer.appendRecord(record);
      writer.endPass('text');
    });
    expect(spills).toEqual([['pass-000.spill'], ['pass-001.spill']]);
    expect(statSync(join(dir, 'pass-001.spill')).size).toBe(0); // emptied once sealed
    writer.finish({ status: 'completed', message: '', last_pass: 1, last_boundary: 'gen.prng' });
    expect(readdirSync(dir).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors', 'pass-001.safetensors']);
  });

  it('refuses the journal of another version of trace-inspector, naming its version', async () => {
    const dir = join(tempDir('journal-v1'), 'bundle');
    NativeBundleWriter.create(dir, nativeHeader()).close();
    const journal = join(dir, 'capture.journal.jsonl');
    const written = readFileSync(journal, 'utf8');
    expect(written).toContain('"journal_version":4');
    writeFileSync(journal, written.replace('"journal_version":4', '"journal_version":5'));
    const error = await expectBundleError(() => NativeBundleWriter.recover(dir, { status: 'crashed', message: '' }), 'E_JOURNAL', journal, 'journal_version');
    expect(error.message).toContain('another version of trace-inspector');
    expect(error.message).toContain('recovers journal versions 2, 3 and 4');
  });

  it('recovers a journal of version 2 (written before the capture pool): it has no pool to replay', async () => {
    const dir = join(tempDir('journal-v2'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    for (const record of smallRecords()[0] ?? []) writer.appendRecord(record);
    writer.endPass('text');
    writer.close();
    const journal = join(dir, 'capture.journal.jsonl');
    writeFileSync(journal, readFileSync(journal, 'utf8').replace('"journal_version":4', '"journal_version":2'));
    await NativeBundleWriter.recover(dir, { status: 'crashed', message: '' });
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { passes: unknown[] };
    expect(manifest.passes).toHaveLength(1);
  });

  it('refuses record names and stages it cannot store, before writing anything', async () => {
    const dir = join(tempDir('bad-names'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    const [first] = smallRecords()[0] ?? [];
    if (first === undefined) throw new Error('no record');
    await expectBundleError(() => writer.appendRecord({ ...first, name: 'lone\ud800surrogate' }), 'E_RECORD', join(dir, 'pass-000.safetensors'), 'record.name');
    await expectBundleError(() => writer.appendRecord({ ...first, stage: 'x'.repeat(70_000) }), 'E_RECORD', join(dir, 'pass-000.safetensors'), 'stage');
    writer.appendRecord(first);
    writer.endPass('text');
    writer.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: first.name });
    const bundle = await openBundle(dir);
    expect(bundle.passes[0]?.boundaries.map((boundary) => boundary.name)).toEqual([first.name]);
    await bundle.close();
  });
});

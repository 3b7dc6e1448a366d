// Large records from the capture pool are written once, straight to their place in the pass file
// (pass-file-in-place.ts), and the spill holds only frames naming them. These tests drive the
// writer as the capture writer thread does (appendFrame with whole frames, checksum left 0) and
// check what the bundle and the spill hold, what happens when a header outgrows its room, and
// what recovery keeps after a death mid-pass.
import { openSync, readFileSync, readSync, closeSync, statSync, writeSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { checkBundle } from '../../main/core/bundle/bundle-check.ts';
import { FrameEncoder } from '../../main/core/bundle/capture-frame.ts';
import { NativeBundleWriter, type CaptureRecord } from '../../main/core/bundle/native-bundle-writer.ts';
import { FIRST_HEADER_ROOM, IN_PLACE_MIN_BYTES } from '../../main/core/bundle/pass-file-in-place.ts';
import { bytes, expectBundleError, nativeHeader, removeTempDirs, tempDir } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

const LARGE = IN_PLACE_MIN_BYTES * 4;

function record(name: string, byteLength: number, seed: number): CaptureRecord {
  return { name, stage: 'backbone', dtype: 'F32', shape: [byteLength / 4], strides: [1], data: bytes(byteLength, seed) };
}

/** A frame as the capture pool hands it to the writer: header and data, checksum left 0. */
function poolFrame(pass: number, seq: number, r: CaptureRecord): { frame: Buffer; length: number } {
  const encoder = new FrameEncoder();
  encoder.open(pass, seq, r.dtype, r.shape, r.strides, r.name, r.stage, r.data.byteLength).set(r.data);
  const length = encoder.close();
  const frame = Buffer.from(encoder.bytes.subarray(0, length));
  frame.writeUInt32LE(0, 4);
  return { frame, length };
}

function append(writer: NativeBundleWriter, pass: number, records: readonly CaptureRecord[]): void {
  records.forEach((r, seq) => {
    const { frame, length } = poolFrame(pass, seq, r);
    writer.appendFrame(frame, length);
  });
}

/** The safetensors header length a file states (its first 8 bytes). */
function statedHeaderBytes(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(8);
    readSync(fd, head, 0, 8, 0);
    return Number(head.readBigUInt64LE(0));
  } finally {
    closeSync(fd);
  }
}

async function expectRecords(dir: string, pass: number, records: readonly CaptureRecord[]): Promise<void> {
  const bundle = await openBundle(dir);
  try {
    expect(bundle.passes[pass]?.boundaries.map((boundary) => boundary.name)).toEqual(records.map((r) => r.name));
    for (const r of records) expect(Buffer.from((await bundle.readBoundary(pass, r.name)).data).equals(Buffer.from(r.data))).toBe(true);
  } finally {
    await bundle.close();
  }
}

const pass0 = [record('a.small', 1024, 1), record('b.large', LARGE, 2), record('c.small', 64, 3), record('d.large', 2 * LARGE, 4)];

describe('records written in place', () => {
  it('a large record goes once, to its place in the pass file: the spill holds only its frame, the bundle verifies and reads back', async () => {
    const dir = join(tempDir('in-place'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    append(writer, 0, pass0);
    // Before the seal: the large records' bytes are in the pass file, not in the spill.
    const spillBytes = statSync(join(dir, 'pass-000.spill')).size;
    expect(spillBytes).toBeLessThan(4096);
    expect(statSync(join(dir, 'pass-000.safetensors')).size).toBe(8 + FIRST_HEADER_ROOM + 1024 + LARGE + 64 + 2 * LARGE);
    writer.endPass('text');
    writer.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: 'd.large' });

    // The header sits in the room the file was created with, padded with spaces.
    expect(statedHeaderBytes(join(dir, 'pass-000.safetensors'))).toBe(FIRST_HEADER_ROOM);
    const report = await checkBundle(dir);
    expect(report.problems).toEqual([]);
    await expectRecords(dir, 0, pass0);

    // The same records through the spill alone: the same tensors, the same digests.
    const inline = join(tempDir('in-place-inline'), 'bundle');
    const other = NativeBundleWriter.create(inline, nativeHeader());
    other.beginPass(0, 'prefill');
    for (const r of pass0) other.appendRecord(r);
    other.endPass('text');
    other.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: 'd.large' });
    const digests = (path: string): string[] =>
      (JSON.parse(readFileSync(join(path, 'manifest.json'), 'utf8')) as { passes: { boundaries: { sha256: string }[] }[] }).passes[0]?.boundaries.map(
        (b) => b.sha256,
      ) ?? [];
    expect(digests(dir)).toEqual(digests(inline));
  });

  it('a header that outgrows its room is written again under the minimal header, and the bundle verifies', async () => {
    const dir = join(tempDir('in-place-relayout'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    append(writer, 0, [record('x', LARGE, 5)]); // a short header: the next pass's room is guessed from it
    writer.endPass('text');
    const many = [
      record('y.large', LARGE, 6),
      ...Array.from({ length: 40 }, (_, i) => record(`decode.boundary.with.a.long.name.${String(i).padStart(3, '0')}`, 16, 7 + i)),
    ];
    writer.beginPass(1, 'decode');
    append(writer, 1, many);
    writer.endPass('text');
    writer.finish({ status: 'completed', message: '', last_pass: 1, last_boundary: many.at(-1)?.name ?? null });

    // Pass 0 got the first room; pass 1's room was guessed from pass 0's short header and is
    // far too small for its 41 boundaries: its file was written again, the header minimal (the
    // JSON padded to 8 bytes, no room left over).
    expect(statedHeaderBytes(join(dir, 'pass-000.safetensors'))).toBe(FIRST_HEADER_ROOM);
    const stated = statedHeaderBytes(join(dir, 'pass-001.safetensors'));
    const json = readFileSync(join(dir, 'pass-001.safetensors'))
      .subarray(8, 8 + stated)
      .toString('utf8');
    expect(stated - json.trimEnd().length).toBeLessThan(8);
    expect((await checkBundle(dir)).problems).toEqual([]);
    await expectRecords(dir, 1, many);
  });

  it('recovery keeps the records written in place whose data is whole, and drops one whose data did not all land', async () => {
    // In place, in the spill, in place: recovery reads each record's data from where it went.
    const records = [record('p.0', LARGE, 11), record('p.1', 512, 12), record('p.2', LARGE, 13)];
    const crashed = (label: string): string => {
      const dir = join(tempDir(label), 'bundle');
      const writer = NativeBundleWriter.create(dir, nativeHeader());
      writer.beginPass(0, 'prefill');
      append(writer, 0, records);
      writer.close(); // what a death leaves: the journal, the spill, the pass file unsealed
      return dir;
    };

    const whole = crashed('in-place-recover');
    NativeBundleWriter.recover(whole, { status: 'crashed', message: 'killed' });
    expect((await checkBundle(whole)).problems).toEqual([]);
    await expectRecords(whole, 0, records);

    // The last record's data changed in the file after its frame was appended: it is dropped, named.
    const torn = crashed('in-place-recover-torn');
    const passFile = join(torn, 'pass-000.safetensors');
    const fd = openSync(passFile, 'r+');
    writeSync(fd, Buffer.from([0xff, 0xee]), 0, 2, statSync(passFile).size - 100);
    closeSync(fd);
    NativeBundleWriter.recover(torn, { status: 'crashed', message: 'killed' });
    expect((await checkBundle(torn)).problems).toEqual([]);
    await expectRecords(torn, 0, records.slice(0, 2));
    const manifest = JSON.parse(readFileSync(join(torn, 'manifest.json'), 'utf8')) as { run: { message: string } };
    expect(manifest.run.message).toContain('1 torn record dropped (p.2)');

    // Without the pass file, no record written in place can be kept.
    const lost = crashed('in-place-recover-lost');
    unlinkSync(join(lost, 'pass-000.safetensors'));
    NativeBundleWriter.recover(lost, { status: 'crashed', message: 'killed' });
    await expectRecords(lost, 0, []);
    const said = JSON.parse(readFileSync(join(lost, 'manifest.json'), 'utf8')) as { run: { message: string } };
    expect(said.run.message).toContain('3 records dropped from record 0 (p.0) on: its data was written to the pass file, which is missing');
  });

  it.each([
    ['every record in the spill (the pass file written from it)', [record('a.small', 1024, 21), record('c.small', 64, 22)]],
    ['a record in place before it (its data written to its slot at the seal)', [record('b.large', LARGE, 23), record('c.small', 64, 24)]],
  ])('a record whose bytes changed in the spill before its pass sealed is refused at the seal, naming the spill and the frame: %s', async (_, records) => {
    const dir = join(tempDir('spill-changed'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    append(writer, 0, records);
    // The last byte of the spill is the last byte of c.small's data.
    const spill = join(dir, 'pass-000.spill');
    const fd = openSync(spill, 'r+');
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, statSync(spill).size - 1);
    writeSync(fd, Buffer.from([(last[0] as number) ^ 0x01]), 0, 1, statSync(spill).size - 1);
    closeSync(fd);
    const error = await expectBundleError(() => writer.endPass('text'), 'E_JOURNAL', spill, 'frame 1 ("c.small")');
    expect(error.message).toContain('no longer match the checksum they were appended with');
    writer.close();
  });
});

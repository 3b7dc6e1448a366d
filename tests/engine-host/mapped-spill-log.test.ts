// The engine worker's spill log: frames stored into a shared mapping of the spill file rather
// than written. What a crash (SIGKILL, no cleanup) leaves must recover exactly as the portable
// log's does: every record stored before the death byte-exact, a torn last one dropped.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { frameHeaderBytes } from '../../main/core/bundle/capture-frame.ts';
import { NativeBundleWriter } from '../../main/core/bundle/native-bundle-writer.ts';
import { MappedSpillLog } from '../../main/engine-host/mapped-spill-log.ts';
import { nativeMemory } from '../../main/engine-host/native-memory.ts';
import { bytes, nativeHeader, removeTempDirs, smallRecords, tempDir } from '../bundle/bundle-fixtures.ts';

afterAll(removeTempDirs);

const memory = nativeMemory();
const child = join(import.meta.dirname, 'mapped-capture-crash-child.ts');

/** Runs the child to its SIGKILL, then recovers what it left. */
function runChild(dir: string, ...args: string[]): void {
  const result = spawnSync(process.execPath, ['--import', 'tsx', child, dir, ...args], { encoding: 'utf8' });
  expect(result.signal, result.stderr).toBe('SIGKILL');
  expect(existsSync(join(dir, 'manifest.json'))).toBe(false);
  expect(statSync(join(dir, 'pass-001.spill')).size).toBeGreaterThanOrEqual(64 * 1024); // the mapped length: frames, then zeros
  NativeBundleWriter.recover(dir, { status: 'crashed', message: 'killed' });
}

async function expectPasses(dir: string, pass1: { name: string; data: Uint8Array }[]): Promise<string> {
  const bundle = await openBundle(dir);
  try {
    const records = smallRecords();
    expect(bundle.passes.map((pass) => pass.boundaries.map((boundary) => boundary.name))).toEqual([(records[0] ?? []).map((record) => record.name), pass1.map((record) => record.name)]);
    for (const record of records[0] ?? []) expect(Buffer.from((await bundle.readBoundary(0, record.name)).data).equals(Buffer.from(record.data))).toBe(true);
    for (const record of pass1) expect(Buffer.from((await bundle.readBoundary(1, record.name)).data).equals(Buffer.from(record.data))).toBe(true);
    expect(bundle.passes[1]?.mode).toBeNull();
    return bundle.manifest.run?.message ?? '';
  } finally {
    await bundle.close();
  }
}

describe.runIf(memory !== null)('MappedSpillLog', () => {
  it('stores frames into the spill file, zeroes it when the pass is sealed and reuses it for the next pass', () => {
    const dir = tempDir('mapped-unit');
    const log = new MappedSpillLog(memory!, 4096);
    log.begin(join(dir, 'pass-000.spill'));
    const frame = bytes(3000, 5);
    log.append(frame, 3000);
    log.append(frame, 3000); // past the first 4 KiB: the mapping grows
    expect(log.size).toBe(6000);
    const file = readFileSync(join(dir, 'pass-000.spill'));
    expect(file.length).toBeGreaterThanOrEqual(6000);
    expect(file.subarray(3000, 6000).equals(Buffer.from(frame))).toBe(true); // a read() sees the stores
    expect(file.subarray(6000).every((byte) => byte === 0)).toBe(true);
    log.end();
    expect(readFileSync(join(dir, 'pass-000.spill')).every((byte) => byte === 0)).toBe(true);
    log.begin(join(dir, 'pass-001.spill'));
    expect(readdirSync(dir)).toEqual(['pass-001.spill']);
    expect(log.size).toBe(0);
    log.append(frame, 10);
    log.close(); // an open pass's log stays for recovery
    expect(readFileSync(join(dir, 'pass-001.spill')).subarray(0, 10).equals(Buffer.from(frame.subarray(0, 10)))).toBe(true);
    const again = new MappedSpillLog(memory!, 4096);
    again.begin(join(dir, 'pass-002.spill'));
    again.end();
    again.close(); // a zeroed log kept for reuse is nothing: removed
    expect(readdirSync(dir)).toEqual(['pass-001.spill']);
  });

  it('a capture through it reads back byte-exact and leaves no spill', async () => {
    const dir = join(tempDir('mapped-capture'), 'bundle');
    const writer = NativeBundleWriter.create(dir, nativeHeader(), { spillLog: () => new MappedSpillLog(memory!, 4096) });
    const records = smallRecords();
    records.forEach((pass, index) => {
      writer.beginPass(index, index === 0 ? 'prefill' : 'decode');
      for (const record of pass) writer.appendRecord(record);
      writer.endPass(index === 0 ? 'text' : 'audio');
    });
    writer.finish({ status: 'completed', message: '', last_pass: 1, last_boundary: 'gen.prng' });
    expect(readdirSync(dir).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors', 'pass-001.safetensors']);
    const bundle = await openBundle(dir);
    try {
      for (const [index, pass] of records.entries()) {
        for (const record of pass) expect(Buffer.from((await bundle.readBoundary(index, record.name)).data).equals(Buffer.from(record.data))).toBe(true);
      }
    } finally {
      await bundle.close();
    }
  });

  it('after SIGKILL with a frame torn inside its header: the records stored before survive, the torn one is dropped', async () => {
    const dir = join(tempDir('mapped-torn-header'), 'bundle');
    runChild(dir, 'torn', '12');
    const message = await expectPasses(dir, (smallRecords()[1] ?? []).slice(0, 2));
    expect(message).toContain('pass 1 sealed from 2 complete records, 1 torn record dropped');
    expect(message).not.toContain('(backbone.bhalf)'); // its name never landed
    const manifest = readFileSync(join(dir, 'manifest.json'));
    NativeBundleWriter.recover(dir, { status: 'crashed', message: 'again' }); // a second recovery changes nothing
    expect(readFileSync(join(dir, 'manifest.json')).equals(manifest)).toBe(true);
  });

  it('after SIGKILL with a frame stored up to its data but not its magic: dropped', async () => {
    const dir = join(tempDir('mapped-torn-data'), 'bundle');
    const third = smallRecords()[1]![2]!;
    runChild(dir, 'torn', String(frameHeaderBytes(third.shape.length, third.name.length, third.stage.length) + 2));
    const message = await expectPasses(dir, (smallRecords()[1] ?? []).slice(0, 2));
    expect(message).toContain('pass 1 sealed from 2 complete records, 1 torn record dropped');
  });

  it('stores a frame\'s magic after the rest of it', () => {
    const dir = tempDir('mapped-order');
    const stores: { offset: number; length: number }[] = [];
    const spy = { ...memory!, store: (address: number, bytes: Uint8Array, length: number) => {
      stores.push({ offset: address - base, length });
      memory!.store(address, bytes, length);
    } };
    let base = 0;
    const log = new MappedSpillLog(spy, 4096);
    log.begin(join(dir, 'pass-000.spill'));
    base = (log as unknown as { address: number }).address;
    log.append(bytes(100, 2), 100);
    log.append(bytes(3, 2), 3);
    expect(stores).toEqual([{ offset: 4, length: 96 }, { offset: 0, length: 4 }, { offset: 100, length: 3 }]);
    log.close();
  });

  it('after SIGKILL once the mapping grew for a large record: every record survives', async () => {
    const dir = join(tempDir('mapped-grow'), 'bundle');
    runChild(dir, 'grow');
    const message = await expectPasses(dir, [{ name: 'big', data: bytes(300_000, 11) }, smallRecords()[1]![0]!]);
    expect(message).toContain('pass 1 sealed from 2 complete records');
    expect(message).not.toContain('dropped');
  });
});

// Child process for the capture pool's crash tests: captures through a CapturePool (the engine
// thread's side, with the real writer thread) what the scenario says, prints how many ring bytes
// the writer had not applied yet, then dies by SIGKILL (no handler, no cleanup runs):
//   behind  pass 0: one 48 MiB record, ended (the writer is busy sealing it); pass 1: five small
//           records, put in the pool while the writer is still on pass 0
//   torn    as behind, then a sixth record of pass 1 stored whole but for its magic (a death in
//           the middle of its copy)
import { FrameEncoder } from '../../main/core/bundle/capture-frame.ts';
import { CapturePool } from '../../main/engine-host/capture-pool.ts';
import { POSITION } from '../../main/engine-host/capture-pool-protocol.ts';
import { nativeMemory } from '../../main/engine-host/native-memory.ts';
import { nativeHeader, smallRecords } from '../bundle/bundle-fixtures.ts';
import type { CaptureRecord } from '../../main/core/bundle/native-bundle-writer.ts';

export const BIG_BYTES = 48 * 1024 * 1024;

/** The big record of pass 0: a cheap pattern the test can rebuild. */
export function bigRecord(): CaptureRecord {
  const data = new Uint8Array(BIG_BYTES);
  for (let i = 0; i < BIG_BYTES; i += 4096) data[i] = (i >>> 12) & 0xff;
  return { name: 'big', stage: 'test', dtype: 'U8', shape: [BIG_BYTES], strides: [1], data };
}

/** Pass 1's records: the small bundle's second pass plus one more. */
export function pass1Records(): CaptureRecord[] {
  const [first] = smallRecords()[0] ?? [];
  return [...(smallRecords()[1] ?? []), { ...(first as CaptureRecord), name: 'extra.embed' }];
}

function main(): void {
  const [dir, scenario] = process.argv.slice(2);
  if (dir === undefined || (scenario !== 'behind' && scenario !== 'torn')) throw new Error('usage: capture-pool-crash-child.ts <dir> behind|torn');
  const memory = nativeMemory();
  if (memory === null) throw new Error('no shared mappings on this platform');
  const pool = CapturePool.open(dir, nativeHeader(), memory, 64 * 1024 * 1024);
  const encoder = new FrameEncoder();
  const put = (pass: number, seq: number, record: CaptureRecord): void => {
    const header = encoder.header(pass, seq, record.dtype, record.shape, record.strides, record.name, record.stage, record.data.byteLength);
    pool.record(encoder.bytes, header, null, record.data, record.data.byteLength);
  };
  pool.beginPass(0, 'prefill');
  put(0, 0, bigRecord());
  pool.endPass(0, 'text');
  pool.beginPass(1, 'decode');
  const records = pass1Records();
  records.slice(0, 5).forEach((record, seq) => put(1, seq, record));
  if (scenario === 'torn') {
    // What a death in the middle of the sixth record's copy leaves: its entry stored but for the magic.
    const record = records[5] as CaptureRecord;
    const header = encoder.header(1, 5, record.dtype, record.shape, record.strides, record.name, record.stage, record.data.byteLength);
    const internals = pool as unknown as { reserve(kind: number, bytes: number): number };
    const at = internals.reserve(2, header + record.data.byteLength);
    memory.store(at + 16, encoder.bytes, header);
    memory.store(at + 16 + header, record.data, record.data.byteLength);
  }
  const positions = (pool as unknown as { positions: BigInt64Array }).positions;
  process.stdout.write(`${JSON.stringify({ unapplied: Number(Atomics.load(positions, POSITION.HEAD) - Atomics.load(positions, POSITION.TAIL)) })}\n`);
  process.kill(process.pid, 'SIGKILL');
}

if (import.meta.url === `file://${process.argv[1]}`) main();

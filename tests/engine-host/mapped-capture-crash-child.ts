// Child process for the shared-mapping spill tests: captures with the engine worker's spill log
// (MappedSpillLog) what the argument says, then dies by SIGKILL (no handler, no cleanup runs):
//   torn    pass 0 complete; pass 1: two records, then bytes [4, cut) of a third frame (no magic)
//   grow    pass 0 complete; pass 1: a record larger than the mapping first made, then one more
import { FrameEncoder } from '../../main/core/bundle/capture-frame.ts';
import { NativeBundleWriter } from '../../main/core/bundle/native-bundle-writer.ts';
import { MappedSpillLog } from '../../main/engine-host/mapped-spill-log.ts';
import { nativeMemory } from '../../main/engine-host/native-memory.ts';
import { bytes, nativeHeader, smallRecords } from '../bundle/bundle-fixtures.ts';

const [dir, scenario, cutText] = process.argv.slice(2);
if (dir === undefined || (scenario !== 'torn' && scenario !== 'grow')) throw new Error('usage: mapped-capture-crash-child.ts <dir> torn <cut> | grow');
const memory = nativeMemory();
if (memory === null) throw new Error('no shared mappings on this platform');
let log: MappedSpillLog | null = null;
const writer = NativeBundleWriter.create(dir, nativeHeader(), { spillLog: () => (log = new MappedSpillLog(memory, 64 * 1024)) });
const records = smallRecords();
writer.beginPass(0, 'prefill');
for (const record of records[0] ?? []) writer.appendRecord(record);
writer.endPass('text');
writer.beginPass(1, 'decode');
if (scenario === 'torn') {
  writer.appendRecord(records[1]![0]!);
  writer.appendRecord(records[1]![1]!);
  // What a death in the middle of the third record's append leaves: part of the frame stored
  // after its first 4 bytes (a memcpy in no particular order; here bytes [4, cut)), and not its
  // magic, which MappedSpillLog stores last.
  const third = records[1]![2]!;
  const encoder = new FrameEncoder();
  encoder.open(1, 2, third.dtype, third.shape, third.strides, third.name, third.stage, third.data.byteLength).set(third.data);
  const length = encoder.close();
  const cut = Math.min(Number(cutText), length - 1);
  const mapped = log as unknown as { address: number; used: number };
  memory.store(mapped.address + mapped.used + 4, encoder.bytes.subarray(4, cut), cut - 4);
} else {
  writer.appendRecord({ name: 'big', stage: 'test', dtype: 'U8', shape: [300_000], strides: [1], data: bytes(300_000, 11) });
  writer.appendRecord(records[1]![0]!);
}
process.kill(process.pid, 'SIGKILL');

// The C recorder's log of the records it took in a pass (engine/host-recorder/ti_recorder.c,
// native-recorder.ts TakenLog), as the engine worker sends it to the caller in the pass's reply
// or a 'recordLog' message (base64; in a 'thread' isolation reply, its bytes as they are) instead
// of one JSON announcement per record: the engine's thread only copies the log out; turning it
// into announcements is the caller's work, on the caller's thread.
//
// Layout, little-endian, entries back to back: u32 boundary index (in catalogue order), u32
// dtype (the trace ABI's ti_dtype code), u32 rank, u32 0, then f64 byte length and f64 x rank
// extents (JavaScript numbers).
import { ABI_DTYPE_ORDER } from '../core/bundle/dtype.ts';
import type { RecordsMessage } from './engine-protocol.ts';

const MAX_RANK = 8;

/** Announcements from a log; throws (naming the entry) when it is not one the recorder writes. */
export function decodeRecordLog(log: Buffer, boundaryNames: readonly string[]): RecordsMessage['records'] {
  const records: RecordsMessage['records'] = [];
  for (let at = 0; at < log.length;) {
    if (at + 24 > log.length) throw new Error(`record log entry ${records.length} at byte ${at} is cut short`);
    const boundary = log.readUInt32LE(at);
    const dtype = ABI_DTYPE_ORDER[log.readUInt32LE(at + 4)];
    const rank = log.readUInt32LE(at + 8);
    const name = boundaryNames[boundary];
    if (name === undefined || dtype === undefined || rank > MAX_RANK || at + 24 + 8 * rank > log.length) {
      throw new Error(`record log entry ${records.length} at byte ${at} is malformed (boundary ${boundary}, rank ${rank})`);
    }
    const byteLength = log.readDoubleLE(at + 16);
    const shape = new Array<number>(rank);
    for (let axis = 0; axis < rank; axis++) shape[axis] = log.readDoubleLE(at + 24 + 8 * axis);
    records.push({ name, dtype, shape, byteLength });
    at += 24 + 8 * rank;
  }
  return records;
}

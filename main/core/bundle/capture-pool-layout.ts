// The capture pool (capture.pool in the capture folder): a bounded ring of entries between the
// engine's thread, which copies each record into it once, and the capture writer thread, which
// checksums the records, appends them to the spills, seals the passes and keeps the journal
// (main/engine-host/capture-pool.ts, capture-writer-thread.ts). The ring is a shared mapping of
// this file, so what the engine's thread stored in it outlives the death of the process: after a
// crash, recovery applies the entries the writer had not yet applied (capture-pool-replay.ts).
//
// Layout, little-endian. The file is HEADER_BYTES, then `capacity` bytes of ring:
//   0   u32  magic 0x4c504954 ("TIPL")
//   4   u32  layout version (1)
//   8   u32  capacity of the ring, bytes (a multiple of 8)
//   12  u32  0
//   16  u32  tail: ring offset of the first entry the writer has not applied
//   20  u32  the entry sequence number of that entry
// Entries start at 8-byte ring offsets and never straddle the end of the ring: an entry that
// does not fit before the end goes to offset 0, after a WRAP entry when 16 bytes or more are
// left (fewer: the reader wraps by itself). An entry:
//   0   u32  magic 0x45504954 ("TIPE"), stored last: an entry without it is not whole
//   4   u32  kind (ENTRY_KIND)
//   8   u32  sequence number: 0 for the capture's first entry, then 1, 2, ... (WRAP included)
//   12  u32  payload bytes
//   16  payload, padded with zeros to 8 bytes
// Payloads: BEGIN_PASS u32 pass, u32 kind (0 prefill, 1 decode); FRAME one capture frame
// (capture-frame.ts) whose crc32 field is 0 (the writer computes it); END_PASS u32 pass, then the
// pass's output mode as UTF-8 (none: the pass failed, mode null).
export const POOL_FILE_NAME = 'capture.pool';
export const POOL_MAGIC = 0x4c504954;
export const POOL_VERSION = 1;
export const POOL_HEADER_BYTES = 64;
export const POOL_TAIL_OFFSET = 16;
export const ENTRY_MAGIC = 0x45504954;
export const ENTRY_HEADER_BYTES = 16;

export const ENTRY_KIND = { BEGIN_PASS: 1, FRAME: 2, END_PASS: 3, WRAP: 4 } as const;
export type EntryKind = (typeof ENTRY_KIND)[keyof typeof ENTRY_KIND];

/** Bytes an entry with `payloadBytes` of payload takes in the ring. */
export function entryBytes(payloadBytes: number): number {
  return ENTRY_HEADER_BYTES + Math.ceil(payloadBytes / 8) * 8;
}

/** Whether an entry must start at ring offset 0 instead of `offset` (and a WRAP entry goes at `offset` when it fits). */
export function mustWrap(offset: number, length: number, capacity: number): boolean {
  return offset + length > capacity;
}

/** Whether the reader, at `offset`, wraps without an entry (fewer than ENTRY_HEADER_BYTES left). */
export function implicitWrap(offset: number, capacity: number): boolean {
  return capacity - offset < ENTRY_HEADER_BYTES;
}

/** The 64-byte file header of a new pool. */
export function encodePoolHeader(capacity: number): Buffer {
  const header = Buffer.alloc(POOL_HEADER_BYTES);
  header.writeUInt32LE(POOL_MAGIC, 0);
  header.writeUInt32LE(POOL_VERSION, 4);
  header.writeUInt32LE(capacity, 8);
  return header;
}

/** The tail as stored at POOL_TAIL_OFFSET: ring offset and entry sequence number, in one 8-byte store. */
export function encodeTail(target: Uint32Array, offset: number, seq: number): void {
  target[0] = offset;
  target[1] = seq;
}

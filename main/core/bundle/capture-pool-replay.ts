// Recovery's share of the capture pool (capture-pool-layout.ts): a capture whose process died
// may leave entries in capture.pool that the writer thread had not applied — records the engine's
// thread had copied in, passes it had begun or ended. Starting at the tail the writer stored in
// the pool's header, every whole entry (magic present, next sequence number) is applied as the
// writer would have: a pass begun is journaled, a frame is appended to its pass's spill (its
// checksum computed here), a pass ended is sealed. What the writer had already applied is
// recognised and skipped (a pass already in the journal, a frame already whole in the spill), so
// a recovery that is itself interrupted can run again. The walk stops at the first entry that is
// not whole (the one the death interrupted, or an older lap of the ring), and never goes round
// the ring more than once.
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { frameIdentity, scanSpill, SpillReader, stampFrameChecksum } from './capture-frame.ts';
import { passFileName, spillFileName } from './capture-journal.ts';
import { openInPlaceData } from './pass-file-in-place.ts';
import type { DigestScheme } from './tree-digest.ts';
import {
  ENTRY_HEADER_BYTES,
  ENTRY_KIND,
  ENTRY_MAGIC,
  entryBytes,
  implicitWrap,
  POOL_FILE_NAME,
  POOL_HEADER_BYTES,
  POOL_MAGIC,
  POOL_TAIL_OFFSET,
  POOL_VERSION,
} from './capture-pool-layout.ts';
import { writeAllSync } from './safetensors-writer.ts';
import type { PassKind, PassMode } from './manifest-schema.ts';

/** A pass as recovery knows it from the journal. */
export interface PoolReplayPass {
  readonly index: number;
  readonly kind: PassKind;
  /** Whether its seal is journaled. */
  readonly sealed: boolean;
}

/** What applying the pool's entries needs from recovery. */
export interface PoolReplayTarget {
  /** The passes of the journal, in order (updated by beginPass / endPass). */
  passes(): readonly PoolReplayPass[];
  /** Journals the begin of pass `index`. */
  beginPass(index: number, kind: PassKind): void;
  /** Seals the last pass from its spill with `mode` (null: it failed) and journals the seal. */
  endPass(mode: PassMode | null): void;
}

function readExactly(fd: number, target: Buffer, length: number, position: number): boolean {
  let done = 0;
  while (done < length) {
    const read = readSync(fd, target, done, length - done, position + done);
    if (read === 0) return false;
    done += read;
  }
  return true;
}

/** The spill of the pass frames are appended to: its whole frames, counted once. */
interface OpenSpill {
  readonly pass: number;
  readonly fd: number;
  records: number;
  end: number;
}

/**
 * Applies the whole entries the writer had not applied; returns a note for the manifest's run
 * message (null when the pool held nothing to apply, or there is no pool).
 */
export function replayCapturePool(dir: string, scheme: DigestScheme, target: PoolReplayTarget): string | null {
  const path = join(dir, POOL_FILE_NAME);
  if (!existsSync(path)) return null;
  const fd = openSync(path, 'r');
  let spill: OpenSpill | null = null;
  let frames = 0;
  let passEntries = 0;
  try {
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(POOL_HEADER_BYTES);
    if (!readExactly(fd, header, POOL_HEADER_BYTES, 0) || header.readUInt32LE(0) !== POOL_MAGIC || header.readUInt32LE(4) !== POOL_VERSION) return null;
    const capacity = Math.min(header.readUInt32LE(8), Math.max(0, size - POOL_HEADER_BYTES));
    let offset = header.readUInt32LE(POOL_TAIL_OFFSET);
    let expected = header.readUInt32LE(POOL_TAIL_OFFSET + 4);
    const entry = Buffer.alloc(ENTRY_HEADER_BYTES);
    let payload = Buffer.alloc(0);
    let walked = 0;
    const closeSpill = (): void => {
      if (spill !== null) closeSync(spill.fd);
      spill = null;
    };
    const spillOf = (pass: number): OpenSpill => {
      if (spill !== null && spill.pass === pass) return spill;
      closeSpill();
      const spillPath = join(dir, spillFileName(pass));
      const spillFd = openSync(spillPath, existsSync(spillPath) ? 'r+' : 'w+');
      // Records the writer put in place count only when their data in the pass file is whole.
      const inPlace = openInPlaceData(join(dir, passFileName(pass)), scheme);
      let scan;
      try {
        scan = scanSpill(new SpillReader(spillFd, fstatSync(spillFd).size, spillPath), pass, true, undefined, inPlace);
      } finally {
        inPlace?.close();
      }
      spill = { pass, fd: spillFd, records: scan.frames.length, end: scan.end };
      return spill;
    };
    try {
      while (walked < capacity && offset <= capacity) {
        if (implicitWrap(offset, capacity)) {
          walked += capacity - offset;
          offset = 0;
          continue;
        }
        if (!readExactly(fd, entry, ENTRY_HEADER_BYTES, POOL_HEADER_BYTES + offset)) break;
        if (entry.readUInt32LE(0) !== ENTRY_MAGIC || entry.readUInt32LE(8) !== expected) break;
        const kind = entry.readUInt32LE(4);
        const payloadBytes = entry.readUInt32LE(12);
        const length = entryBytes(payloadBytes);
        if (offset + length > capacity) break;
        expected += 1;
        if (kind === ENTRY_KIND.WRAP) {
          walked += capacity - offset;
          offset = 0;
          continue;
        }
        if (payload.length < payloadBytes) payload = Buffer.alloc(payloadBytes);
        if (!readExactly(fd, payload, payloadBytes, POOL_HEADER_BYTES + offset + ENTRY_HEADER_BYTES)) break;
        const passes = target.passes();
        const last = passes.at(-1);
        if (kind === ENTRY_KIND.BEGIN_PASS) {
          const index = payload.readUInt32LE(0);
          if (index > passes.length) break; // a pass begun after one the journal never saw: a gap
          if (index === passes.length) {
            if (last !== undefined && !last.sealed) target.endPass(null);
            closeSpill();
            target.beginPass(index, payload.readUInt32LE(4) === 0 ? 'prefill' : 'decode');
            passEntries += 1;
          }
        } else if (kind === ENTRY_KIND.FRAME) {
          const identity = frameIdentity(payload, payloadBytes);
          if (identity === null) break;
          if (last !== undefined && !last.sealed && identity.pass === last.index) {
            const open = spillOf(identity.pass);
            if (identity.seq > open.records) break; // a record missing before it: order is kept, so nothing after it is
            if (identity.seq === open.records) {
              ftruncateSync(open.fd, open.end); // whatever a death tore off the spill's end goes
              stampFrameChecksum(payload, payloadBytes);
              writeAllSync(open.fd, payload.subarray(0, payloadBytes), open.end);
              open.end += payloadBytes;
              open.records += 1;
              frames += 1;
            }
          } else if (last === undefined || identity.pass > last.index) {
            break;
          }
        } else if (kind === ENTRY_KIND.END_PASS) {
          const index = payload.readUInt32LE(0);
          if (last !== undefined && !last.sealed && index === last.index) {
            closeSpill();
            target.endPass(payloadBytes > 4 ? payload.toString('utf8', 4, payloadBytes) : null);
            passEntries += 1;
          }
        } else {
          break;
        }
        walked += length;
        offset += length;
      }
    } finally {
      closeSpill();
    }
  } finally {
    closeSync(fd);
  }
  if (frames === 0 && passEntries === 0) return null;
  return `${frames} record${frames === 1 ? '' : 's'} and ${passEntries} pass ${passEntries === 1 ? 'entry' : 'entries'} applied from the capture pool`;
}

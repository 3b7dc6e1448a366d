// A pass file written in place while its pass is captured: a large record's bytes go once,
// straight to their slot in pass-NNN.safetensors, instead of into the spill and then, when the
// pass is sealed, read back and written a second time. Every byte the capture records is then
// written once, which halves what a large capture writes into the page cache (docs/performance.md,
// "Where the gate's time goes").
//
// The safetensors header goes first in the file and is only known when the pass ends, so the
// file starts with room for it: the data begins at 8 + room, and the header, padded with spaces
// to exactly `room` bytes (the format allows trailing spaces), is written into it at the seal.
// The room is guessed from the capture's own earlier passes (headerRoom); a header that outgrows
// it is not an error: the pass is written again under the minimal header (the old cost, once).
//
// Crash safety is unchanged in kind: the data is written before the frame that names it is
// appended to the spill (an in-place frame, capture-frame.ts: offset and tree segment digest), so
// a frame in the spill always names data that was written; recovery checks that data against the
// digest and drops what a death tore, as it drops a torn frame. A pass file without a journaled
// seal is never trusted as it stands: recovery rebuilds it.
import { closeSync, existsSync, fstatSync, openSync, renameSync } from 'node:fs';
import { tempPathBeside } from './temp-name.ts';
import {
  encodePassHeader,
  frameChanged,
  frameData,
  SpillReader,
  writePassFile,
  type InPlaceData,
  type SealBuffers,
  type SpillFrame,
  type WrittenPassFile,
} from './capture-frame.ts';
import { BundleError } from './errors.ts';
import { writeAllSync } from './safetensors-writer.ts';
import { fileTreeDigest, TreeHasher, treeDigestOf, type DigestScheme, type Segment } from './tree-digest.ts';

/**
 * Records from this size go in place. Below it a record costs more in the second write() call
 * per record (the data's, beside its frame's) than in copying it a second time at the seal.
 */
export const IN_PLACE_MIN_BYTES = 16 * 1024;

/** The header room of a capture's first pass with a record in place: a few hundred boundaries' worth. */
export const FIRST_HEADER_ROOM = 64 * 1024;

/**
 * Room for the header of the next pass file written in place: the largest header the capture
 * has sealed so far with a quarter to spare (decode passes repeat their boundaries, so their
 * headers match to a few digits), or FIRST_HEADER_ROOM before any. A multiple of 8, so the data
 * begins 8-aligned as the project's writers align it.
 */
export function headerRoom(largestHeaderSoFar: number | null): number {
  const room = largestHeaderSoFar === null ? FIRST_HEADER_ROOM : largestHeaderSoFar + Math.ceil(largestHeaderSoFar / 4) + 512;
  return Math.ceil(room / 8) * 8;
}

/** The pass file of the open pass, its records' data written where the sealed file holds them. */
export class InPlacePassFile {
  private fd: number | null;

  private constructor(
    readonly path: string,
    fd: number,
    /** Where the data begins: 8 bytes of length, then the header's room. */
    readonly dataStart: number,
    private readonly chunkBytes: number,
  ) {
    this.fd = fd;
  }

  /** Creates `path` exclusively (a pass file is never overwritten) with `room` bytes for the header. */
  static create(path: string, room: number, chunkBytes: number): InPlacePassFile {
    try {
      return new InPlacePassFile(path, openSync(path, 'wx+'), 8 + room, chunkBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new BundleError('E_TARGET_NOT_EMPTY', path, '(file)', 'already exists; writers never overwrite a file', { cause: error });
      }
      throw error;
    }
  }

  /** Writes a record's data to its slot (the bytes of the pass's records before it); returns its file offset and segment digest. */
  write(data: Uint8Array, slot: number): { fileOffset: number; digest: string } {
    const fileOffset = this.dataStart + slot;
    try {
      writeAllSync(this.descriptor(), data, fileOffset);
    } catch (error) {
      // Named, so that a disk full under the capture says which file it could not write.
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${this.path}: ${message}`, { cause: error });
    }
    return { fileOffset, digest: treeDigestOf(data, this.chunkBytes) };
  }

  /**
   * Seals the file from the pass's frames (`reader` over its spill): the data of frames kept in
   * the spill is checked against its checksum and written to its slot, the header written into
   * its room. Returns the file's digests, or null when the header does not fit its room (the
   * caller writes the pass again: relayout). Closes nothing.
   */
  seal(reader: SpillReader, frames: readonly SpillFrame[]): WrittenPassFile | null {
    const fd = this.descriptor();
    const encoded = encodePassHeader(frames);
    if (encoded.prefix.length > this.dataStart) return null;
    const prefix = Buffer.alloc(this.dataStart, 0x20);
    prefix.writeBigUInt64LE(BigInt(this.dataStart - 8), 0);
    encoded.prefix.copy(prefix, 8, 8);
    const segments: Segment[] = [{ offset: 0, length: this.dataStart, digest: treeDigestOf(prefix, this.chunkBytes) }];
    const tensorSha256: string[] = [];
    let slot = this.dataStart;
    for (const frame of frames) {
      let digest: string;
      if (frame.inPlace !== null) {
        if (frame.inPlace.fileOffset !== slot)
          throw frameChanged(reader.path, frame, `the record names byte ${frame.inPlace.fileOffset} of the pass file for its data, where its slot is ${slot}`);
        digest = frame.inPlace.digest;
      } else {
        digest = this.copyFromSpill(reader, frame, slot);
      }
      tensorSha256.push(digest);
      if (frame.byteLength > 0) segments.push({ offset: slot, length: frame.byteLength, digest });
      slot += frame.byteLength;
    }
    writeAllSync(fd, prefix, 0);
    const size = fstatSync(fd).size;
    if (size !== slot)
      throw new BundleError(
        'E_JOURNAL',
        this.path,
        '(file)',
        `is ${size} bytes where its header and records make ${slot}: the file was changed behind the writer`,
      );
    return { bytes: slot, headerBytes: encoded.prefix.length, sha256: fileTreeDigest(slot, this.chunkBytes, segments), tensorSha256 };
  }

  /**
   * Writes the pass again under its minimal header (its header outgrew the room): a new file
   * from the frames, the data in place read back from this one, then renamed over it. Closes
   * this file.
   */
  relayout(reader: SpillReader, frames: readonly SpillFrame[], buffers: SealBuffers): WrittenPassFile {
    const fd = this.descriptor();
    const temp = tempPathBeside(this.path);
    const data: InPlaceData = { reader: this.readerOver(fd), chunkBytes: this.chunkBytes };
    let written: WrittenPassFile;
    try {
      written = writePassFile(temp, reader, frames, buffers, { kind: 'tree', chunkBytes: this.chunkBytes }, data);
    } finally {
      this.close();
    }
    renameSync(temp, this.path);
    return written;
  }

  /** Closes the file (an unsealed one stays for recovery). Idempotent. */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private readerOver(fd: number): SpillReader {
    return new SpillReader(fd, fstatSync(fd).size, this.path);
  }

  /** Writes a frame's data from the spill to its slot, checked (frameData); returns its segment digest. */
  private copyFromSpill(reader: SpillReader, frame: SpillFrame, slot: number): string {
    const fd = this.descriptor();
    const hasher = new TreeHasher(this.chunkBytes);
    let position = slot;
    frameData(reader, frame, (chunk) => {
      hasher.update(chunk);
      writeAllSync(fd, chunk, position);
      position += chunk.byteLength;
    });
    return hasher.digest();
  }

  private descriptor(): number {
    if (this.fd === null) throw new Error(`InPlacePassFile: ${this.path} is closed`);
    return this.fd;
  }
}

/**
 * The pass file of an unsealed pass, opened for reading the records its capture wrote in place
 * (pass-file-in-place.ts); null when there is none, or the scheme has no tree to check them by.
 */
export function openInPlaceData(path: string, scheme: DigestScheme): (InPlaceData & { close(): void }) | null {
  if (scheme.kind !== 'tree' || !existsSync(path)) return null;
  const fd = openSync(path, 'r');
  return { reader: new SpillReader(fd, fstatSync(fd).size, path), chunkBytes: scheme.chunkBytes, close: () => closeSync(fd) };
}

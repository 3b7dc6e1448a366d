// The spill of a pass (pass-NNN.spill) while it is being captured: a log of self-describing
// frames, one per record, each appended with ONE write (or one copy into a shared file mapping).
// A frame carries everything the manifest needs about its record, so the spill alone rebuilds
// the pass: no journal line per record. Layout, little-endian:
//
//   0   u32  magic 0x4d524654 ("TFRM")
//   4   u32  crc32 of bytes [8, end of frame): header fields, shape, strides, name, stage, data
//   8   u32  pass index
//   12  u32  seq: 0 for the pass's first record, then 1, 2, ... (frames are contiguous)
//   16  u32  data bytes, low 32 bits
//   20  u32  data bytes, high bits
//   24  u8   dtype (the trace ABI's ti_dtype code, ABI_DTYPE_ORDER)
//   25  u8   rank
//   26  u16  name bytes (UTF-8)
//   28  u16  stage bytes (UTF-8)
//   30  u16  flags: 0, or FRAME_IN_PLACE (1)
//   32  i64 × rank  shape, then i64 × rank strides (as emitted, in elements)
//   ..  name, stage, then the row-major data
//
// A frame with FRAME_IN_PLACE carries no data: its record's bytes were written once, straight to
// their place in the pass's file (pass-file-in-place.ts), and in place of the data the frame ends
// with where (u64: the byte offset in pass-NNN.safetensors) and what (32 bytes: the data's tree
// segment digest, tree-digest.ts). The crc32 covers those 40 bytes; the data itself is checked
// against the digest wherever it is read back (recovery). A spill may hold both kinds.
//
// A spill is read up to its first frame that is not whole. Frames are only ever appended to a log
// that starts empty (a new or emptied file, or one zeroed end to end), each frame with one write
// (a death leaves a prefix of it: the spill ends inside the frame) or, in a shared mapping, its
// magic stored after the rest (a death leaves it without magic), so whatever lies after the last
// whole frame is nothing, zeros, or the remains of the one frame whose append the death of the
// process interrupted (a torn record). Each frame's crc32 is checked on top of that, so bytes
// that changed after they were appended are refused too.
import { createHash } from 'node:crypto';
import { FileTreeHasher, PLAIN_SHA256, TreeHasher, type DigestScheme } from './tree-digest.ts';
import { closeSync, openSync, readSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { JournalBoundary } from './capture-journal.ts';
import { ABI_DTYPE_ORDER, DTYPE_SIZE, type DType } from './dtype.ts';
import { BundleError } from './errors.ts';
import { encodeSafetensorsHeader, MAX_HEADER_BYTES, METADATA_KEY } from './safetensors-header.ts';
import { writeAllSync } from './safetensors-writer.ts';

export const FRAME_MAGIC = 0x4d524654;
export const FRAME_FIXED_BYTES = 32;
/** The frame's flag: its data is in the pass file, not in the frame. */
export const FRAME_IN_PLACE = 1;
/** What an in-place frame holds after name and stage: u64 file offset, 32-byte segment digest. */
export const IN_PLACE_TRAILER_BYTES = 40;
export const MAX_FRAME_RANK = 255;
export const MAX_FRAME_STRING_BYTES = 0xffff;
const TWO_32 = 4294967296;

const DTYPE_CODE: Readonly<Record<DType, number>> = Object.fromEntries(ABI_DTYPE_ORDER.map((dtype, code) => [dtype, code])) as Record<DType, number>;

/** A name or stage too long for its frame field. */
export class FrameFieldError extends RangeError {
  constructor(
    readonly field: 'name' | 'stage',
    bytes: number,
  ) {
    super(`${field} is ${bytes} bytes of UTF-8 (a frame holds at most ${MAX_FRAME_STRING_BYTES})`);
  }
}

/** The encoder lays fields out with typed arrays, in the platform's byte order: it must be the format's. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function frameHeaderBytes(rank: number, nameBytes: number, stageBytes: number): number {
  return FRAME_FIXED_BYTES + 16 * rank + nameBytes + stageBytes;
}

/**
 * Builds frames in one reusable buffer: `open` lays out the header and returns the view the
 * record's data goes to, `close` stamps the checksum and returns the frame's length (the frame
 * is `bytes[0, length)`). No allocation per record beyond two subarray views.
 */
export class FrameEncoder {
  private buffer: Buffer;
  private u16: Uint16Array;
  private u32: Uint32Array;
  private i32: Int32Array;
  private length = -1;

  constructor(initialBytes = 64 * 1024) {
    if (!LITTLE_ENDIAN) throw new Error('capture frames are little-endian and this encoder writes them natively: a big-endian platform is not supported');
    this.buffer = Buffer.allocUnsafeSlow(initialBytes);
    this.u16 = new Uint16Array(this.buffer.buffer, 0, initialBytes >>> 1);
    this.u32 = new Uint32Array(this.buffer.buffer, 0, initialBytes >>> 2);
    this.i32 = new Int32Array(this.buffer.buffer, 0, initialBytes >>> 2);
  }

  /** The frame buffer: after `close`, the frame is its first `length` bytes. */
  get bytes(): Buffer {
    return this.buffer;
  }

  /**
   * Lays out a frame. `shape` and `strides` hold `rank` safe integers (checked by the caller);
   * name and stage are well-formed strings. Throws FrameFieldError when one exceeds
   * MAX_FRAME_STRING_BYTES in UTF-8.
   */
  open(
    pass: number,
    seq: number,
    dtype: DType,
    shape: ArrayLike<number>,
    strides: ArrayLike<number>,
    name: string,
    stage: string,
    dataBytes: number,
  ): Uint8Array {
    const offset = this.layOut(pass, seq, dtype, shape, strides, name, stage, dataBytes, dataBytes);
    this.length = offset + dataBytes;
    return this.buffer.subarray(offset, offset + dataBytes);
  }

  /**
   * Lays out only the header of a frame whose `dataBytes` of data go elsewhere (the capture
   * pool copies them straight from the engine), crc32 left 0; returns the header's length: the
   * header is `bytes[0, length)`. Throws FrameFieldError like `open`.
   */
  header(
    pass: number,
    seq: number,
    dtype: DType,
    shape: ArrayLike<number>,
    strides: ArrayLike<number>,
    name: string,
    stage: string,
    dataBytes: number,
  ): number {
    this.length = -1;
    return this.layOut(pass, seq, dtype, shape, strides, name, stage, dataBytes, 0);
  }

  /** Writes the header fields; returns where the data starts. `reserve`: data bytes to make room for. */
  private layOut(
    pass: number,
    seq: number,
    dtype: DType,
    shape: ArrayLike<number>,
    strides: ArrayLike<number>,
    name: string,
    stage: string,
    dataBytes: number,
    reserve: number,
  ): number {
    const rank = shape.length;
    const worstHeader = frameHeaderBytes(rank, 3 * name.length, 3 * stage.length);
    if (this.buffer.length < worstHeader + reserve) this.grow(worstHeader + reserve);
    const buffer = this.buffer;
    const u32 = this.u32;
    const i32 = this.i32;
    u32[0] = FRAME_MAGIC;
    u32[1] = 0;
    u32[2] = pass;
    u32[3] = seq;
    u32[4] = dataBytes >>> 0;
    u32[5] = Math.floor(dataBytes / TWO_32);
    buffer[24] = DTYPE_CODE[dtype];
    buffer[25] = rank;
    let word = FRAME_FIXED_BYTES >>> 2;
    for (let axis = 0; axis < rank; axis++, word += 2) {
      const value = shape[axis] as number;
      i32[word] = value >>> 0;
      i32[word + 1] = Math.floor(value / TWO_32);
    }
    for (let axis = 0; axis < rank; axis++, word += 2) {
      const value = strides[axis] as number;
      i32[word] = value >>> 0;
      i32[word + 1] = Math.floor(value / TWO_32);
    }
    let offset = word << 2;
    const nameBytes = buffer.write(name, offset, 'utf8');
    if (nameBytes > MAX_FRAME_STRING_BYTES) throw new FrameFieldError('name', nameBytes);
    offset += nameBytes;
    const stageBytes = buffer.write(stage, offset, 'utf8');
    if (stageBytes > MAX_FRAME_STRING_BYTES) throw new FrameFieldError('stage', stageBytes);
    offset += stageBytes;
    this.u16[13] = nameBytes;
    this.u16[14] = stageBytes;
    this.u16[15] = 0;
    return offset;
  }

  /** Stamps the checksum of the open frame; returns its length. */
  close(): number {
    const length = this.length;
    if (length < 0) throw new Error('FrameEncoder.close without open');
    this.u32[1] = crc32(this.buffer.subarray(8, length));
    this.length = -1;
    return length;
  }

  /** Forgets an open frame (its data was never filled in). */
  discard(): void {
    this.length = -1;
  }

  private grow(atLeast: number): void {
    let size = this.buffer.length;
    while (size < atLeast) size *= 2;
    this.buffer = Buffer.allocUnsafeSlow(size);
    this.u16 = new Uint16Array(this.buffer.buffer, 0, size >>> 1);
    this.u32 = new Uint32Array(this.buffer.buffer, 0, size >>> 2);
    this.i32 = new Int32Array(this.buffer.buffer, 0, size >>> 2);
  }
}

/** What a frame encoded elsewhere says it is (a frame from the capture pool), read from its header. */
export interface FrameIdentity {
  readonly pass: number;
  readonly seq: number;
  readonly name: string;
  readonly dataBytes: number;
}

/** Reads the identity of the frame at the start of `frame`, or null when it is not a frame of `length` bytes. */
export function frameIdentity(frame: Buffer, length: number): FrameIdentity | null {
  if (length < FRAME_FIXED_BYTES || frame.readUInt32LE(0) !== FRAME_MAGIC) return null;
  const rank = frame[25] as number;
  const nameBytes = frame.readUInt16LE(26);
  const stageBytes = frame.readUInt16LE(28);
  const dataBytes = frame.readUInt32LE(20) * TWO_32 + frame.readUInt32LE(16);
  const headerBytes = frameHeaderBytes(rank, nameBytes, stageBytes);
  if (headerBytes + dataBytes !== length) return null;
  const text = FRAME_FIXED_BYTES + 16 * rank;
  return { pass: frame.readUInt32LE(8), seq: frame.readUInt32LE(12), name: frame.toString('utf8', text, text + nameBytes), dataBytes };
}

/** Stamps the crc32 of a whole frame `frame[0, length)` (one whose checksum was left 0). */
export function stampFrameChecksum(frame: Buffer, length: number): void {
  frame.writeUInt32LE(crc32(frame.subarray(8, length)), 4);
}

/**
 * Builds in `out` the in-place frame of a whole frame `frame` (header then data) whose data was
 * written at `fileOffset` of the pass file, with the data's segment digest `digest` (hex): the
 * frame's header, the flag, the 40-byte trailer, the checksum. Returns the frame's length
 * (`out` must hold the header and 40 bytes more).
 */
export function inPlaceFrame(frame: Buffer, headerBytes: number, fileOffset: number, digest: string, out: Buffer): number {
  frame.copy(out, 0, 0, headerBytes);
  out.writeUInt16LE(FRAME_IN_PLACE, 30);
  out.writeBigUInt64LE(BigInt(fileOffset), headerBytes);
  out.write(digest, headerBytes + 8, 32, 'hex');
  const length = headerBytes + IN_PLACE_TRAILER_BYTES;
  stampFrameChecksum(out, length);
  return length;
}

// ---- reading a spill back ------------------------------------------------------------------

/**
 * Sequential reads of a spill through one window: a small spill is read with a single call,
 * a large one in windows of `windowBytes`. Views it returns are valid until the next call.
 */
export class SpillReader {
  private window: Buffer;
  private start = 0;
  private end = 0;

  /** `size`: how many bytes of the file belong to the spill (its length, or what was appended). */
  constructor(
    private readonly fd: number,
    readonly size: number,
    readonly path: string,
    window?: Buffer,
  ) {
    const wanted = Math.max(64 * 1024, Math.min(size, 4 * 1024 * 1024));
    this.window = window !== undefined && window.length >= wanted ? window : Buffer.allocUnsafeSlow(wanted);
  }

  /** The window buffer, for reuse by the next reader. */
  get buffer(): Buffer {
    return this.window;
  }

  /**
   * Where bytes [offset, offset + length) start in `buffer`, reading them in when needed; -1
   * when the spill ends before them or they do not fit in the window (frame headers, at most
   * ~128 KiB, always fit; data that does not goes through `chunks`).
   */
  ensure(offset: number, length: number): number {
    if (offset >= this.start && offset + length <= this.end) return offset - this.start;
    if (length > this.window.length) return -1;
    this.load(offset);
    return offset + length <= this.end ? 0 : -1;
  }

  /** Calls `take` with consecutive pieces of [offset, offset + length); stops short at the end of the spill. Returns the bytes seen. */
  chunks(offset: number, length: number, take: (chunk: Uint8Array) => void): number {
    let done = 0;
    while (done < length) {
      const at = offset + done;
      if (!(at >= this.start && at < this.end)) {
        this.load(at);
        if (this.end === this.start) break;
      }
      const from = at - this.start;
      const size = Math.min(length - done, this.end - at);
      take(this.window.subarray(from, from + size));
      done += size;
    }
    return done;
  }

  private load(offset: number): void {
    const want = Math.min(this.window.length, Math.max(0, this.size - offset));
    let got = 0;
    while (got < want) {
      const read = readSync(this.fd, this.window, got, want - got, offset + got);
      if (read === 0) break;
      got += read;
    }
    this.start = offset;
    this.end = offset + got;
  }
}

/** One whole frame of a spill. */
export interface SpillFrame {
  readonly seq: number;
  readonly name: string;
  readonly stage: string;
  readonly dtype: DType;
  readonly shape: number[];
  readonly strides: number[];
  /** Where the data starts in the spill (an in-place frame: where its trailer starts). */
  readonly dataOffset: number;
  readonly byteLength: number;
  /** The checksum the frame carries. */
  readonly crc: number;
  /** crc32 of the frame's bytes [8, dataOffset): continued over the data it must equal `crc`. */
  readonly headerCrc: number;
  /** An in-place frame's data: its offset in the pass file and its segment digest (hex). */
  readonly inPlace: { readonly fileOffset: number; readonly digest: string } | null;
}

/**
 * The pass file an unsealed pass's in-place frames put their data in, for reading it back
 * (recovery): a reader over it and the tree's chunk size their digests were computed with.
 */
export interface InPlaceData {
  readonly reader: SpillReader;
  readonly chunkBytes: number;
}

export interface SpillScan {
  readonly frames: SpillFrame[];
  /** End of the last whole frame. */
  readonly end: number;
  /**
   * What follows the whole frames when it is not empty (nothing or only zeros): a frame cut
   * short, or bytes that are not a frame. `name` when its header was readable.
   */
  readonly torn: {
    readonly offset: number;
    readonly reason: string;
    /** The record's name, when its header was readable. */
    readonly name: string | null;
    /** Where the frame claims to end, when its header was readable and that end is inside the spill. */
    readonly frameEnd: number | null;
  } | null;
}

function readI64(buffer: Buffer, at: number): number {
  return buffer.readInt32LE(at + 4) * TWO_32 + buffer.readUInt32LE(at);
}

/**
 * Reads the frames of pass `pass` from the start of a spill (or from `from`, a frame boundary,
 * expecting record `from.seq` there). `verifyData`: check every frame's checksum here
 * (recovery); otherwise only its header is read and `writePassFile` checks the data as it
 * copies it. Stops at the first frame that is not whole; never throws on content. (Names are
 * decoded without validating their UTF-8 here: a frame whose bytes are not the ones appended
 * fails its checksum, here or in writePassFile, before anything it names is kept.)
 */
export function scanSpill(
  reader: SpillReader,
  pass: number,
  verifyData: boolean,
  from: { offset: number; seq: number } = { offset: 0, seq: 0 },
  inPlaceData: InPlaceData | null = null,
): SpillScan {
  const frames: SpillFrame[] = [];
  const names = new Set<string>();
  let position = from.offset;
  // Every record has its slot in the pass file, in order, whether its data went there at once
  // (in place) or waits in the spill: the in-place frames must agree on where the data begins.
  let slot = 0;
  let dataStart: number | null = null;
  const slotKnown = from.offset === 0; // a scan resumed past a damaged frame cannot place slots
  const stop = (reason: string, name: string | null = null, frameEnd: number | null = null): SpillScan => {
    const torn = reader.size > position && !zerosFrom(reader, position) ? { offset: position, reason, name, frameEnd } : null;
    return { frames, end: position, torn };
  };
  while (position < reader.size) {
    let at = reader.ensure(position, FRAME_FIXED_BYTES);
    if (at < 0) return stop('the spill ends inside a frame header');
    let buffer = reader.buffer;
    if (buffer.readUInt32LE(at) !== FRAME_MAGIC) return stop('no frame starts here');
    const crc = buffer.readUInt32LE(at + 4);
    const dataBytes = buffer.readUInt32LE(at + 20) * TWO_32 + buffer.readUInt32LE(at + 16);
    const dtype = ABI_DTYPE_ORDER[buffer[at + 24] as number];
    const rank = buffer[at + 25] as number;
    const nameBytes = buffer.readUInt16LE(at + 26);
    const stageBytes = buffer.readUInt16LE(at + 28);
    const seq = from.seq + frames.length;
    if (buffer.readUInt32LE(at + 8) !== pass || buffer.readUInt32LE(at + 12) !== seq) return stop(`the frame is not record ${seq} of pass ${pass}`);
    const flags = buffer.readUInt16LE(at + 30);
    if (dtype === undefined || nameBytes === 0 || stageBytes === 0 || (flags !== 0 && flags !== FRAME_IN_PLACE)) return stop('malformed frame header');
    const inPlace = flags === FRAME_IN_PLACE;
    const headerBytes = frameHeaderBytes(rank, nameBytes, stageBytes);
    at = reader.ensure(position, headerBytes + (inPlace ? IN_PLACE_TRAILER_BYTES : 0));
    if (at < 0) return stop('the spill ends inside a frame header');
    buffer = reader.buffer;
    const text = at + FRAME_FIXED_BYTES + 16 * rank;
    const name = buffer.toString('utf8', text, text + nameBytes);
    const stage = buffer.toString('utf8', text + nameBytes, text + nameBytes + stageBytes);
    const shape = new Array<number>(rank);
    const strides = new Array<number>(rank);
    let count = 1;
    for (let axis = 0; axis < rank; axis++) {
      const extent = readI64(buffer, at + FRAME_FIXED_BYTES + 8 * axis);
      const stride = readI64(buffer, at + FRAME_FIXED_BYTES + 8 * (rank + axis));
      if (!Number.isSafeInteger(extent) || extent < 0 || !Number.isSafeInteger(stride)) return stop('malformed shape or strides', name);
      shape[axis] = extent;
      strides[axis] = stride;
      count *= extent;
    }
    const headerCrc = crc32(buffer.subarray(at + 8, at + headerBytes));
    const dataOffset = position + headerBytes;
    const frameEnd = dataOffset + (inPlace ? IN_PLACE_TRAILER_BYTES : dataBytes);
    if (count * DTYPE_SIZE[dtype] !== dataBytes) return stop('the data length disagrees with dtype × shape', name);
    if (names.has(name)) return stop(`boundary "${name}" repeats`, name, frameEnd <= reader.size ? frameEnd : null);
    if (frameEnd > reader.size) return stop(inPlace ? 'the spill ends inside the frame' : 'the spill ends inside the frame data', name);
    let placed: SpillFrame['inPlace'] = null;
    if (inPlace) {
      // The trailer is small and always checked: it says where the data is and what it must be.
      if (crc32(buffer.subarray(at + headerBytes, at + headerBytes + IN_PLACE_TRAILER_BYTES), headerCrc) !== crc)
        return stop('the frame checksum does not match (its bytes did not all land, or changed)', name, frameEnd);
      const fileOffset = Number(buffer.readBigUInt64LE(at + headerBytes));
      const begins = fileOffset - slot;
      if (!Number.isSafeInteger(fileOffset) || (slotKnown && (begins < 8 || begins % 8 !== 0 || (dataStart !== null && begins !== dataStart))))
        return stop(`the frame places its data at byte ${fileOffset} of the pass file, not in its slot`, name, frameEnd);
      dataStart = begins;
      placed = { fileOffset, digest: buffer.toString('hex', at + headerBytes + 8, at + headerBytes + IN_PLACE_TRAILER_BYTES) };
      if (verifyData) {
        const problem = inPlaceDataProblem(inPlaceData, fileOffset, dataBytes, placed.digest);
        if (problem !== null) return stop(problem, name, frameEnd);
      }
    } else if (verifyData) {
      let running = headerCrc;
      reader.chunks(dataOffset, dataBytes, (chunk) => {
        running = crc32(chunk, running);
      });
      if (running !== crc) return stop('the frame checksum does not match (its bytes did not all land, or changed)', name, frameEnd);
    }
    frames.push({ seq, name, stage, dtype, shape, strides, dataOffset, byteLength: dataBytes, crc, headerCrc, inPlace: placed });
    names.add(name);
    slot += dataBytes;
    position = frameEnd;
  }
  return { frames, end: position, torn: null };
}

/** Why the data an in-place frame names is not what it was (null: it is), read from the pass file. */
function inPlaceDataProblem(source: InPlaceData | null, fileOffset: number, dataBytes: number, digest: string): string | null {
  if (source === null) return 'its data was written to the pass file, which is missing';
  const hasher = new TreeHasher(source.chunkBytes);
  const seen = source.reader.chunks(fileOffset, dataBytes, (chunk) => void hasher.update(chunk));
  if (seen !== dataBytes) return `the pass file ends ${dataBytes - seen} bytes into the record's data`;
  if (hasher.digest() !== digest) return 'its data in the pass file does not match the digest it was written with (it did not all land, or changed)';
  return null;
}

function zerosFrom(reader: SpillReader, offset: number): boolean {
  let zero = true;
  reader.chunks(offset, reader.size - offset, (chunk) => {
    if (!zero) return;
    const words = chunk.byteLength >>> 3;
    const aligned = chunk.byteOffset % 8 === 0 ? new BigUint64Array(chunk.buffer, chunk.byteOffset, words) : null;
    let i = 0;
    if (aligned !== null) {
      for (; i < words; i++) if (aligned[i] !== 0n) return void (zero = false);
      i = words * 8;
    }
    for (; i < chunk.byteLength; i++) if (chunk[i] !== 0) return void (zero = false);
  });
  return zero;
}

// ---- sealing ---------------------------------------------------------------------------------

/** The error of a frame whose data is not what was appended (or written in place): E_JOURNAL naming `file` and the frame. */
export function frameChanged(file: string, frame: SpillFrame, message: string): BundleError {
  return new BundleError('E_JOURNAL', file, `frame ${frame.seq} (${JSON.stringify(frame.name)})`, message);
}

/**
 * Hands `take` the data a spill frame holds, in order (in one piece when it fits the reader's
 * window), checked against the frame's checksum: frameChanged naming the spill when the spill
 * ends inside the data or its bytes changed since they were appended. A single piece is checked
 * before `take` sees it; pieces are checked once all were taken, so a caller that wrote them
 * drops what it wrote when this throws.
 */
export function frameData(reader: SpillReader, frame: SpillFrame, take: (chunk: Uint8Array) => void): void {
  const mismatch = 'its bytes no longer match the checksum they were appended with (the spill changed)';
  const at = reader.ensure(frame.dataOffset, frame.byteLength);
  if (at >= 0) {
    const data = reader.buffer.subarray(at, at + frame.byteLength);
    if (crc32(data, frame.headerCrc) !== frame.crc) throw frameChanged(reader.path, frame, mismatch);
    take(data);
    return;
  }
  let running = frame.headerCrc;
  const seen = reader.chunks(frame.dataOffset, frame.byteLength, (chunk) => {
    running = crc32(chunk, running);
    take(chunk);
  });
  if (seen !== frame.byteLength) throw frameChanged(reader.path, frame, `the spill ends ${frame.byteLength - seen} bytes into the frame's data`);
  if (running !== frame.crc) throw frameChanged(reader.path, frame, mismatch);
}

/** Output through one buffer: few large writes, the whole-file digest computed as it goes. */
class BufferedOutput {
  private used = 0;
  position = 0;

  constructor(
    private readonly fd: number,
    private readonly buffer: Buffer,
    readonly hash: { update(bytes: Uint8Array): unknown },
  ) {}

  put(bytes: Uint8Array): void {
    if (bytes.byteLength > this.buffer.length - this.used) {
      this.flush();
      if (bytes.byteLength >= this.buffer.length) {
        writeAllSync(this.fd, bytes, this.position);
        this.hash.update(bytes);
        this.position += bytes.byteLength;
        return;
      }
    }
    this.buffer.set(bytes, this.used);
    this.used += bytes.byteLength;
  }

  flush(): void {
    if (this.used === 0) return;
    const bytes = this.buffer.subarray(0, this.used);
    writeAllSync(this.fd, bytes, this.position);
    this.hash.update(bytes);
    this.position += this.used;
    this.used = 0;
  }
}

/** Buffers a writer keeps from one seal to the next (allocated on first use, grown when short). */
export interface SealBuffers {
  output?: Buffer;
}

export interface WrittenPassFile {
  readonly bytes: number;
  /** The header's bytes as written with the least padding (length prefix included), whatever room it was given. */
  readonly headerBytes: number;
  /** sha256 of the whole file. */
  readonly sha256: string;
  /** sha256 of each frame's data, in frame order. */
  readonly tensorSha256: string[];
}

/** A key JSON.stringify would not keep in insertion order (an array index): see encodePassHeader. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * The safetensors header of a pass, byte for byte what encodeSafetensorsHeader(…, null, 'given')
 * writes (keys sorted by code unit, data in emission order, JSON padded with spaces to 8 bytes),
 * built as text rather than through an object and JSON.stringify, which costs more than the rest
 * of a small pass's sealing. Keys that are array indices, which an object would reorder, are left
 * to encodeSafetensorsHeader itself. Frames hold unique, non-empty names (scanSpill).
 */
export function encodePassHeader(frames: readonly SpillFrame[]): { prefix: Buffer; dataBytes: number } {
  if (frames.some((frame) => ARRAY_INDEX.test(frame.name) || frame.name === METADATA_KEY)) {
    return encodeSafetensorsHeader(
      frames.map((frame) => ({ key: frame.name, dtype: frame.dtype, shape: frame.shape, byteLength: frame.byteLength })),
      null,
      'given',
    );
  }
  const begins = new Array<number>(frames.length);
  let offset = 0;
  frames.forEach((frame, i) => {
    begins[i] = offset;
    offset += frame.byteLength;
  });
  const order = frames
    .map((_, i) => i)
    .sort((a, b) => {
      const x = (frames[a] as SpillFrame).name;
      const y = (frames[b] as SpillFrame).name;
      return x < y ? -1 : x > y ? 1 : 0;
    });
  let json = '{';
  order.forEach((i, n) => {
    const frame = frames[i] as SpillFrame;
    const begin = begins[i] as number;
    json += `${n === 0 ? '' : ','}${JSON.stringify(frame.name)}:{"dtype":"${frame.dtype}","shape":[${frame.shape.join(',')}],"data_offsets":[${begin},${begin + frame.byteLength}]}`;
  });
  json += '}';
  const length = Buffer.byteLength(json, 'utf8');
  const padded = length + ((8 - (length % 8)) % 8);
  if (padded > MAX_HEADER_BYTES) throw new Error(`safetensors header of ${padded} bytes exceeds ${MAX_HEADER_BYTES}`);
  const prefix = Buffer.alloc(8 + padded, 0x20);
  prefix.writeBigUInt64LE(BigInt(padded), 0);
  prefix.write(json, 8, 'utf8');
  return { prefix, dataBytes: offset };
}

/**
 * Writes the safetensors file of a pass from whole frames of its spill, in emission order,
 * straight under its final name, created exclusively (an existing file is never overwritten:
 * E_TARGET_NOT_EMPTY). No temporary name: a pass file counts only once its seal is journaled,
 * and recovery rebuilds one that has none. Each frame's data is checked against its checksum as
 * it is copied (E_JOURNAL naming the spill and the frame when the spill changed since the frame
 * was appended) and hashed for the manifest.
 */
export function writePassFile(
  path: string,
  reader: SpillReader,
  frames: readonly SpillFrame[],
  buffers: SealBuffers = {},
  scheme: DigestScheme = PLAIN_SHA256,
  inPlaceData: InPlaceData | null = null,
): WrittenPassFile {
  const encoded = encodePassHeader(frames);
  const dataBytes = encoded.dataBytes;
  // Under the tree scheme the file's one pass (header, then every frame's data, each a segment)
  // yields the file's digest and every tensor's: no per-tensor sha256 beside it.
  const tree = scheme.kind === 'tree' ? new FileTreeHasher(scheme.chunkBytes, treeCuts(encoded.prefix.length, frames)) : null;
  const plain = tree === null ? createHash('sha256') : null;
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new BundleError('E_TARGET_NOT_EMPTY', path, '(file)', 'already exists; writers never overwrite a file', { cause: error });
    }
    throw error;
  }
  const tensorSha256: string[] = [];
  let output: BufferedOutput;
  try {
    const wanted = Math.max(64 * 1024, Math.min(4 * 1024 * 1024, encoded.prefix.length + dataBytes));
    if (buffers.output === undefined || buffers.output.length < wanted) buffers.output = Buffer.allocUnsafeSlow(wanted);
    output = new BufferedOutput(fd, buffers.output, tree ?? (plain as ReturnType<typeof createHash>));
    output.put(encoded.prefix);
    for (const frame of frames) {
      if (frame.inPlace !== null) {
        // Data written in place before (a pass sealed again elsewhere: recovery, a header that
        // outgrew its room): copied from that file, its digest checked below, from the tree.
        if (tree === null || inPlaceData === null)
          throw new Error(`internal: frame ${frame.seq} of ${path} has its data in place, which needs the tree scheme and the pass file`);
        const seen = inPlaceData.reader.chunks(frame.inPlace.fileOffset, frame.byteLength, (chunk) => output.put(chunk));
        if (seen !== frame.byteLength)
          throw frameChanged(inPlaceData.reader.path, frame, `the pass file ends ${frame.byteLength - seen} bytes into the record's data`);
        continue;
      }
      const hash = tree === null ? createHash('sha256') : null;
      frameData(reader, frame, (chunk) => {
        hash?.update(chunk);
        output.put(chunk);
      });
      if (hash !== null) tensorSha256.push(hash.digest('hex'));
    }
    output.flush();
    closeSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(path);
    throw error;
  }
  if (tree === null)
    return { bytes: output.position, headerBytes: encoded.prefix.length, sha256: (plain as ReturnType<typeof createHash>).digest('hex'), tensorSha256 };
  const sha256 = tree.digest();
  let begin = encoded.prefix.length;
  for (const frame of frames) {
    const segment = tree.segmentAt(begin, begin + frame.byteLength);
    if (segment === undefined) throw new Error(`internal: frame ${frame.seq} of ${path} is no segment of its tree`);
    if (frame.inPlace !== null && segment.digest !== frame.inPlace.digest) {
      unlinkSync(path);
      throw frameChanged(
        inPlaceData?.reader.path ?? path,
        frame,
        'its data in the pass file no longer matches the digest it was written with (the file changed)',
      );
    }
    tensorSha256.push(segment.digest);
    begin += frame.byteLength;
  }
  return { bytes: output.position, headerBytes: encoded.prefix.length, sha256, tensorSha256 };
}

/** Where a pass file's tree segments end: the header, then each frame's data in order. */
function treeCuts(prefixBytes: number, frames: readonly SpillFrame[]): number[] {
  const cuts = [prefixBytes];
  let at = prefixBytes;
  for (const frame of frames) cuts.push((at += frame.byteLength));
  return cuts;
}

/** A sealed pass: its file entry and its boundaries as the journal keeps them. */
export interface SealedFrames {
  readonly file: { readonly path: string; readonly sha256: string; readonly bytes: number };
  readonly boundaries: JournalBoundary[];
}

/** Writes `dir/fileName` from whole frames (writePassFile), digests in `scheme`, and describes what it holds. */
export function sealFrames(
  dir: string,
  fileName: string,
  reader: SpillReader,
  frames: readonly SpillFrame[],
  buffers?: SealBuffers,
  scheme: DigestScheme = PLAIN_SHA256,
  inPlaceData: InPlaceData | null = null,
  target: string = join(dir, fileName),
): SealedFrames {
  return describeSealed(fileName, frames, writePassFile(target, reader, frames, buffers, scheme, inPlaceData));
}

/** A pass file written from `frames`, described as its seal journals it. */
export function describeSealed(fileName: string, frames: readonly SpillFrame[], written: WrittenPassFile): SealedFrames {
  return {
    file: { path: fileName, sha256: written.sha256, bytes: written.bytes },
    boundaries: frames.map((frame, i) => ({
      name: frame.name,
      stage: frame.stage,
      dtype: frame.dtype,
      shape: frame.shape,
      strides: frame.strides,
      sha256: written.tensorSha256[i] as string,
      byte_length: frame.byteLength,
    })),
  };
}

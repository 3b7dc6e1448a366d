// The engine's side of a capture through the capture pool (capture-pool-layout.ts): the record
// callback copies each record's bytes ONCE, straight from the engine's memory into the next
// entry of a bounded ring, and goes on; the capture writer thread (capture-writer-thread.ts)
// checksums the frames, appends them to the spills, seals the passes and keeps the journal.
//
// The ring is a shared mapping of capture.pool in the capture folder, mapped once and reused
// lap after lap (its pages stay in memory: no page fault, no system call per record), so:
//   - memory is bounded by the pool, not by the largest pass: when the ring is full the engine's
//     thread waits for the writer (back-pressure) — records are never dropped or reordered;
//   - what the engine's thread stored outlives the death of the process (the kernel keeps a
//     shared file mapping's pages), entries the writer had not applied included: an entry's
//     magic is stored last, and recovery applies the whole entries after the writer's tail.
// A record larger than the ring waits until the writer has caught up, and the ring grows to
// hold it (memory then bounded by the largest record).
import { closeSync, openSync, statfsSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import {
  encodePoolHeader,
  ENTRY_HEADER_BYTES,
  ENTRY_KIND,
  ENTRY_MAGIC,
  entryBytes,
  implicitWrap,
  mustWrap,
  POOL_FILE_NAME,
  POOL_HEADER_BYTES,
  POOL_TAIL_OFFSET,
  type EntryKind,
} from '../core/bundle/capture-pool-layout.ts';
import type { RunOutcome } from '../core/bundle/manifest-schema.ts';
import { CONTROL_BYTES, POSITION, SIGNAL, SIGNAL_SLOTS, WriterMessageSchema, type WriterRequest } from './capture-pool-protocol.ts';
import { engineScriptPath } from './engine-scripts.ts';
import type { NativeMemory } from './native-memory.ts';
import type { RingState } from './native-recorder.ts';

/** Default ring size: a few hidden states of a real model in flight, far below the 300 MB budget of the engine host. */
export const DEFAULT_POOL_BYTES = 64 * 1024 * 1024;
/** Smallest ring (the tests use tiny ones to make the engine wait). */
export const MIN_POOL_BYTES = 4096;
/**
 * The largest entry the ring can hold: the pool file states the ring's capacity, and each entry
 * its payload length, in 32 bits (capture-pool-layout.ts), and the ring grows in MIN_POOL_BYTES.
 * A larger record is refused by name; the direct spill (TRACE_INSPECTOR_SPILL=write), whose frames
 * state 64-bit lengths, captures it.
 */
export const MAX_ENTRY_BYTES = Math.floor(0xffffffff / MIN_POOL_BYTES) * MIN_POOL_BYTES;
/** How long a wait for the writer sleeps before it checks again that the writer is alive. */
const WAIT_SLICE_MS = 1000;
/**
 * The writer is woken once this many bytes (or a quarter of the ring, if less) are published
 * since it was last woken, when a pass ends, and when the engine waits for room: not for every
 * record (a wake is a system call, and small records would pay one each). In between it wakes
 * by itself every WRITER_IDLE_MS (capture-writer-thread.ts).
 */
const WAKE_BYTES = 1024 * 1024;

/** Engine-thread time spent waiting for room in the pool, over a capture. */
export interface PoolWaits {
  /** Times a record (or pass entry) found the ring full and waited. */
  count: number;
  ms: number;
}

export class CapturePoolError extends Error {
  override readonly name = 'CapturePoolError';
}

export class CapturePool {
  private readonly signals: Int32Array;
  private readonly positions: BigInt64Array;
  private readonly entryHeader = Buffer.alloc(ENTRY_HEADER_BYTES);
  private readonly entryWords = new Uint32Array(this.entryHeader.buffer, this.entryHeader.byteOffset, ENTRY_HEADER_BYTES / 4);
  private readonly magic = Buffer.alloc(4);
  private readonly payload = Buffer.alloc(256);
  private fd: number | null = null;
  private address = 0;
  private capacity = 0;
  private base = 0;
  private head = 0;
  private seq = 0;
  private failure: string | null = null;
  private ended = false;
  /** Head when the writer was last woken. */
  private woken = 0;
  readonly waits: PoolWaits = { count: 0, ms: 0 };

  private constructor(
    private readonly memory: NativeMemory,
    private readonly path: string,
    private readonly port: MessagePort,
    readonly thread: Worker,
    control: SharedArrayBuffer,
  ) {
    this.signals = new Int32Array(control, 0, SIGNAL_SLOTS);
    this.positions = new BigInt64Array(control);
    this.magic.writeUInt32LE(ENTRY_MAGIC, 0);
  }

  /**
   * Starts the writer thread, has it create the capture in `dir` (NativeBundleWriter.create:
   * errors are thrown here, as the writer reports them), then creates and maps the ring of
   * `capacity` bytes (halved while the disk cannot hold it, down to MIN_POOL_BYTES).
   */
  static open(dir: string, header: unknown, memory: NativeMemory, capacity: number): CapturePool {
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const { port1, port2 } = new MessageChannel();
    const thread = new Worker(engineScriptPath('capture-writer'), { workerData: { control, port: port2 }, transferList: [port2] });
    thread.unref();
    port1.unref();
    const pool = new CapturePool(memory, join(dir, POOL_FILE_NAME), port1, thread, control);
    try {
      pool.request({ op: 'begin', dir, header });
    } catch (error) {
      pool.ended = true;
      void thread.terminate();
      throw error;
    }
    try {
      pool.createRing(Math.max(MIN_POOL_BYTES, Math.floor(capacity / 8) * 8));
    } catch (error) {
      pool.close();
      throw error;
    }
    return pool;
  }

  /** Bytes the ring holds now. */
  get size(): number {
    return this.capacity;
  }

  beginPass(index: number, kind: 'prefill' | 'decode'): void {
    this.payload.writeUInt32LE(index, 0);
    this.payload.writeUInt32LE(kind === 'prefill' ? 0 : 1, 4);
    this.control(ENTRY_KIND.BEGIN_PASS, 8);
  }

  /** The pass ended; `mode` is its output, null when it failed. */
  endPass(index: number, mode: string | null): void {
    this.payload.writeUInt32LE(index, 0);
    const modeBytes = mode === null ? 0 : Buffer.byteLength(mode, 'utf8');
    if (4 + modeBytes > this.payload.length) throw new CapturePoolError(`output mode of ${modeBytes} bytes is too long`);
    if (mode !== null) this.payload.write(mode, 4, 'utf8');
    this.control(ENTRY_KIND.END_PASS, 4 + modeBytes);
    this.wake(); // the writer seals the pass now
  }

  /**
   * Puts one frame in the ring: `header[0, headerBytes)` (FrameEncoder.header: checksum 0),
   * then `dataBytes` of data copied from the engine's `source` address, or from `gathered`
   * (a strided record gathered into row-major order). Waits for room when the ring is full.
   */
  record(header: Uint8Array, headerBytes: number, source: bigint | null, gathered: Uint8Array | null, dataBytes: number): void {
    const payloadBytes = headerBytes + dataBytes;
    const at = this.reserve(ENTRY_KIND.FRAME, payloadBytes);
    this.memory.store(at + ENTRY_HEADER_BYTES, header, headerBytes);
    const dataAt = at + ENTRY_HEADER_BYTES + headerBytes;
    if (gathered !== null) this.memory.store(dataAt, gathered, dataBytes);
    else if (dataBytes > 0) {
      if (source === null) throw new Error(`ti_record.data is NULL (${dataBytes} bytes)`); // the engine's fault: not a capture failure
      this.memory.storeFrom(dataAt, source, dataBytes);
    }
    this.commit(at, payloadBytes);
  }

  /** Waits until the writer has applied every entry put in so far (a pass ended: sealed); throws its failure. */
  waitApplied(): void {
    this.waitForRoom(this.capacity, true);
  }

  /** Throws the writer's failure, if it failed (a disk full, a file it could not write). */
  throwIfFailed(): void {
    if (this.failure === null && Atomics.load(this.signals, SIGNAL.FAILED) === 1) this.readMessages();
    if (this.failure !== null) throw new CapturePoolError(this.failure);
  }

  /**
   * Waits until the writer has applied every entry, removes the ring (nothing in it is needed
   * any more), and has the writer write manifest.json; returns its path. The thread ends.
   */
  finish(run: RunOutcome): string {
    this.waitForRoom(this.capacity, true);
    this.removeRing();
    const reply = this.request({ op: 'finish', run });
    this.ended = true;
    if (reply === null) throw new CapturePoolError('the capture writer returned no manifest');
    return reply;
  }

  /**
   * Stops without sealing: the writer closes its files, and the ring stays on disk with the
   * entries it had not applied, for `recover`. Idempotent.
   */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.request({ op: 'close' });
    } catch {
      // The writer failed before: its files are as it left them, which is what recover reads.
    }
    this.unmapRing();
  }

  // ---- the ring ---------------------------------------------------------------------------

  private createRing(capacity: number): void {
    // The ring takes disk space: at most a quarter of what is free where the capture goes.
    let size = capacity;
    try {
      const free = statfsSync(dirname(this.path));
      size = Math.max(MIN_POOL_BYTES, Math.min(size, Math.floor((free.bavail * free.bsize) / 32) * 8));
    } catch {
      // no statfs here: the ENOSPC fallback below still applies
    }
    this.fd = openSync(this.path, 'wx+');
    for (;;) {
      try {
        this.memory.extend(this.fd, POOL_HEADER_BYTES + size);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC' || size <= MIN_POOL_BYTES)
          throw new CapturePoolError(`${this.path}: ${(error as Error).message}`);
        size = Math.max(MIN_POOL_BYTES, Math.floor(size / 16) * 8); // half, a multiple of 8
      }
    }
    this.mapRing(size);
  }

  /** Maps the ring file with `capacity` bytes of ring (the file is at least that long) from the current head. */
  private mapRing(capacity: number): void {
    const fd = this.fd;
    if (fd === null) throw new CapturePoolError('the capture pool is closed');
    const address = this.memory.map(fd, POOL_HEADER_BYTES + capacity);
    if (this.address !== 0) this.memory.unmap(this.address, POOL_HEADER_BYTES + this.capacity);
    // Every page stored once now, outside any pass: a record then copies into pages that are
    // in memory and writable, without a page fault (the first store to a page of a new file
    // mapping costs more than copying the page).
    this.memory.zero(address + POOL_HEADER_BYTES, capacity);
    this.address = address;
    this.capacity = capacity;
    this.base = this.head;
    const header = encodePoolHeader(capacity);
    header.writeUInt32LE(0, POOL_TAIL_OFFSET);
    header.writeUInt32LE(this.seq, POOL_TAIL_OFFSET + 4);
    this.memory.store(address, header, POOL_HEADER_BYTES);
    Atomics.store(this.positions, POSITION.ADDRESS, BigInt(address));
    Atomics.store(this.positions, POSITION.CAPACITY, BigInt(capacity));
    Atomics.store(this.positions, POSITION.BASE, BigInt(this.base));
  }

  private unmapRing(): void {
    if (this.address !== 0) this.memory.unmap(this.address, POOL_HEADER_BYTES + this.capacity);
    this.address = 0;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private removeRing(): void {
    this.unmapRing();
    unlinkSync(this.path);
  }

  /** Writes a pass entry whose payload is `payload[0, bytes)`. */
  private control(kind: EntryKind, bytes: number): void {
    const at = this.reserve(kind, bytes);
    this.memory.store(at + ENTRY_HEADER_BYTES, this.payload, bytes);
    this.commit(at, bytes);
  }

  /**
   * Makes room for an entry of `payloadBytes` (growing the ring when it could never hold it,
   * wrapping when it does not fit before the end, waiting for the writer when the ring is full),
   * stores its header without magic, and returns its address.
   */
  private reserve(kind: EntryKind, payloadBytes: number): number {
    const offset = this.makeRoom(entryBytes(payloadBytes));
    const at = this.address + POOL_HEADER_BYTES + offset;
    this.storeEntryHeader(at, kind, payloadBytes);
    return at;
  }

  /**
   * Makes room for an entry of `length` bytes at the head: grows the ring when it could never
   * hold it, wraps when it does not fit before the end, waits for the writer when the ring is
   * full. Returns the head's ring offset, where the entry goes. Throws the writer's failure.
   */
  makeRoom(length: number): number {
    this.throwIfFailed();
    if (length > MAX_ENTRY_BYTES)
      throw new CapturePoolError(
        `a record of ${length - ENTRY_HEADER_BYTES} bytes (frame header and data) is larger than the capture pool holds (${MAX_ENTRY_BYTES - ENTRY_HEADER_BYTES} bytes, 32-bit lengths); capture it with TRACE_INSPECTOR_SPILL=write`,
      );
    if (length > this.capacity) this.grow(length);
    let offset = (this.head - this.base) % this.capacity;
    if (mustWrap(offset, length, this.capacity)) {
      const rest = this.capacity - offset;
      this.waitForRoom(rest, false);
      if (!implicitWrap(offset, this.capacity)) {
        const at = this.address + POOL_HEADER_BYTES + offset;
        this.storeEntryHeader(at, ENTRY_KIND.WRAP, 0);
        this.memory.store(at, this.magic, 4);
        this.seq += 1;
      }
      this.head += rest;
      this.publish();
      offset = 0;
    }
    this.waitForRoom(length, false);
    return offset;
  }

  // ---- the C recorder as the producer while a pass runs (native-recorder.ts) ------------------

  /** The control block's Int32 view (its address is handed to the C recorder). */
  get controlBlock(): Int32Array {
    return this.signals;
  }

  /** Where the producer is: the C recorder goes on from here. */
  producerState(): RingState {
    return {
      ring: this.address + POOL_HEADER_BYTES,
      capacity: this.capacity,
      base: this.base,
      head: this.head,
      seq: this.seq,
      woken: this.woken,
      wakeBytes: Math.min(WAKE_BYTES, this.capacity / 4),
    };
  }

  /** The C recorder put entries in (and published them): its position becomes the pool's. */
  adoptProducer(position: { head: number; seq: number; woken: number }): void {
    this.head = position.head;
    this.seq = position.seq;
    this.woken = position.woken;
  }

  /**
   * The C recorder wrote the pass's END_PASS entry and published it (native-recorder.ts
   * putEndPass): the pool goes on from its position, and the writer is woken to seal the pass now,
   * as endPass does (the recorder cannot wake a thread blocked in Atomics.wait).
   */
  endPassWritten(position: { head: number; seq: number; woken: number }): void {
    this.adoptProducer(position);
    this.wake();
  }

  /** Wakes the writer now (the C recorder published enough since the last wake). */
  wakeWriter(): void {
    this.wake();
  }

  /** The entry at `at` is in place: its magic, then the head moves past it. */
  private commit(at: number, payloadBytes: number): void {
    this.memory.store(at, this.magic, 4);
    this.seq += 1;
    this.head += entryBytes(payloadBytes);
    this.publish();
  }

  /** The entry header with magic 0: stored first, so a half-written entry is never taken for whole (it may lie over an old one). */
  private storeEntryHeader(at: number, kind: EntryKind, payloadBytes: number): void {
    const words = this.entryWords;
    words[0] = 0;
    words[1] = kind;
    words[2] = this.seq;
    words[3] = payloadBytes;
    this.memory.store(at, this.entryHeader, ENTRY_HEADER_BYTES);
  }

  private publish(): void {
    Atomics.store(this.positions, POSITION.HEAD, BigInt(this.head));
    if (this.head - this.woken >= Math.min(WAKE_BYTES, this.capacity / 4)) this.wake();
  }

  private wake(): void {
    this.woken = this.head;
    Atomics.add(this.signals, SIGNAL.HEAD, 1);
    Atomics.notify(this.signals, SIGNAL.HEAD, 1);
  }

  /** Waits until `bytes` of the ring are free (`all`: until the writer has applied everything). */
  private waitForRoom(bytes: number, all: boolean): void {
    let waited = false;
    let started = 0;
    for (;;) {
      this.throwIfFailed();
      const seen = Atomics.load(this.signals, SIGNAL.TAIL);
      const tail = Number(Atomics.load(this.positions, POSITION.TAIL));
      if (all ? tail === this.head : this.capacity - (this.head - tail) >= bytes) break;
      if (!waited) {
        waited = true;
        started = performance.now();
        this.waits.count += 1;
        this.wake();
      }
      Atomics.wait(this.signals, SIGNAL.TAIL, seen, WAIT_SLICE_MS);
    }
    if (waited) this.waits.ms += performance.now() - started;
  }

  /** A ring too small for an entry of `length` bytes: once the writer has caught up, the ring is remapped larger. */
  private grow(length: number): void {
    this.waitForRoom(this.capacity, true);
    const capacity = Math.ceil(length / MIN_POOL_BYTES) * MIN_POOL_BYTES;
    const fd = this.fd;
    if (fd === null) throw new CapturePoolError('the capture pool is closed');
    try {
      this.memory.extend(fd, POOL_HEADER_BYTES + capacity);
    } catch (error) {
      throw new CapturePoolError(`${this.path}: ${(error as Error).message}`);
    }
    this.mapRing(capacity);
  }

  // ---- messages -----------------------------------------------------------------------------

  /** Posts a request to the writer and waits for its reply; a failure reply is thrown. */
  private request(request: WriterRequest): string | null {
    const seen = Atomics.load(this.signals, SIGNAL.REPLY);
    this.port.postMessage(request);
    Atomics.add(this.signals, SIGNAL.HEAD, 1);
    Atomics.notify(this.signals, SIGNAL.HEAD, 1);
    let last = seen;
    for (;;) {
      Atomics.wait(this.signals, SIGNAL.REPLY, last, WAIT_SLICE_MS);
      last = Atomics.load(this.signals, SIGNAL.REPLY);
      const reply = this.readMessages();
      if (reply !== undefined) {
        if (!reply.ok) throw new CapturePoolError(reply.message);
        return reply.manifestPath;
      }
      if (Atomics.load(this.signals, SIGNAL.DONE) === 1 && this.readMessages() === undefined) {
        throw new CapturePoolError(this.failure ?? 'the capture writer thread ended without answering');
      }
    }
  }

  /** Reads what the writer posted: failures are kept, the reply (if any) returned. */
  private readMessages(): { ok: true; manifestPath: string | null } | { ok: false; message: string } | undefined {
    let reply: { ok: true; manifestPath: string | null } | { ok: false; message: string } | undefined;
    for (;;) {
      const received = receiveMessageOnPort(this.port);
      if (received === undefined) return reply;
      const parsed = WriterMessageSchema.safeParse(received.message);
      if (!parsed.success) throw new CapturePoolError(`malformed message from the capture writer: ${parsed.error.message}`);
      const message = parsed.data;
      if (message.type === 'failed') this.failure ??= message.message;
      else reply = message.ok ? { ok: true, manifestPath: message.manifestPath } : { ok: false, message: message.message };
    }
  }
}

// The capture writer thread: the consumer of the capture pool (capture-pool.ts). It owns the
// capture's NativeBundleWriter and applies the ring's entries in order: BEGIN_PASS journals the
// pass and starts its spill, FRAME stamps the frame's crc32 and appends it to the spill (one
// write), END_PASS seals the pass (reads the spill back, hashes, writes pass-NNN.safetensors,
// journals the seal). After each entry it stores its tail in the ring's header (for recovery)
// and then frees the entry's room for the producer: an entry is only reused once it is applied.
//
// The thread never returns to its event loop while the capture runs: it waits on the control
// block with Atomics.wait and takes requests with receiveMessageOnPort. A failure (a disk full,
// a file it cannot write) stops it applying anything: it says so once ('failed', naming the file)
// and then only answers requests. Bundled by scripts/build.mjs into dist/capture-writer.js.
import { join } from 'node:path';
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { spillFileName, passFileName } from '../core/bundle/capture-journal.ts';
import {
  ENTRY_HEADER_BYTES,
  ENTRY_KIND,
  ENTRY_MAGIC,
  entryBytes,
  implicitWrap,
  POOL_FILE_NAME,
  POOL_HEADER_BYTES,
  POOL_TAIL_OFFSET,
} from '../core/bundle/capture-pool-layout.ts';
import { NativeBundleWriter } from '../core/bundle/native-bundle-writer.ts';
import { POSITION, SIGNAL, SIGNAL_SLOTS, WriterDataSchema, WriterRequestSchema, type WriterMessage, type WriterRequest } from './capture-pool-protocol.ts';
import { nativeMemory, type NativeMemory } from './native-memory.ts';

/** The producer wakes the writer only now and then (capture-pool.ts, WAKE_BYTES): between wakes it looks by itself this often. */
const WRITER_IDLE_MS = 20;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class CaptureWriterThread {
  private readonly signals: Int32Array;
  private readonly positions: BigInt64Array;
  private writer: NativeBundleWriter | null = null;
  private dir = '';
  private failed = false;
  private seq = 0;
  private pass = -1;
  private readonly entryHeader = Buffer.alloc(ENTRY_HEADER_BYTES);
  private readonly tail = new Uint32Array(2);
  private payload = Buffer.allocUnsafeSlow(64 * 1024);

  constructor(
    private readonly port: MessagePort,
    control: SharedArrayBuffer,
    private readonly memory: NativeMemory,
  ) {
    this.signals = new Int32Array(control, 0, SIGNAL_SLOTS);
    this.positions = new BigInt64Array(control);
  }

  run(): void {
    for (;;) {
      const seen = Atomics.load(this.signals, SIGNAL.HEAD);
      for (;;) {
        const received = receiveMessageOnPort(this.port);
        if (received === undefined) break;
        if (this.handle(received.message)) return;
      }
      this.applyRing();
      Atomics.wait(this.signals, SIGNAL.HEAD, seen, WRITER_IDLE_MS);
    }
  }

  /** Handles one request; true when the thread is done. */
  private handle(raw: unknown): boolean {
    const parsed = WriterRequestSchema.safeParse(raw);
    if (!parsed.success) {
      this.reply({ type: 'reply', ok: false, message: `malformed request to the capture writer: ${parsed.error.message}` });
      return false;
    }
    const request: WriterRequest = parsed.data;
    switch (request.op) {
      case 'begin':
        try {
          this.writer = NativeBundleWriter.create(request.dir, request.header);
          this.dir = request.dir;
          this.reply({ type: 'reply', ok: true, manifestPath: null });
        } catch (error) {
          this.reply({ type: 'reply', ok: false, message: errorMessage(error) });
        }
        return false;
      case 'finish': {
        this.applyRing();
        const writer = this.writer;
        if (this.failed || writer === null) {
          this.reply({ type: 'reply', ok: false, message: this.failed ? (this.failureText ?? 'the capture writer failed') : 'no capture is open' });
          return true;
        }
        try {
          this.reply({ type: 'reply', ok: true, manifestPath: writer.finish(request.run) });
        } catch (error) {
          writer.close();
          this.reply({ type: 'reply', ok: false, message: errorMessage(error) });
        }
        return true;
      }
      case 'close':
        this.writer?.close();
        this.reply({ type: 'reply', ok: true, manifestPath: null });
        return true;
    }
  }

  private failureText: string | null = null;

  private fail(message: string): void {
    this.failed = true;
    this.failureText = message;
    Atomics.store(this.signals, SIGNAL.FAILED, 1);
    this.reply({ type: 'failed', message });
    // The producer may be waiting for room: it wakes, sees the failure and stops the pass.
    Atomics.add(this.signals, SIGNAL.TAIL, 1);
    Atomics.notify(this.signals, SIGNAL.TAIL);
  }

  private reply(message: WriterMessage): void {
    this.port.postMessage(message);
    Atomics.add(this.signals, SIGNAL.REPLY, 1);
    Atomics.notify(this.signals, SIGNAL.REPLY);
  }

  /** Applies every published entry. */
  private applyRing(): void {
    const writer = this.writer;
    if (writer === null || this.failed) return;
    const head = Number(Atomics.load(this.positions, POSITION.HEAD));
    let tail = Number(Atomics.load(this.positions, POSITION.TAIL));
    if (tail >= head) return;
    const address = Number(Atomics.load(this.positions, POSITION.ADDRESS));
    const capacity = Number(Atomics.load(this.positions, POSITION.CAPACITY));
    const base = Number(Atomics.load(this.positions, POSITION.BASE));
    const ring = address + POOL_HEADER_BYTES;
    while (tail < head) {
      const offset = (tail - base) % capacity;
      let next: number;
      if (implicitWrap(offset, capacity)) {
        next = tail + capacity - offset;
      } else {
        this.memory.load(this.entryHeader, ring + offset, ENTRY_HEADER_BYTES);
        const magic = this.entryHeader.readUInt32LE(0);
        const kind = this.entryHeader.readUInt32LE(4);
        const seq = this.entryHeader.readUInt32LE(8);
        const payloadBytes = this.entryHeader.readUInt32LE(12);
        if (magic !== ENTRY_MAGIC || seq !== this.seq) {
          this.fail(
            `${join(this.dir, POOL_FILE_NAME)}: the entry at ring offset ${offset} is not entry ${this.seq} although it was published (the pool was changed behind the writer)`,
          );
          return;
        }
        this.seq += 1;
        if (kind === ENTRY_KIND.WRAP) {
          next = tail + capacity - offset;
        } else {
          if (this.payload.length < payloadBytes) this.payload = Buffer.allocUnsafeSlow(Math.max(payloadBytes, this.payload.length * 2));
          this.memory.load(this.payload, ring + offset + ENTRY_HEADER_BYTES, payloadBytes);
          if (!this.apply(writer, kind, payloadBytes)) return;
          next = tail + entryBytes(payloadBytes);
        }
      }
      tail = next;
      // The tail goes to the ring's header first (recovery starts there), then the room is freed.
      this.tail[0] = (tail - base) % capacity;
      this.tail[1] = this.seq;
      this.memory.store(address + POOL_TAIL_OFFSET, new Uint8Array(this.tail.buffer), 8);
      Atomics.store(this.positions, POSITION.TAIL, BigInt(tail));
      Atomics.add(this.signals, SIGNAL.TAIL, 1);
      Atomics.notify(this.signals, SIGNAL.TAIL);
    }
  }

  /** Applies one entry whose payload is `this.payload[0, bytes)`; false when it failed. */
  private apply(writer: NativeBundleWriter, kind: number, bytes: number): boolean {
    const payload = this.payload;
    let file = join(this.dir, POOL_FILE_NAME);
    try {
      switch (kind) {
        case ENTRY_KIND.BEGIN_PASS: {
          const index = payload.readUInt32LE(0);
          file = join(this.dir, spillFileName(index));
          writer.beginPass(index, payload.readUInt32LE(4) === 0 ? 'prefill' : 'decode');
          this.pass = index;
          return true;
        }
        case ENTRY_KIND.FRAME:
          file = join(this.dir, spillFileName(this.pass));
          writer.appendFrame(payload, bytes);
          return true;
        case ENTRY_KIND.END_PASS: {
          const index = payload.readUInt32LE(0);
          file = join(this.dir, passFileName(index));
          writer.endPass(bytes > 4 ? payload.toString('utf8', 4, bytes) : null);
          return true;
        }
        default:
          this.fail(`${file}: unknown entry kind ${kind}`);
          return false;
      }
    } catch (error) {
      const message = errorMessage(error);
      // A message naming a file of the capture already says where (a record's own pass file).
      this.fail(message.includes(this.dir) ? message : `${file}: ${message}`);
      return false;
    }
  }
}

function main(): void {
  const data = WriterDataSchema.parse(workerData);
  const signals = new Int32Array(data.control, 0, SIGNAL_SLOTS);
  try {
    const memory = nativeMemory();
    if (memory === null) throw new Error('the capture writer needs shared mappings, which this platform does not offer');
    new CaptureWriterThread(data.port, data.control, memory).run();
  } catch (error) {
    // Never leave the producer waiting: whatever went wrong ends the capture, named.
    data.port.postMessage({ type: 'failed', message: `the capture writer stopped: ${errorMessage(error)}` } satisfies WriterMessage);
    Atomics.store(signals, SIGNAL.FAILED, 1);
  } finally {
    Atomics.store(signals, SIGNAL.DONE, 1);
    for (const slot of [SIGNAL.TAIL, SIGNAL.REPLY]) {
      Atomics.add(signals, slot, 1);
      Atomics.notify(signals, slot);
    }
  }
}

main();

// The engine worker: a worker_threads Worker that loads an engine library with koffi and drives
// one session on request. During a pass the engine calls the record callback on this thread,
// once per boundary. That callback is the host's C recorder (native-recorder.ts,
// engine/host-recorder/ti_recorder.c) behind the record guard: it checks the record, leaves the
// crash crumb and, when capturing, copies the record ONCE, straight from the engine into the next
// entry of the capture pool (capture-pool.ts; gathered into row-major first when the engine's
// strides are not), without entering JavaScript; it also writes the pass's BEGIN_PASS and
// END_PASS entries into the pool as it opens the pass and after it (one call each). The pass's
// counters are read from it once per pass, and its log of the records taken goes to the caller
// as it is (record-log.ts: the caller builds the announcements for its live progress), in the
// pass's reply, and in a 'recordLog' message whenever the recorder wakes the writer. A record
// that breaks a check is handed to the JavaScript callback here (takeForwarded), which
// runs the same checks and stops the pass with the same message. Checksums, spills, hashing,
// sealing and the journal are the capture writer thread's (capture-writer-thread.ts); when the
// pool is full the recorder asks this thread to wait for it (back-pressure: memory stays bounded
// by the pool).
//
// Where the C recorder cannot serve — it was not built, TRACE_INSPECTOR_RECORDER=js, a crumb
// rewritten with write(), or a capture without shared mappings — the JavaScript callback takes
// every record itself (takeRecord): one read of the ti_record (four small memcpy calls), one
// 16-byte store of the crumb, and four stores into the pool (entry header, frame header, data,
// magic). Where the C library has no shared mappings (native-memory.ts), or with
// TRACE_INSPECTOR_SPILL=write, the capture is written on this thread instead: each record is
// framed, checksummed and appended to the pass's spill with one write(), and the pass is sealed
// at its end.
//
// Bundled by scripts/build.mjs into dist/engine-worker.js; started by engine-host.ts ('thread'
// isolation) or by engine-host-process.ts ('process' isolation).
import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { DTYPE_SIZE, dtypeFromAbi, abiFromDtype, type DType } from '../core/bundle/dtype.ts';
import type { RunOutcome } from '../core/bundle/manifest-schema.ts';
import { FrameEncoder, FrameFieldError, MAX_FRAME_STRING_BYTES } from '../core/bundle/capture-frame.ts';
import { passFileName } from '../core/bundle/capture-journal.ts';
import { checkCaptureRecord, frameFieldError } from '../core/bundle/capture-record-check.ts';
import { NativeBundleWriter } from '../core/bundle/native-bundle-writer.ts';
import { gatherStrided } from '../core/bundle/tensor-view.ts';
import {
  createRecordGuard,
  loadEngineLibrary,
  RecordReader,
  registerRecordCallback,
  TI_STATUS,
  type LoadedEngine,
  type Pointer,
  type RawRecord,
  type RecordGuard,
  type RegisteredRecordCallback,
  type SessionHandle,
} from './abi-binding.ts';
import { CapturePool, CapturePoolError, DEFAULT_POOL_BYTES } from './capture-pool.ts';
import { EngineCallError, EngineHostError, EngineLoadError } from './engine-errors.ts';
import { nativeMemory, type NativeMemory } from './native-memory.ts';
import { NativeRecorder, SERVICE, sharedAddress, type TakenPass } from './native-recorder.ts';
import { METADATA_KEY } from '../core/bundle/safetensors-header.ts';
import { threadCpuMs } from './thread-cpu-time.ts';
import {
  ANNOUNCE_BATCH,
  ANNOUNCE_INTERVAL_MS,
  CRUMB_BYTES,
  CRUMB_SLOTS,
  outputModeOf,
  SessionStateSchema,
  WorkerDataSchema,
  WorkerRequestSchema,
  type JsonValue,
  type LoadReply,
  type CrumbTarget,
  type PassKind,
  type RecordsMessage,
  type ReplyError,
  type SessionState,
  type TensorMessage,
  type WorkerMessage,
  type WorkerPassResult,
  type WorkerRequest,
} from './engine-protocol.ts';

type Send = (message: WorkerMessage) => void;
/** Sends a message already serialized as JSON (one WorkerMessage). */
type SendJson = (json: string) => void;

/** Writes one JSON line to a file descriptor, all of it, before returning. */
function lineWriter(fd: number): SendJson {
  return (json) => {
    const bytes = Buffer.from(`${json}\n`, 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  };
}

/** The pass being run: what the callback fills in. */
interface ActivePass {
  readonly index: number;
  /** Which record callback takes its records: the C recorder, or the JavaScript one. */
  recorder: 'c' | 'js';
  readonly kind: PassKind;
  readonly abiKind: number;
  recordCount: number;
  bytes: number;
  lastBoundary: string | null;
  /** Why the host stopped the pass (the callback returned nonzero), if it did. */
  failure: string | null;
  /** The capture pool's failure that stopped it (the capture cannot go on: reported as the host's error, not the engine's). */
  poolFailure: CapturePoolError | null;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The crumb: [pass, boundary index, records of the pass, sequence] of the last record announced,
 * stored before the record is copied. A 16-byte file ('process' isolation: the kernel keeps it
 * when the engine kills the process), stored through a shared mapping of it where the C library
 * allows, else rewritten in place; or shared memory ('thread').
 */
class Crumb {
  private readonly slots: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly fd: number | null;
  private readonly mapped: { memory: NativeMemory; address: number } | null;
  private readonly shared: boolean;
  private sequence = 0;

  constructor(target: CrumbTarget, memory: NativeMemory | null) {
    if ('path' in target) {
      this.shared = false;
      this.fd = openSync(target.path, 'r+');
      this.slots = new Int32Array(CRUMB_BYTES / 4);
      this.bytes = new Uint8Array(this.slots.buffer);
      let mapped: Crumb['mapped'] = null;
      if (memory !== null) {
        try {
          mapped = { memory, address: memory.map(this.fd, CRUMB_BYTES) };
        } catch {
          mapped = null; // keep the write() path
        }
      }
      this.mapped = mapped;
    } else {
      this.shared = true;
      this.fd = null;
      this.mapped = null;
      this.slots = new Int32Array(target.shared, 0, CRUMB_BYTES / 4);
      this.bytes = new Uint8Array(target.shared, 0, CRUMB_BYTES);
    }
  }

  /** The crumb's address for the C recorder, or null where it is rewritten with write(). */
  address(): number | null {
    if (this.mapped !== null) return this.mapped.address;
    return this.shared ? sharedAddress(this.slots) : null;
  }

  mark(pass: number, boundary: number, count: number): void {
    const slots = this.slots;
    this.sequence += 1;
    if (this.shared) {
      Atomics.store(slots, CRUMB_SLOTS.pass, pass);
      Atomics.store(slots, CRUMB_SLOTS.boundary, boundary);
      Atomics.store(slots, CRUMB_SLOTS.count, count);
      Atomics.store(slots, CRUMB_SLOTS.sequence, this.sequence);
      return;
    }
    slots[CRUMB_SLOTS.pass] = pass;
    slots[CRUMB_SLOTS.boundary] = boundary;
    slots[CRUMB_SLOTS.count] = count;
    slots[CRUMB_SLOTS.sequence] = this.sequence;
    if (this.mapped !== null) this.mapped.memory.store(this.mapped.address, this.bytes, CRUMB_BYTES);
    else writeSync(this.fd as number, this.bytes, 0, CRUMB_BYTES, 0);
  }
}

/** The capture pool's size: TRACE_INSPECTOR_CAPTURE_POOL_BYTES when set (a positive integer), else what the caller asked for, else the default. */
const PoolBytesSchema = z.coerce.number().int().positive();
function poolBytes(requested: number | undefined): number {
  const given = process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'];
  if (given === undefined || given === '') return requested ?? DEFAULT_POOL_BYTES;
  const parsed = PoolBytesSchema.safeParse(given);
  if (!parsed.success) throw new EngineHostError(`TRACE_INSPECTOR_CAPTURE_POOL_BYTES=${given}: expected a positive number of bytes`);
  return parsed.data;
}

/**
 * Where a capture's records go: the capture pool (the writer thread does the rest), or, without
 * shared mappings, a NativeBundleWriter on this thread.
 */
type CaptureTarget =
  | { readonly kind: 'direct'; readonly writer: NativeBundleWriter }
  | {
      readonly kind: 'pooled';
      readonly pool: CapturePool;
      readonly dir: string;
      readonly encoder: FrameEncoder;
      /** runPass replies before the writer has sealed the pass. */
      readonly sealBehind: boolean;
      pass: PooledPass | null;
      /** Time the last pass's runPass waited for its seal. */
      sealWaitMs: number;
      /** How many of the last pass's BEGIN_PASS and END_PASS entries the C recorder wrote. */
      entriesByRecorder: number;
    };

/** What the engine thread keeps of the pass being captured through the pool (for the record checks). */
interface PooledPass {
  readonly index: number;
  readonly names: Set<string>;
  records: number;
  /** The pass file a record's error names. */
  readonly file: string;
  /**
   * The C recorder wrote the pass's BEGIN_PASS entry as it opened the pass, and holds the ring: it
   * writes END_PASS too (one call each, no pool stores from this thread between).
   */
  byRecorder: boolean;
}

/** The native memory calls this worker may use (null: write() everywhere). */
function workerMemory(): NativeMemory | null {
  return process.env['TRACE_INSPECTOR_SPILL'] === 'write' ? null : nativeMemory();
}

type Announcement = RecordsMessage['records'][number];

/**
 * Batches record announcements for the caller's live progress (onRecord). Each announcement
 * arrives as its JSON text, which the caller keeps per boundary and reuses while the record's
 * dtype and shape do not change (serializing 64 of them afresh costs ~18 us, a fifth of what a
 * small pass spends per record), and the batch goes as one JSON message (a 'records'
 * WorkerMessage, validated by the caller like any other).
 */
class Announcer {
  private pass = -1;
  private pending: string[] = [];
  private oldest = 0;

  constructor(private readonly sendJson: SendJson) {}

  add(pass: number, announcementJson: string): void {
    if (pass !== this.pass) {
      this.flush();
      this.pass = pass;
    }
    if (this.pending.length === 0) this.oldest = performance.now();
    this.pending.push(announcementJson);
    if (this.pending.length >= ANNOUNCE_BATCH || performance.now() - this.oldest >= ANNOUNCE_INTERVAL_MS) this.flush();
  }

  /** The C recorder's log of records (base64), after the announcements pending before it. */
  sendLog(pass: number, log: string): void {
    this.flush();
    this.pass = pass;
    this.sendJson(`{"type":"recordLog","pass":${pass},"log":"${log}"}`);
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const records = this.pending;
    this.pending = [];
    this.sendJson(`{"type":"records","pass":${this.pass},"records":[${records.join(',')}]}`);
  }
}

/** The JSON of an announcement, kept per boundary: rebuilt when the record's dtype or shape changes. */
interface AnnouncedRecord {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly byteLength: number;
  readonly json: string;
}

function announcementOf(entry: CatalogueEntry, name: string, dtype: DType, shape: readonly number[], byteLength: number): string {
  const last = entry.announced;
  if (last !== null && last.dtype === dtype && last.byteLength === byteLength && last.shape.length === shape.length) {
    let same = true;
    for (let axis = 0; same && axis < shape.length; axis++) same = last.shape[axis] === shape[axis];
    if (same) return last.json;
  }
  const announcement: Announcement = { name, dtype, shape: [...shape], byteLength };
  const json = JSON.stringify(announcement);
  entry.announced = { dtype, shape: announcement.shape, byteLength, json };
  return json;
}

/** Names and stages are stored as UTF-8, which cannot hold an unpaired surrogate. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Whether the C recorder looks a boundary up by name: not when a frame could not hold its name
 * or stage (the capture checks refuse them), so its records reach the JavaScript checks, which
 * name the field.
 */
function lookedUpInC(entry: CatalogueEntry): boolean {
  const { name, stage } = entry;
  return (
    name.length > 0 &&
    stage.length > 0 &&
    name !== METADATA_KEY &&
    !LONE_SURROGATE.test(name) &&
    !LONE_SURROGATE.test(stage) &&
    Buffer.byteLength(name, 'utf8') <= MAX_FRAME_STRING_BYTES &&
    Buffer.byteLength(stage, 'utf8') <= MAX_FRAME_STRING_BYTES
  );
}

/** A record that passed the checks of takeRecord, as the rest of it uses it. */
interface CheckedRecord {
  readonly name: string;
  readonly entry: CatalogueEntry;
  readonly dtype: DType;
  readonly shape: number[];
  readonly strides: number[];
  readonly rowMajor: boolean;
  readonly spanBytes: number;
  readonly byteLength: number;
}

/** What the worker knows of one catalogue boundary. */
interface CatalogueEntry {
  readonly index: number;
  readonly name: string;
  readonly stage: string;
  announced: AnnouncedRecord | null;
}

class EngineWorker {
  private engine: LoadedEngine | null = null;
  private session: SessionHandle | null = null;
  private callback: RegisteredRecordCallback | null = null;
  private guard: RecordGuard | null = null;
  private recording = true;
  private capture: CaptureTarget | null = null;
  /**
   * Records of passes before `from` are left out of the capture, but for the boundaries in `keep`:
   * a pass-sharded gate runs the engine from pass 0 (decode state needs the earlier passes) and
   * captures only its own passes. They are still checked and announced; nothing of them is copied.
   */
  private recordWindow: { readonly from: number; readonly keep: ReadonlySet<string> } | null = null;
  /** Engine-thread time in the record callback during the pass being run (capture statistics). */
  private callbackMs = 0;
  private readonly catalogue = new Map<string, CatalogueEntry>();
  /** The catalogue in order (the C recorder names boundaries by index). */
  private readonly boundaries: CatalogueEntry[] = [];
  /** The record callback in C (native-recorder.ts), null where it is not built or TRACE_INSPECTOR_RECORDER=js. */
  private native: NativeRecorder | null = null;
  /** Whether the pass being run takes its records through the C recorder (the JavaScript callback then sees only those it hands over). */
  private nativePass = false;
  /** The record window whose kept boundaries the C recorder holds. */
  private nativeWindow: EngineWorker['recordWindow'] = null;
  private crumb: Crumb | null = null;
  private memory: NativeMemory | null = null;
  private readonly announcer: Announcer;
  private nextIndex = 0;
  private active: ActivePass | null = null;
  private reader: RecordReader | null = null;

  constructor(
    sendJson: SendJson,
    /** Whether the pass's reply goes by postMessage ('thread'), which carries the record log's bytes as they are; else it is base64 in a JSON line. */
    private readonly logAsBytes: boolean,
  ) {
    this.announcer = new Announcer(sendJson);
  }

  handle(request: WorkerRequest): unknown {
    switch (request.op) {
      case 'load':
        return this.load(request.library, request.crumb);
      case 'open':
        return this.open(request.config, request.weightsPath);
      case 'setInput':
        return this.setTensor('ti_set_input', request.name, request.tensor);
      case 'setOption': {
        const session = this.requireSession('setOption');
        this.check('ti_set_option', this.abi().setOption(session, request.key, request.value));
        return null;
      }
      case 'setWanted': {
        const session = this.requireSession('setWanted');
        this.check('ti_set_wanted', this.abi().setWanted(session, request.names ?? []));
        return null;
      }
      case 'setRecording':
        return this.setRecording(request.enabled);
      case 'inject':
        return this.setTensor('ti_inject', request.boundary, request.tensor);
      case 'beginCapture':
        return this.beginCapture(
          request.dir,
          request.header,
          request.sealBehind ?? false,
          request.recordFrom ?? 0,
          request.keepBefore ?? [],
          request.poolBytes,
        );
      case 'runPass':
        return this.runPass(request.kind);
      case 'reset': {
        const session = this.requireSession('reset');
        this.check('ti_reset', this.abi().reset(session));
        this.nextIndex = 0;
        return null;
      }
      case 'state':
        return this.state(this.requireSession('state'));
      case 'finishCapture':
        return this.finishCapture(request.run);
      case 'close':
        return this.close();
    }
  }

  private load(library: string, crumb: CrumbTarget): LoadReply {
    if (this.engine) throw new EngineHostError(`this worker already loaded ${this.engine.library}`);
    this.memory = workerMemory();
    this.crumb = new Crumb(crumb, this.memory);
    const engine = loadEngineLibrary(library);
    this.engine = engine;
    engine.description.boundaries.forEach((boundary, index) => {
      const entry: CatalogueEntry = { index, name: boundary.name, stage: boundary.stage, announced: null };
      this.catalogue.set(boundary.name, entry);
      this.boundaries.push(entry);
    });
    return {
      library,
      abiVersion: engine.abiVersion,
      librarySha256: engine.librarySha256,
      description: engine.description,
    };
  }

  private abi() {
    if (!this.engine) throw new EngineHostError('no engine loaded');
    return this.engine.abi;
  }

  private requireSession(what: string): SessionHandle {
    if (this.session === null) throw new EngineHostError(`${what}: no session is open (call open first)`);
    return this.session;
  }

  /** Turns a ti_status into an EngineCallError carrying the engine's message. */
  private check(call: string, status: number): void {
    if (status === TI_STATUS.TI_OK) return;
    const abi = this.abi();
    const message = this.session === null ? '' : abi.lastError(this.session);
    throw new EngineCallError(call, abi.statusString(status), message);
  }

  private open(config: JsonValue, weightsPath: string | null): null {
    if (this.session !== null) throw new EngineHostError('a session is already open in this host');
    const abi = this.abi();
    const configJson = config === null ? null : JSON.stringify(config);
    const opened = abi.open(configJson, weightsPath);
    if (opened.status !== TI_STATUS.TI_OK || opened.session === null) {
      const code = opened.status === TI_STATUS.TI_OK ? 'TI_ERR_INTERNAL' : abi.statusString(opened.status);
      throw new EngineCallError('ti_open', code, opened.message || (opened.status === TI_STATUS.TI_OK ? 'returned TI_OK without a session' : ''));
    }
    this.session = opened.session;
    this.nextIndex = 0;
    this.setRecording(this.recording);
    return null;
  }

  private setTensor(call: 'ti_set_input' | 'ti_inject', name: string, tensor: TensorMessage): null {
    const session = this.requireSession(call === 'ti_set_input' ? 'setInput' : 'inject');
    const shape = BigInt64Array.from(tensor.shape, (extent) => BigInt(extent));
    const dtype = abiFromDtype(tensor.dtype);
    const abi = this.abi();
    const status = call === 'ti_set_input' ? abi.setInput(session, name, dtype, shape, tensor.data) : abi.inject(session, name, dtype, shape, tensor.data);
    this.check(call, status);
    return null;
  }

  /** Registers (or clears) the record callback; without it the engine records nothing. */
  private setRecording(enabled: boolean): null {
    this.recording = enabled;
    if (this.session === null) return null;
    if (enabled && this.callback === null) {
      this.reader ??= new RecordReader();
      this.callback = registerRecordCallback((user, address) => this.onRecord(user, address));
      // The engine gets the guard's callback, which forwards only from this thread (abi-binding.ts).
      this.guard = createRecordGuard(this.callback.pointer);
      if (process.env['TRACE_INSPECTOR_RECORDER'] !== 'js') {
        this.native = NativeRecorder.create(
          this.boundaries.map((entry) => ({ name: entry.name, stage: entry.stage, lookup: lookedUpInC(entry) })),
          this.callback.pointer,
          (op, bytes) => this.service(op, bytes),
        );
      }
    }
    const guard = enabled ? this.guard : null;
    this.check('ti_set_record_callback', this.abi().setRecordCallback(this.session, guard?.fn ?? null, guard?.user ?? null));
    return null;
  }

  private beginCapture(
    dir: string,
    header: unknown,
    sealBehind: boolean,
    recordFrom: number,
    keepBefore: readonly string[],
    requestedPoolBytes: number | undefined,
  ): null {
    if (this.capture) throw new EngineHostError(`a capture is already open (finishCapture it first)`);
    this.recordWindow = recordFrom > 0 ? { from: recordFrom, keep: new Set(keepBefore) } : null;
    const memory = this.memory;
    this.capture =
      memory === null
        ? { kind: 'direct', writer: NativeBundleWriter.create(dir, header) }
        : {
            kind: 'pooled',
            pool: CapturePool.open(dir, header, memory, poolBytes(requestedPoolBytes)),
            dir,
            encoder: new FrameEncoder(),
            sealBehind,
            pass: null,
            sealWaitMs: 0,
            entriesByRecorder: 0,
          };
    return null;
  }

  private finishCapture(run: RunOutcome): { manifestPath: string } {
    const capture = this.capture;
    if (!capture) throw new EngineHostError('finishCapture: no capture is open (call beginCapture first)');
    this.capture = null;
    this.recordWindow = null;
    if (capture.kind === 'direct') return { manifestPath: capture.writer.finish(run) };
    try {
      return { manifestPath: capture.pool.finish(run) };
    } catch (error) {
      capture.pool.close(); // the writer thread stops; what it wrote stays for recover
      throw error;
    }
  }

  /**
   * Opens the pass in the capture (if any) and routes its records (routeRecords). Through the
   * pool, the C recorder writes the pass's BEGIN_PASS entry as it opens the pass, where it takes
   * the records; else, or when the entry did not fit now (the ring full, a wrap), the pool writes
   * it here, waiting for room as it does for a record.
   */
  private beginCapturedPass(pass: ActivePass): void {
    const { index, kind } = pass;
    const capture = this.capture;
    if (capture?.kind !== 'pooled') {
      if (capture?.kind === 'direct') capture.writer.beginPass(index, kind);
      this.routeRecords(pass, null);
      return;
    }
    capture.pool.throwIfFailed();
    const pooled: PooledPass = { index, names: new Set(), records: 0, file: join(capture.dir, passFileName(index)), byRecorder: false };
    capture.pass = pooled;
    pooled.byRecorder = this.routeRecords(pass, capture);
    capture.entriesByRecorder = pooled.byRecorder ? 1 : 0;
    if (pooled.byRecorder) return;
    capture.pool.beginPass(index, kind);
    // The recorder opened the pass from the pool's position before that entry: it goes on after it.
    if (this.nativePass) this.native?.setRing(capture.pool.producerState());
  }

  /**
   * The pass ended (`mode` null: it failed). Through the pool, the writer seals it; unless the
   * capture seals behind, this waits until it has (a writer failure is thrown here).
   */
  private endCapturedPass(mode: string | null): void {
    const capture = this.capture;
    if (capture === null) return;
    if (capture.kind === 'direct') return capture.writer.endPass(mode);
    const pass = capture.pass;
    capture.pass = null;
    capture.sealWaitMs = 0;
    capture.pool.throwIfFailed();
    if (pass !== null && pass.byRecorder && this.endPassByRecorder(capture.pool, pass.index, mode)) capture.entriesByRecorder += 1;
    else if (pass !== null) capture.pool.endPass(pass.index, mode);
    if (!capture.sealBehind) {
      const started = performance.now();
      capture.pool.waitApplied();
      capture.sealWaitMs = performance.now() - started;
    }
  }

  /**
   * The C recorder writes the pass's END_PASS entry (one call) and the pool wakes the writer to
   * seal it; false when it did not (no room now, a wrap, a failed writer, a mode too long): the
   * pool writes it, waits or names the problem.
   */
  private endPassByRecorder(pool: CapturePool, index: number, mode: string | null): boolean {
    const native = this.native;
    if (native === null) return false;
    const position = native.putEndPass(index, mode === null ? null : this.modeBytes(mode), pool.producerState());
    if (position === null) return false;
    pool.endPassWritten(position);
    return true;
  }

  /** Output modes as UTF-8, kept (an engine reports a few, one per pass). */
  private readonly modes = new Map<string, Buffer>();
  private modeBytes(mode: string): Buffer {
    let bytes = this.modes.get(mode);
    if (bytes === undefined) {
      if (this.modes.size >= 64) this.modes.clear();
      bytes = Buffer.from(mode, 'utf8');
      this.modes.set(mode, bytes);
    }
    return bytes;
  }

  private state(session: SessionHandle): SessionState {
    const text = this.abi().sessionState(session);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new EngineHostError(`ti_session_state() returned malformed JSON (${errorMessage(error)}): ${text.slice(0, 200)}`);
    }
    const parsed = SessionStateSchema.safeParse(json);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
      throw new EngineHostError(`ti_session_state() JSON breaks the schema: ${fields}`);
    }
    return parsed.data;
  }

  /**
   * Runs a pass; with the C recorder its records' log (base64, record-log.ts) rides in the reply
   * (`recordLog`), not in a message of its own: one message per pass from this thread, not two.
   * threadCpuMs counts this thread's work for the whole pass, from here to the reply: routing the
   * records and opening the captured pass, the engine's call with every record, reading the
   * recorder back, ending the captured pass and the session state.
   */
  private runPass(kind: PassKind): WorkerPassResult & { recordLog?: string | Uint8Array } {
    const cpuStarted = threadCpuMs();
    const result = this.runPassMeasured(kind);
    const cpuEnded = cpuStarted === null ? null : threadCpuMs();
    return result.status === 'ok' && cpuStarted !== null && cpuEnded !== null ? { ...result, threadCpuMs: Math.max(0, cpuEnded - cpuStarted) } : result;
  }

  private runPassMeasured(kind: PassKind): WorkerPassResult & { recordLog?: string | Uint8Array } {
    const session = this.requireSession('runPass');
    const abi = this.abi();
    const index = kind === 'prefill' ? 0 : this.nextIndex;
    const pass: ActivePass = {
      index,
      kind,
      abiKind: kind === 'prefill' ? 0 : 1,
      recorder: 'js',
      recordCount: 0,
      bytes: 0,
      lastBoundary: null,
      failure: null,
      poolFailure: null,
    };
    // No message before the pass: the caller knows which pass it asked for (engine-host.ts).
    this.beginCapturedPass(pass);
    this.callbackMs = 0;
    const waitsBefore = this.capture?.kind === 'pooled' ? { ...this.capture.pool.waits } : null;
    this.active = pass;
    const started = performance.now();
    let status: number;
    try {
      status = kind === 'prefill' ? abi.prefill(session) : abi.decode(session);
    } finally {
      this.active = null;
    }
    const durationMs = performance.now() - started;
    // The C recorder's share of the per-record work is done once per pass, on this thread: it counts.
    const recordLog = this.nativePass ? this.finishNativePass(pass) : null;
    const logged = recordLog === null ? {} : { recordLog };
    this.announcer.flush();
    // The capture could not take a record (its writer failed, the disk is full): the capture's error, not the engine's.
    if (pass.poolFailure !== null) {
      if (this.capture?.kind === 'pooled') this.capture.pass = null;
      if (recordLog !== null) this.announcer.sendLog(pass.index, typeof recordLog === 'string' ? recordLog : Buffer.from(recordLog).toString('base64')); // the error reply carries no log
      throw pass.poolFailure;
    }
    // Records the engine emitted from threads of its own were refused by the guard: the pass fails for that.
    const foreign = this.guard?.takeForeign() ?? null;
    if (foreign !== null) {
      const refused = `record from a foreign thread: ${foreign.firstName}${foreign.count > 1 ? ` (and ${foreign.count - 1} more)` : ''} was emitted from a thread other than the one that called ti_${kind === 'prefill' ? 'prefill' : 'decode'}; the trace ABI requires every record on the calling thread, so the host refused it`;
      pass.failure = pass.failure === null ? refused : `${refused}; then ${pass.failure}`;
    }
    // The host asked the engine to stop (a record callback returned nonzero) and the engine
    // carried on to TI_OK: the pass still failed, for the host's reason, and says it was ignored.
    if (status === TI_STATUS.TI_OK && pass.failure !== null) {
      this.endCapturedPass(null);
      return {
        status: 'engine_error',
        index,
        kind,
        code: 'TI_ERR_ABORTED',
        message: `${pass.failure} (the engine ignored the request to stop and returned TI_OK)`,
        recordCount: pass.recordCount,
        lastBoundary: pass.lastBoundary,
        ...logged,
      };
    }
    if (status !== TI_STATUS.TI_OK) {
      const message = pass.failure ?? abi.lastError(session);
      this.endCapturedPass(null);
      return {
        status: 'engine_error',
        index,
        kind,
        code: abi.statusString(status),
        message,
        recordCount: pass.recordCount,
        lastBoundary: pass.lastBoundary,
        ...logged,
      };
    }
    const state = this.state(session);
    // An engine without output modes (no text/audio interleaving) reports none: null.
    const mode = outputModeOf(state);
    this.endCapturedPass(mode);
    this.nextIndex = index + 1;
    const capture = this.capture;
    const stats =
      capture?.kind === 'pooled' && waitsBefore !== null
        ? {
            capture: {
              callbackMs: this.callbackMs,
              waitMs: capture.pool.waits.ms - waitsBefore.ms,
              waits: capture.pool.waits.count - waitsBefore.count,
              poolBytes: capture.pool.size,
              sealWaitMs: capture.sealWaitMs,
              recorder: pass.recorder,
              passEntriesByRecorder: capture.entriesByRecorder,
            },
          }
        : {};
    return { status: 'ok', index, kind, mode, recordCount: pass.recordCount, bytes: pass.bytes, durationMs, state, ...stats, ...logged };
  }

  /** The ti_record_fn: runs on this thread inside ti_prefill / ti_decode. Never throws. */
  private onRecord(_user: Pointer | null, address: Pointer): number {
    const pass = this.active;
    if (pass === null) return 1; // a record outside a pass: refuse it
    if (pass.failure !== null) return 1; // the host already asked to stop: nothing more is taken
    return this.timedForPass(pass, () => {
      if (this.nativePass) return this.takeForwarded(pass, address);
      this.takeRecord(pass, address);
      return 0;
    });
  }

  /**
   * Runs a callback of the engine's thread (a record, or the C recorder's request) for `pass`:
   * its time counts as the callback's, and a throw stops the pass (1) instead of escaping into C.
   */
  private timedForPass(pass: ActivePass, body: () => number): number {
    const started = performance.now();
    try {
      return body();
    } catch (error) {
      this.stopPass(pass, error);
      return 1;
    } finally {
      this.callbackMs += performance.now() - started;
    }
  }

  /** The host stops the pass for `error`: the callback returns nonzero, and nothing more is taken. */
  private stopPass(pass: ActivePass, error: unknown): void {
    if (this.nativePass && this.native !== null) {
      this.syncCounters(pass, this.native);
      this.native.stop();
    }
    pass.failure = `the host stopped the pass at record ${pass.recordCount} (after ${pass.lastBoundary ?? 'no boundary'}): ${errorMessage(error)}`;
    if (error instanceof CapturePoolError) pass.poolFailure = error;
  }

  private takeRecord(pass: ActivePass, address: Pointer): void {
    const reader = this.reader;
    if (reader === null) throw new Error('no record reader');
    const { name, entry, dtype, shape, strides, rowMajor, spanBytes, byteLength } = this.checkRecord(pass, reader.read(address));

    // The crash site first: if the engine dies while this record is copied or written, or right
    // after, the caller reads it from the crumb.
    this.crumb?.mark(pass.index, entry.index, pass.recordCount + 1);
    this.announcer.add(pass.index, announcementOf(entry, name, dtype, shape, byteLength));

    const capture = this.capturedBy(pass, name);
    if (capture?.kind === 'pooled') {
      this.poolRecord(capture, name, entry.stage, dtype, shape, strides, rowMajor, spanBytes, byteLength);
    } else if (capture?.kind === 'direct') {
      // The frame's data view: the engine's bytes are copied straight into it (row-major), or
      // gathered into it through the scratch buffer (strided). commitRecord appends the frame.
      const target = capture.writer.openRecord(name, entry.stage, dtype, shape, strides);
      if (rowMajor) {
        reader.copyData(target, byteLength);
      } else {
        const raw = this.scratchOf(spanBytes);
        reader.copyData(raw, spanBytes);
        target.set(gatherStrided(raw, dtype, shape, strides));
      }
      capture.writer.commitRecord();
    }
    pass.recordCount += 1;
    pass.bytes += byteLength;
    pass.lastBoundary = name;
  }

  /** The capture a record of `pass` goes to: none outside the record window (but for the boundaries it keeps). */
  private capturedBy(pass: ActivePass, name: string): CaptureTarget | null {
    const window = this.recordWindow;
    return window !== null && pass.index < window.from && !window.keep.has(name) ? null : this.capture;
  }

  /**
   * The contract checks of a record that stop the pass at once (the engine's error, named); the
   * record as the rest of the callback uses it.
   */
  private checkRecord(pass: ActivePass, record: RawRecord): CheckedRecord {
    const name = record.name;
    if (record.passIndex !== pass.index || record.passKind !== pass.abiKind) {
      throw new Error(`${name}: ti_record says pass ${record.passIndex} (kind ${record.passKind}), but this is pass ${pass.index} (${pass.kind})`);
    }
    const entry = this.catalogue.get(name);
    if (entry === undefined) throw new Error(`${name}: not a boundary of the engine's catalogue (describe().boundaries)`);
    const dtype = dtypeFromAbi(record.dtype);
    if (dtype === undefined) throw new Error(`${name}: ti_record.dtype ${record.dtype} is not a ti_dtype`);
    const rank = record.rank;
    const shape = new Array<number>(rank);
    let count = 1;
    for (let axis = 0; axis < rank; axis++) {
      const extent = Number(record.shape[axis]);
      if (extent < 0) throw new Error(`${name}: shape[${axis}] is ${extent}`);
      shape[axis] = extent;
      count *= extent;
    }
    if (!Number.isSafeInteger(count * DTYPE_SIZE[dtype])) {
      throw new Error(
        `${name}: engine contract violated: shape [${shape.join(', ')}] has ${count === Infinity ? 'more' : count.toExponential(3)} elements, ` +
          `more bytes than 2^53 (the product of the extents ${count >= 2 ** 64 ? 'overflows 64 bits' : 'cannot be addressed'})`,
      );
    }
    // Strides as emitted (contiguous when the engine passed NULL), whether they are the row-major
    // ones (an axis of extent 1 never moves: its stride is free; no elements: trivially
    // row-major), and the span they address, in elements.
    const strides = new Array<number>(rank);
    const given = record.strides;
    let rowMajor = true;
    let spanElements = count === 0 ? 0 : 1;
    let contiguous = 1;
    for (let axis = rank - 1; axis >= 0; axis--) {
      const extent = shape[axis] as number;
      let stride = contiguous;
      if (given !== null) {
        stride = Number(given[axis]);
        if (stride < 0) throw new Error(`${name}: strides[${axis}] is ${stride} (negative strides are not supported)`);
        if (extent !== 1 && stride !== contiguous) rowMajor = false;
      }
      strides[axis] = stride;
      if (count > 0) spanElements += (extent - 1) * stride;
      contiguous *= extent;
    }
    if (count === 0) rowMajor = true;
    const size = DTYPE_SIZE[dtype];
    const byteLength = count * size;
    // The span the strides address, in bytes: the engine's byte_length must cover it.
    const spanBytes = rowMajor ? byteLength : spanElements * size;
    if (record.byteLength < spanBytes) {
      throw new Error(`${name}: byte_length ${record.byteLength} does not cover the ${spanBytes} bytes its shape and strides address`);
    }
    return { name, entry, dtype, shape, strides, rowMajor, spanBytes, byteLength };
  }

  // ---- the C recorder ------------------------------------------------------------------------

  /**
   * Whether the C recorder takes this pass's records: where it is built, the crumb is shared
   * memory it can store into, and the capture (if any) goes through the pool. The record guard
   * forwards to it, or to the JavaScript callback.
   */
  private routeRecords(pass: ActivePass, pooled: Extract<CaptureTarget, { kind: 'pooled' }> | null): boolean {
    const guard = this.guard;
    const callback = this.callback;
    if (guard === null || callback === null) return false;
    const native = this.native;
    const capture = this.capture;
    const crumb = this.crumb?.address() ?? null;
    this.nativePass = native !== null && crumb !== null && capture?.kind !== 'direct';
    if (!this.nativePass || native === null || crumb === null) {
      guard.forwardTo(callback.pointer, null);
      return false;
    }
    pass.recorder = 'c';
    const window = this.recordWindow;
    if (window !== this.nativeWindow) {
      for (const entry of this.boundaries) native.setKeep(entry.index, window?.keep.has(entry.name) ?? false);
      this.nativeWindow = window;
    }
    const begun = native.openPass(
      pass.index,
      pass.abiKind,
      window?.from ?? 0,
      crumb,
      pooled === null ? null : { control: pooled.pool.controlBlock, ring: pooled.pool.producerState() },
    );
    guard.forwardTo(native.fn, native.user);
    return pooled !== null && begun;
  }

  /** The pass's counters as the C recorder holds them; returns where it left the ring. */
  private syncCounters(pass: ActivePass, native: NativeRecorder): { head: number; seq: number; woken: number } {
    const { counters, ring } = native.passState();
    this.adoptCounters(pass, counters);
    return ring;
  }

  private adoptCounters(pass: ActivePass, counters: TakenPass): void {
    pass.recordCount = counters.records;
    pass.bytes = counters.bytes;
    pass.lastBoundary = counters.lastBoundary < 0 ? null : (this.boundaries[counters.lastBoundary]?.name ?? null);
  }

  /**
   * The pass ended with the C recorder: the pool goes on from where it left the ring, the pass's
   * counters are its, and every record it took is announced to the caller (in one go, per pass).
   */
  private finishNativePass(pass: ActivePass): string | Uint8Array | null {
    const native = this.native;
    this.nativePass = false;
    if (native === null) return null;
    const { counters, ring } = native.closePass();
    this.adoptCounters(pass, counters);
    if (this.capture?.kind === 'pooled') this.capture.pool.adoptProducer(ring);
    const { words, bytes } = native.takenSince();
    if (bytes === 0) return null;
    // A copy of its own (the log's buffer is reused; cloning a view would clone all of it).
    return this.logAsBytes
      ? new Uint8Array(words.buffer.slice(words.byteOffset, words.byteOffset + bytes))
      : Buffer.from(words.buffer, words.byteOffset, bytes).toString('base64');
  }

  /**
   * Announces the records the C recorder took since the last time (at the pass's end, and
   * whenever it wakes the writer; after passState): its log goes to the caller as it is, in one
   * 'recordLog' message (record-log.ts), which the caller turns into announcements on its thread.
   */
  private announceTaken(pass: ActivePass, native: NativeRecorder): void {
    const { words, bytes } = native.takenSince();
    if (bytes > 0) this.announcer.sendLog(pass.index, Buffer.from(words.buffer, words.byteOffset, bytes).toString('base64'));
  }

  /**
   * The C recorder asks for room in the ring (or that the writer be woken): the pool does it from
   * where the recorder is and hands the ring back. 1 when the capture cannot go on (the pass stops).
   */
  private service(op: number, bytes: number): number {
    const native = this.native;
    const capture = this.capture;
    const pass = this.active;
    if (native === null || capture?.kind !== 'pooled' || pass === null) return 1;
    return this.timedForPass(pass, () => {
      capture.pool.adoptProducer(this.syncCounters(pass, native));
      if (op === SERVICE.ROOM) capture.pool.makeRoom(bytes);
      else {
        capture.pool.wakeWriter();
        // A long pass: the caller hears of its records as they go, every MiB or so, not only at its end.
        this.announceTaken(pass, native);
      }
      native.setRing(capture.pool.producerState());
      return 0;
    });
  }

  /**
   * A record the C recorder handed over: one its checks stop. The same checks run here and throw
   * the same error; a record they accept (a name this side decodes differently) goes back to the
   * recorder as the boundary found here. 0 taken, 1 the pass stopped.
   */
  private takeForwarded(pass: ActivePass, address: Pointer): number {
    const reader = this.reader;
    const native = this.native;
    if (reader === null || native === null) throw new Error('no record reader');
    this.syncCounters(pass, native);
    const { name, entry, dtype, shape, strides, byteLength } = this.checkRecord(pass, reader.read(address));
    const capture = this.capturedBy(pass, name);
    if (capture?.kind === 'pooled' && capture.pass !== null) {
      const file = capture.pass.file;
      checkCaptureRecord(
        file,
        { index: pass.index, names: native.seen(entry.index) ? new Set([name]) : new Set() },
        name,
        entry.stage,
        dtype,
        shape,
        strides,
        null,
      );
      for (const [field, text] of [
        ['name', name],
        ['stage', entry.stage],
      ] as const) {
        const bytes = Buffer.byteLength(text, 'utf8');
        if (bytes > MAX_FRAME_STRING_BYTES) throw frameFieldError(file, name, field, new FrameFieldError(field, bytes).message);
      }
      if (byteLength > 0 && reader.record.data === null) throw new Error(`ti_record.data is NULL at ${name} (${byteLength} bytes)`);
    }
    const taken = native.takeAs(address, entry.index);
    if (taken === -1) return 1; // the capture failed: service() said why
    if (taken !== 0) throw new Error(`${name}: the host's C recorder refused a record its checks accept`);
    return 0;
  }

  /**
   * One record into the capture pool: checked (as the writer would), its frame header laid out,
   * and its data copied once from the engine's memory into the pool (strided: gathered first).
   */
  private poolRecord(
    capture: Extract<CaptureTarget, { kind: 'pooled' }>,
    name: string,
    stage: string,
    dtype: DType,
    shape: number[],
    strides: number[],
    rowMajor: boolean,
    spanBytes: number,
    byteLength: number,
  ): void {
    const pass = capture.pass;
    if (pass === null) throw new Error('no captured pass is open');
    const file = pass.file;
    checkCaptureRecord(file, pass, name, stage, dtype, shape, strides, null);
    let headerBytes: number;
    try {
      headerBytes = capture.encoder.header(pass.index, pass.records, dtype, shape, strides, name, stage, byteLength);
    } catch (error) {
      if (error instanceof FrameFieldError) throw frameFieldError(file, name, error.field, error.message);
      throw error;
    }
    const reader = this.reader as RecordReader;
    if (rowMajor) {
      // The engine's contract, not the capture's: a pass that fails for it is the engine's error.
      if (byteLength > 0 && reader.record.data === null) throw new Error(`ti_record.data is NULL at ${name} (${byteLength} bytes)`);
      capture.pool.record(capture.encoder.bytes, headerBytes, reader.record.data, null, byteLength);
    } else {
      const raw = this.scratchOf(spanBytes);
      reader.copyData(raw, spanBytes);
      capture.pool.record(capture.encoder.bytes, headerBytes, null, gatherStrided(raw, dtype, shape, strides), byteLength);
    }
    pass.records += 1;
    pass.names.add(name);
  }

  private scratch = new Uint8Array(64 * 1024);

  /** A view of `byteLength` bytes of the scratch buffer (strided records), grown (doubling) when too small. */
  private scratchOf(byteLength: number): Uint8Array {
    if (this.scratch.byteLength < byteLength) {
      let size = this.scratch.byteLength;
      while (size < byteLength) size *= 2;
      this.scratch = new Uint8Array(size);
    }
    return this.scratch.subarray(0, byteLength);
  }

  private close(): null {
    // A capture never finished stays as it is, for recover; the writer thread stops.
    if (this.capture?.kind === 'pooled') this.capture.pool.close();
    this.capture = null;
    if (this.session !== null && this.engine) {
      this.engine.abi.setRecordCallback(this.session, null, null);
      this.engine.abi.close(this.session);
    }
    this.session = null;
    this.callback?.unregister();
    this.callback = null;
    this.guard?.free();
    this.guard = null;
    this.native?.free();
    this.native = null;
    return null;
  }
}

/** How a failure crosses back to the caller. */
function replyErrorOf(error: unknown): ReplyError {
  if (error instanceof EngineLoadError) {
    return {
      kind: 'load',
      library: error.library,
      failure: error.failure,
      ...(error.symbol !== undefined ? { symbol: error.symbol } : {}),
      ...(error.field !== undefined ? { field: error.field } : {}),
      detail: error.detail,
    };
  }
  if (error instanceof EngineCallError) return { kind: 'engine', call: error.call, code: error.code, message: error.engineMessage };
  return { kind: 'host', message: errorMessage(error) };
}

function main(): void {
  const port = parentPort;
  if (port === null) throw new Error('engine-worker.js runs as a worker_threads Worker');
  const data = WorkerDataSchema.parse(workerData);
  // 'thread': messages go by postMessage, announcement batches as their JSON text (the caller
  // parses a string message); 'process': every message is a JSON line on the pipe.
  const sendJson: SendJson = data.messageFd === null ? (json) => port.postMessage(json) : lineWriter(data.messageFd);
  const send: Send = data.messageFd === null ? (message) => port.postMessage(message) : (message) => sendJson(JSON.stringify(message));
  const worker = new EngineWorker(sendJson, data.messageFd === null);
  port.on('message', (raw: unknown) => {
    const parsed = WorkerRequestSchema.safeParse(raw);
    if (!parsed.success) {
      const id = typeof raw === 'object' && raw !== null && 'id' in raw && typeof raw.id === 'number' ? raw.id : null;
      const message = `malformed request: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`;
      if (id === null) send({ type: 'fatal', message });
      else send({ type: 'reply', id, ok: false, error: { kind: 'host', message } });
      return;
    }
    const request = parsed.data;
    try {
      const value = worker.handle(request);
      send({ type: 'reply', id: request.id, ok: true, value });
    } catch (error) {
      send({ type: 'reply', id: request.id, ok: false, error: replyErrorOf(error) });
    }
  });
}

main();

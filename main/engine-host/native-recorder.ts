// The engine host's record callback in C (engine/host-recorder/ti_recorder.c, built into
// engine/build/libti_recorder.so): koffi bindings. Per record it checks the record's contract,
// leaves the crash crumb and copies the record once into the capture pool, all on the engine's
// thread without entering JavaScript; a record that breaks a check goes to the worker's
// JavaScript callback (the fallback), which names the violation as it always has. The worker
// reads the pass's counters and what to announce once per pass (takePass).
import koffi, { type TypeObject } from 'koffi';
import { ABI_DTYPE_ORDER, DTYPE_SIZE } from '../core/bundle/dtype.ts';
import { bindHostLibrary, type NativeFunction, type Pointer } from './abi-binding.ts';

export const RECORDER_LIBRARY = 'libti_recorder.so';

/** Requests of the recorder's service callback (ti_recorder.c TIR_SERVICE_*). */
export const SERVICE = { ROOM: 1, WAKE: 2 } as const;
/** The service callback: make room for an entry of `bytes` at the ring's head (ROOM), or wake the writer (WAKE). 0 when done, 1 when the capture failed. */
export type ServiceCallback = (op: number, bytes: number) => number;

/** The ring of the capture pool as its producer holds it (CapturePool.producerState). */
export interface RingState {
  /** Address of the first ring byte (after the pool file's header). */
  readonly ring: number;
  readonly capacity: number;
  readonly base: number;
  readonly head: number;
  readonly seq: number;
  readonly woken: number;
  /** Bytes published since the last wake after which the writer is woken. */
  readonly wakeBytes: number;
}

/**
 * Records the recorder took, for the caller's announcements: from byte 0 to `bytes`, entries of
 * u32 boundary index, u32 dtype code, u32 rank, u32 0 (`words`, 4 per 16 bytes), then the byte
 * length and the rank extents (`numbers`, one per 8 bytes). Views valid until the next call.
 */
export interface TakenLog {
  readonly words: Uint32Array;
  readonly numbers: Float64Array;
  readonly bytes: number;
}

/** What a pass took, read after it. */
export interface TakenPass {
  readonly records: number;
  readonly bytes: number;
  /** Catalogue index of the last record taken, -1 for none. */
  readonly lastBoundary: number;
}

const RECORDER_PROTOTYPES = {
  create: 'void *tir_new(uint32_t boundaries, const uint8_t *dtype_sizes, uint32_t dtypes)',
  free: 'void tir_free(void *r)',
  setBoundary:
    'int tir_set_boundary(void *r, uint32_t index, const uint8_t *name, uint32_t name_bytes, const uint8_t *stage, uint32_t stage_bytes, uint32_t keep, uint32_t lookup)',
  setKeep: 'void tir_set_keep(void *r, uint32_t index, uint32_t keep)',
  setCallbacks: 'void tir_set_callbacks(void *r, ti_record_fn *fallback, void *service)',
  setRing: 'void tir_set_ring(void *r, uintptr_t ring, uint64_t capacity, uint64_t base, uint64_t head, uint32_t seq, uint64_t woken, uint64_t wake_bytes)',
  openPass:
    'int tir_open_pass(void *r, uintptr_t crumb, uintptr_t control, uintptr_t ring, uint64_t capacity, uint64_t base, uint64_t head, uint32_t seq, uint64_t woken, uint64_t wake_bytes, uint32_t index, uint32_t kind, uint32_t window_from, uint32_t begin_entry)',
  closePass: 'uint64_t tir_close_pass(void *r, _Out_ double *state, _Out_ uint8_t *log, uint64_t from, uint64_t capacity)',
  putEndPass:
    'int tir_put_end_pass(void *r, uint32_t index, const uint8_t *mode, uint32_t mode_bytes, uintptr_t ring, uint64_t head, uint32_t seq, _Out_ double *state)',
  passState: 'void tir_pass_state(void *r, _Out_ double *out)',
  stop: 'void tir_stop(void *r)',
  seen: 'uint32_t tir_seen(void *r, uint32_t index)',
  logCopy: 'void tir_log_copy(void *r, _Out_ uint8_t *target, uint64_t from, uint64_t bytes)',
  takeAs: 'int tir_take_as(void *r, void *record, int32_t index)',
  addressOf: 'uintptr_t tir_address_of(void *p)',
  recordFn: 'ti_record_fn *tir_record_fn(void)',
} as const;

interface RecorderFunctions extends Record<keyof typeof RECORDER_PROTOTYPES, NativeFunction> {
  servicePointer: TypeObject;
}

let functions: RecorderFunctions | null | undefined;

/** The library's functions, or null when it was not built (the worker then keeps its JavaScript callback). */
function recorderFunctions(): RecorderFunctions | null {
  if (functions !== undefined) return functions;
  const bound = bindHostLibrary(RECORDER_LIBRARY, RECORDER_PROTOTYPES);
  functions = bound === null ? null : { ...bound, servicePointer: koffi.pointer(koffi.proto('int tir_service_fn(int op, uint64_t bytes)')) };
  return functions;
}

function asNumber(value: unknown): number {
  return typeof value === 'bigint' ? Number(value) : (value as number);
}

/** The address of shared memory koffi passes zero-copy (a SharedArrayBuffer's typed array). */
export function sharedAddress(view: Int32Array): number | null {
  const fns = recorderFunctions();
  return fns === null ? null : asNumber(fns.addressOf(view));
}

export class NativeRecorder {
  private freed = false;
  private readonly serviceCallback: Pointer;
  private logBuffer = new ArrayBuffer(4096);
  private log: TakenLog = { words: new Uint32Array(this.logBuffer), numbers: new Float64Array(this.logBuffer), bytes: 0 };
  /** Bytes of the pass's log already read (takenSince). */
  private logRead = 0;
  /** tir_pass_state's seven numbers (one call for what the host reads after a pass). */
  private readonly state = new Float64Array(7);
  /** Bytes of the log closePass copied into the buffer (-1 after passState: none). */
  private lastLog = -1;
  /** The capture pool's control block last given, and its address. */
  private control: Int32Array | null = null;
  private controlAddress = 0;

  private constructor(
    private readonly fns: RecorderFunctions,
    /** The user pointer to register with the ti_record_fn `fn`. */
    readonly user: Pointer,
    readonly fn: Pointer,
    service: ServiceCallback,
  ) {
    this.serviceCallback = koffi.register((op: number, bytes: number | bigint) => service(op, Number(bytes)), fns.servicePointer) as Pointer;
  }

  /**
   * A recorder for a catalogue, or null where the library was not built. `lookup` false: the
   * records of that boundary always go to the fallback (a name or stage the host refuses in a
   * frame). `fallback` is the registered JavaScript ti_record_fn.
   */
  static create(
    boundaries: readonly { readonly name: string; readonly stage: string; readonly lookup: boolean }[],
    fallback: Pointer,
    service: ServiceCallback,
  ): NativeRecorder | null {
    const fns = recorderFunctions();
    if (fns === null) return null;
    const sizes = Uint8Array.from(ABI_DTYPE_ORDER, (dtype) => DTYPE_SIZE[dtype]);
    const user = fns.create(boundaries.length, sizes, sizes.length);
    if (typeof user !== 'bigint' || user === 0n) throw new Error('tir_new: out of memory');
    const fn = fns.recordFn();
    if (typeof fn !== 'bigint' || fn === 0n) throw new Error('tir_record_fn returned NULL');
    const recorder = new NativeRecorder(fns, user, fn, service);
    boundaries.forEach((boundary, index) => {
      const name = Buffer.from(boundary.name, 'utf8');
      const stage = Buffer.from(boundary.stage, 'utf8');
      if (fns.setBoundary(user, index, name, name.length, stage, stage.length, 0, boundary.lookup ? 1 : 0) !== 0) {
        recorder.free();
        throw new Error('tir_set_boundary: out of memory');
      }
    });
    fns.setCallbacks(user, fallback, recorder.serviceCallback);
    return recorder;
  }

  setKeep(index: number, keep: boolean): void {
    this.fns.setKeep(this.user, index, keep ? 1 : 0);
  }

  setRing(state: RingState): void {
    this.fns.setRing(this.user, state.ring, state.capacity, state.base, state.head, state.seq, state.woken, state.wakeBytes);
  }

  /**
   * A pass begins, in one call: the crumb's address, and when capturing the pool's control block
   * and its ring as the producer holds it (null: not capturing), the recorder writing the pass's
   * BEGIN_PASS entry into the ring and publishing it. Returns whether it did: false when the entry
   * did not fit now (the pass is open; the caller writes the entry through the pool, which waits
   * or wraps, and hands the ring back with setRing before the engine runs). With capture, the
   * pool adopts the recorder's position after the pass (closePass), as after its records.
   */
  openPass(index: number, abiKind: number, windowFrom: number, crumb: number, capture: { control: Int32Array; ring: RingState } | null): boolean {
    this.logRead = 0;
    this.lastLog = 0;
    const fns = this.fns;
    if (capture === null) {
      fns.openPass(this.user, crumb, 0, 0, 0, 0, 0, 0, 0, 0, index, abiKind, windowFrom, 0);
      return true;
    }
    const ring = capture.ring;
    if (capture.control !== this.control) {
      this.control = capture.control;
      this.controlAddress = asNumber(fns.addressOf(capture.control));
    }
    const deferred = fns.openPass(
      this.user,
      crumb,
      this.controlAddress,
      ring.ring,
      ring.capacity,
      ring.base,
      ring.head,
      ring.seq,
      ring.woken,
      ring.wakeBytes,
      index,
      abiKind,
      windowFrom,
      1,
    );
    return deferred === 0;
  }

  /**
   * After closePass: the pass's END_PASS entry (pass `index`, the output `mode`'s UTF-8 bytes,
   * null: the pass failed) written into the ring and published by the recorder, in one call, when
   * the pool's producer is still where the recorder left the ring (`producer`). Returns the ring's
   * position after it, or null when the recorder did not write it (no room now, a wrap, a failed
   * writer, a ring moved since): the caller writes it through the pool.
   */
  putEndPass(
    index: number,
    mode: Uint8Array | null,
    producer: { ring: number; head: number; seq: number },
  ): { head: number; seq: number; woken: number } | null {
    const written = this.fns.putEndPass(this.user, index, mode, mode?.length ?? 0, producer.ring, producer.head, producer.seq, this.state);
    this.lastLog = -1;
    return written === 0 ? this.stateRead().ring : null;
  }

  /**
   * The pass ends, in one call: nothing more is taken, its state is read (as passState) and the
   * records taken since the last takenSince are copied out (read them with takenSince).
   */
  closePass(): { counters: TakenPass; ring: { head: number; seq: number; woken: number } } {
    const from = this.logRead;
    const bytes = asNumber(this.fns.closePass(this.user, this.state, this.log.words, from, this.logBuffer.byteLength));
    if (bytes > this.logBuffer.byteLength) {
      this.grownLog(bytes);
      this.fns.logCopy(this.user, this.log.words, from, bytes);
    }
    this.lastLog = bytes;
    return this.stateRead();
  }

  /** Takes nothing more (the host stopped the pass). */
  stop(): void {
    this.fns.stop(this.user);
  }

  /**
   * Reads the pass's state in one call: its counters, and the producer's position after records
   * went in (head, entry sequence number, head at the last wake).
   */
  passState(): { counters: TakenPass; ring: { head: number; seq: number; woken: number } } {
    this.fns.passState(this.user, this.state);
    this.lastLog = -1;
    return this.stateRead();
  }

  private stateRead(): { counters: TakenPass; ring: { head: number; seq: number; woken: number } } {
    const state = this.state;
    return {
      counters: { records: state[0] as number, bytes: state[1] as number, lastBoundary: state[2] as number },
      ring: { head: state[3] as number, seq: state[4] as number, woken: state[5] as number },
    };
  }

  /** Whether boundary `index` was captured already in this pass. */
  seen(index: number): boolean {
    return this.fns.seen(this.user, index) !== 0;
  }

  /** From the fallback: take the record at `record` as boundary `index`. 0 taken; 1 refused; -1 the capture failed (the service said why). */
  takeAs(record: Pointer, index: number): number {
    return asNumber(this.fns.takeAs(this.user, record, index));
  }

  /** The records taken in this pass since the last call, as far as the last passState (or closePass) saw. */
  takenSince(): TakenLog {
    const from = this.logRead;
    const length = (this.state[6] as number) - from;
    if (length <= 0) return { ...this.log, bytes: 0 };
    // closePass copied them already; after passState they are copied here.
    if (this.lastLog !== length) {
      this.grownLog(length);
      this.fns.logCopy(this.user, this.log.words, from, length);
    }
    this.logRead = from + length;
    this.lastLog = 0;
    return { ...this.log, bytes: length };
  }

  /** The log buffer, grown (doubling) to hold `length` bytes. */
  private grownLog(length: number): void {
    if (this.logBuffer.byteLength >= length) return;
    this.logBuffer = new ArrayBuffer(Math.max(length, 2 * this.logBuffer.byteLength));
    this.log = { words: new Uint32Array(this.logBuffer), numbers: new Float64Array(this.logBuffer), bytes: 0 };
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.fns.free(this.user);
    koffi.unregister(this.serviceCallback);
  }
}

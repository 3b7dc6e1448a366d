// The engine host's record callback in C (engine/host-recorder/ti_recorder.c, built into
// engine/build/libti_recorder.so): koffi bindings. Per record it checks the record's contract,
// leaves the crash crumb and copies the record once into the capture pool, all on the engine's
// thread without entering JavaScript; a record that breaks a check goes to the worker's
// JavaScript callback (the fallback), which names the violation as it always has. The worker
// reads the pass's counters and what to announce once per pass (takePass).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import koffi, { type TypeObject } from 'koffi';
import { packageRoot } from '../core/tool/tool-info.ts';
import { ABI_DTYPE_ORDER, DTYPE_SIZE } from '../core/bundle/dtype.ts';
import { abiTypesForThisThread, type Pointer } from './abi-binding.ts';

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

type NativeFunction = (...args: unknown[]) => unknown;

interface RecorderFunctions {
  create: NativeFunction;
  free: NativeFunction;
  setBoundary: NativeFunction;
  setKeep: NativeFunction;
  setCallbacks: NativeFunction;
  setShared: NativeFunction;
  setRing: NativeFunction;
  passState: NativeFunction;
  beginPass: NativeFunction;
  endPass: NativeFunction;
  stop: NativeFunction;
  seen: NativeFunction;
  logCopy: NativeFunction;
  takeAs: NativeFunction;
  addressOf: NativeFunction;
  recordFn: NativeFunction;
  servicePointer: TypeObject;
}

let functions: RecorderFunctions | null | undefined;

/** The library's functions, or null when it was not built (the worker then keeps its JavaScript callback). */
function recorderFunctions(): RecorderFunctions | null {
  if (functions !== undefined) return functions;
  functions = null;
  const path = join(packageRoot(), 'engine', 'build', RECORDER_LIBRARY);
  if (!existsSync(path)) return functions;
  abiTypesForThisThread();
  const lib = koffi.load(path);
  functions = {
    create: lib.func('void *tir_new(uint32_t boundaries, const uint8_t *dtype_sizes, uint32_t dtypes)') as NativeFunction,
    free: lib.func('void tir_free(void *r)') as NativeFunction,
    setBoundary: lib.func(
      'int tir_set_boundary(void *r, uint32_t index, const uint8_t *name, uint32_t name_bytes, const uint8_t *stage, uint32_t stage_bytes, uint32_t keep, uint32_t lookup)',
    ) as NativeFunction,
    setKeep: lib.func('void tir_set_keep(void *r, uint32_t index, uint32_t keep)') as NativeFunction,
    setCallbacks: lib.func('void tir_set_callbacks(void *r, ti_record_fn *fallback, void *service)') as NativeFunction,
    setShared: lib.func('void tir_set_shared(void *r, uintptr_t crumb, uintptr_t control)') as NativeFunction,
    setRing: lib.func(
      'void tir_set_ring(void *r, uintptr_t ring, uint64_t capacity, uint64_t base, uint64_t head, uint32_t seq, uint64_t woken, uint64_t wake_bytes)',
    ) as NativeFunction,
    passState: lib.func('void tir_pass_state(void *r, _Out_ double *out)') as NativeFunction,
    beginPass: lib.func('void tir_begin_pass(void *r, uint32_t index, uint32_t kind, uint32_t capturing, uint32_t window_from)') as NativeFunction,
    endPass: lib.func('void tir_end_pass(void *r)') as NativeFunction,
    stop: lib.func('void tir_stop(void *r)') as NativeFunction,
    seen: lib.func('uint32_t tir_seen(void *r, uint32_t index)') as NativeFunction,
    logCopy: lib.func('void tir_log_copy(void *r, _Out_ uint8_t *target, uint64_t from, uint64_t bytes)') as NativeFunction,
    takeAs: lib.func('int tir_take_as(void *r, void *record, int32_t index)') as NativeFunction,
    addressOf: lib.func('uintptr_t tir_address_of(void *p)') as NativeFunction,
    recordFn: lib.func('ti_record_fn *tir_record_fn(void)') as NativeFunction,
    servicePointer: koffi.pointer(koffi.proto('int tir_service_fn(int op, uint64_t bytes)')),
  };
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

  /** The crumb's address (0: none) and the capture pool's control block (null: no capture). */
  setShared(crumb: number, control: Int32Array | null): void {
    this.fns.setShared(this.user, crumb, control === null ? 0 : asNumber(this.fns.addressOf(control)));
  }

  setRing(state: RingState): void {
    this.fns.setRing(this.user, state.ring, state.capacity, state.base, state.head, state.seq, state.woken, state.wakeBytes);
  }

  beginPass(index: number, abiKind: number, capturing: boolean, windowFrom: number): void {
    this.logRead = 0;
    this.fns.beginPass(this.user, index, abiKind, capturing ? 1 : 0, windowFrom);
  }

  /** Ends the pass: nothing more is taken until the next beginPass. */
  endPass(): void {
    this.fns.endPass(this.user);
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
    const state = this.state;
    this.fns.passState(this.user, state);
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

  /** The records taken in this pass since the last call, as far as the last passState saw. */
  takenSince(): TakenLog {
    const from = this.logRead;
    const length = (this.state[6] as number) - from;
    if (length <= 0) return { ...this.log, bytes: 0 };
    if (this.logBuffer.byteLength < length) {
      this.logBuffer = new ArrayBuffer(Math.max(length, 2 * this.logBuffer.byteLength));
      this.log = { words: new Uint32Array(this.logBuffer), numbers: new Float64Array(this.logBuffer), bytes: 0 };
    }
    this.fns.logCopy(this.user, this.log.words, from, length);
    this.logRead = from + length;
    return { ...this.log, bytes: length };
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.fns.free(this.user);
    koffi.unregister(this.serviceCallback);
  }
}

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

/** One record the recorder took in the pass, for the caller's announcements. */
export interface TakenRecord {
  readonly boundary: number;
  readonly dtype: number;
  readonly shape: number[];
  readonly byteLength: number;
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
  ringHead: NativeFunction;
  ringSeq: NativeFunction;
  ringWoken: NativeFunction;
  beginPass: NativeFunction;
  endPass: NativeFunction;
  stop: NativeFunction;
  records: NativeFunction;
  bytes: NativeFunction;
  lastBoundary: NativeFunction;
  seen: NativeFunction;
  logBytes: NativeFunction;
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
    ringHead: lib.func('uint64_t tir_ring_head(void *r)') as NativeFunction,
    ringSeq: lib.func('uint32_t tir_ring_seq(void *r)') as NativeFunction,
    ringWoken: lib.func('uint64_t tir_ring_woken(void *r)') as NativeFunction,
    beginPass: lib.func('void tir_begin_pass(void *r, uint32_t index, uint32_t kind, uint32_t capturing, uint32_t window_from)') as NativeFunction,
    endPass: lib.func('void tir_end_pass(void *r)') as NativeFunction,
    stop: lib.func('void tir_stop(void *r)') as NativeFunction,
    records: lib.func('uint32_t tir_records(void *r)') as NativeFunction,
    bytes: lib.func('uint64_t tir_bytes(void *r)') as NativeFunction,
    lastBoundary: lib.func('int32_t tir_last_boundary(void *r)') as NativeFunction,
    seen: lib.func('uint32_t tir_seen(void *r, uint32_t index)') as NativeFunction,
    logBytes: lib.func('uint64_t tir_log_bytes(void *r)') as NativeFunction,
    logCopy: lib.func('void tir_log_copy(void *r, _Out_ uint8_t *target, uint64_t bytes)') as NativeFunction,
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
  private logBuffer = Buffer.alloc(4096);

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
   * A recorder for a catalogue, or null where the library was not built. `lookup(i)` false: the
   * records of boundary i always go to the fallback (a name or stage the host refuses in a frame).
   * `fallback` is the registered JavaScript ti_record_fn.
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

  /** The producer's position after records went in: head, entry sequence number, head at the last wake. */
  ringPosition(): { head: number; seq: number; woken: number } {
    return { head: asNumber(this.fns.ringHead(this.user)), seq: asNumber(this.fns.ringSeq(this.user)), woken: asNumber(this.fns.ringWoken(this.user)) };
  }

  beginPass(index: number, abiKind: number, capturing: boolean, windowFrom: number): void {
    this.fns.beginPass(this.user, index, abiKind, capturing ? 1 : 0, windowFrom);
  }

  /** Takes nothing more (the host stopped the pass). */
  stop(): void {
    this.fns.stop(this.user);
  }

  counters(): TakenPass {
    return {
      records: asNumber(this.fns.records(this.user)),
      bytes: asNumber(this.fns.bytes(this.user)),
      lastBoundary: asNumber(this.fns.lastBoundary(this.user)),
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

  /** Ends the pass; returns the records taken, in order. */
  endPass(): TakenRecord[] {
    this.fns.endPass(this.user);
    const length = asNumber(this.fns.logBytes(this.user));
    if (this.logBuffer.length < length) this.logBuffer = Buffer.alloc(Math.max(length, 2 * this.logBuffer.length));
    const log = this.logBuffer;
    this.fns.logCopy(this.user, log, length);
    const taken: TakenRecord[] = [];
    for (let at = 0; at < length;) {
      const rank = log.readUInt32LE(at + 8);
      const shape = new Array<number>(rank);
      for (let axis = 0; axis < rank; axis++) shape[axis] = Number(log.readBigInt64LE(at + 24 + 8 * axis));
      taken.push({ boundary: log.readUInt32LE(at), dtype: log.readUInt32LE(at + 4), shape, byteLength: Number(log.readBigUInt64LE(at + 16)) });
      at += 24 + 8 * rank;
    }
    return taken;
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.fns.free(this.user);
    koffi.unregister(this.serviceCallback);
  }
}

// koffi declarations of the trace ABI (engine/include/trace_abi.h is the contract) and the
// loading of an engine library. Runs wherever koffi runs: the engine worker thread, in
// practice. Loading refuses, with an EngineLoadError naming the library and the symbol or
// field: a missing file, a file dlopen rejects, a library without the ti_ symbols, an ABI
// version other than HOST_ABI_VERSION, and a describe() that breaks the catalogue schema.
//
// Two koffi details matter here:
//  - callback pointer arguments arrive as BigInt addresses; the ti_record they point to is read
//    by copying its 56 bytes into a typed array (RecordReader) rather than koffi.decode of the
//    struct type, which builds an object and costs ~10x more per record;
//  - koffi.view() is forbidden (Electron refuses external buffers), so bytes are copied out with
//    the C library's memcpy into typed arrays (which koffi passes zero-copy), or koffi.decode
//    where memcpy cannot be found.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import koffi, { type LibraryHandle, type TypeObject } from 'koffi';
import { packageRoot } from '../core/tool/tool-info.ts';
import { EngineLoadError } from './engine-errors.ts';
import { readEngineFile } from './engine-file.ts';
import { HOST_ABI_VERSION, parseEngineDescription, type EngineDescription } from './engine-description.ts';

/** ti_status values of the header, by name. */
export const TI_STATUS = {
  TI_OK: 0,
  TI_ERR_INVALID_ARGUMENT: 1,
  TI_ERR_IO: 2,
  TI_ERR_FORMAT: 3,
  TI_ERR_STATE: 4,
  TI_ERR_UNKNOWN_NAME: 5,
  TI_ERR_SHAPE: 6,
  TI_ERR_OUT_OF_MEMORY: 7,
  TI_ERR_ABORTED: 8,
  TI_ERR_INTERNAL: 9,
} as const;

export const TI_MAX_RANK = 8;

/** An engine address (koffi 3 represents pointers as BigInt; NULL as null). */
export type Pointer = bigint;

interface AbiTypes {
  record: TypeObject;
  recordFnPointer: TypeObject;
}

let abiTypes: AbiTypes | undefined;

/** Registers the ABI's named types with koffi once per thread (koffi's registry is per thread). */
export function abiTypesForThisThread(): AbiTypes {
  if (abiTypes) return abiTypes;
  koffi.opaque('ti_session');
  const record = koffi.struct('ti_record', {
    pass_index: 'uint32_t',
    pass_kind: 'uint32_t',
    name: 'const char *',
    dtype: 'uint32_t',
    rank: 'uint32_t',
    shape: 'const int64_t *',
    strides: 'const int64_t *',
    data: 'const void *',
    byte_length: 'uint64_t',
  });
  const recordFn = koffi.proto('int ti_record_fn(void *user, const ti_record *record)');
  abiTypes = { record, recordFnPointer: koffi.pointer(recordFn) };
  return abiTypes;
}

/** The record callback as JS sees it: `user` and `record` are addresses. Return 0 to go on. */
export type RecordCallback = (user: Pointer | null, record: Pointer) => number;

/** A registered callback: pass `pointer` to setRecordCallback; call `unregister` when done. */
export interface RegisteredRecordCallback {
  readonly pointer: Pointer;
  unregister(): void;
}

export function registerRecordCallback(callback: RecordCallback): RegisteredRecordCallback {
  const pointer = koffi.register(callback, abiTypesForThisThread().recordFnPointer);
  let registered = true;
  return {
    pointer,
    unregister() {
      if (registered) koffi.unregister(pointer);
      registered = false;
    },
  };
}

/**
 * The record guard (engine/host-guard/ti_record_guard.c, built into engine/build): the callback
 * registered with the engine is the guard's, which forwards a record to `forward` only on the
 * thread that created the guard and refuses (and counts) records from any other thread. Without
 * it, a record from an engine's own thread would wait for this thread, blocked in the pass.
 */
export interface RecordGuard {
  /** The ti_record_fn and the user pointer to hand to ti_set_record_callback. */
  readonly fn: Pointer;
  readonly user: Pointer;
  /** Records refused since the last call (and the first one's boundary); null when none. */
  takeForeign(): { count: number; firstName: string } | null;
  /** Forwards records to `fn` with `user` from now on (the host's C recorder, or its JavaScript callback with no user pointer). */
  forwardTo(fn: Pointer, user: Pointer | null): void;
  free(): void;
}

/** A function koffi bound: arguments and result as koffi converts them. */
export type NativeFunction = (...args: unknown[]) => unknown;

/**
 * Binds the host's own C library `file` in engine/build (the record guard, the C recorder): each
 * of `prototypes` (a C prototype per name, in the ABI's types, registered here for this thread)
 * becomes a function. null when the library was not built.
 */
export function bindHostLibrary<Name extends string>(file: string, prototypes: Readonly<Record<Name, string>>): Record<Name, NativeFunction> | null {
  const path = join(packageRoot(), 'engine', 'build', file);
  if (!existsSync(path)) return null;
  abiTypesForThisThread();
  const lib = koffi.load(path);
  const bound: Partial<Record<Name, NativeFunction>> = {};
  for (const name of Object.keys(prototypes) as Name[]) bound[name] = lib.func(prototypes[name]) as NativeFunction;
  return bound as Record<Name, NativeFunction>;
}

const GUARD_PROTOTYPES = {
  create: 'void *trg_new(ti_record_fn *forward)',
  free: 'void trg_free(void *guard)',
  setForward: 'void trg_set_forward(void *guard, ti_record_fn *forward, void *user)',
  recordFn: 'ti_record_fn *trg_record_fn(void)',
  takeForeign: 'uint32_t trg_take_foreign(void *guard)',
  firstName: 'const char *trg_first_foreign_name(void *guard)',
} as const;

let guardFunctions: Record<keyof typeof GUARD_PROTOTYPES, NativeFunction> | undefined;

export const RECORD_GUARD_LIBRARY = 'libti_record_guard.so';

/** Creates a guard owned by the calling thread that forwards to the registered callback `forward`. */
export function createRecordGuard(forward: Pointer): RecordGuard {
  guardFunctions ??= (() => {
    const bound = bindHostLibrary(RECORD_GUARD_LIBRARY, GUARD_PROTOTYPES);
    if (bound === null) {
      const path = join(packageRoot(), 'engine', 'build', RECORD_GUARD_LIBRARY);
      throw new Error(`${path} is missing: run \`make -C engine\` (or \`npm install\`) to build the engine host's record guard`);
    }
    return bound;
  })();
  const fns = guardFunctions;
  const user = asPointer(fns.create(forward));
  if (user === null) throw new Error('trg_new: out of memory');
  const fn = asPointer(fns.recordFn());
  if (fn === null) throw new Error('trg_record_fn returned NULL');
  let freed = false;
  // The forward target last set: set again only when it changes (the worker routes every pass).
  let forwarding: [Pointer, Pointer | null] = [forward, null];
  return {
    fn,
    user,
    takeForeign() {
      const count = asNumber(fns.takeForeign(user), 'trg_take_foreign');
      return count === 0 ? null : { count, firstName: asString(fns.firstName(user), 'trg_first_foreign_name') };
    },
    forwardTo(target, targetUser) {
      if (forwarding[0] === target && forwarding[1] === targetUser) return;
      fns.setForward(user, target, targetUser);
      forwarding = [target, targetUser];
    },
    free() {
      if (!freed) fns.free(user);
      freed = true;
    },
  };
}

/** An opened session handle (opaque). */
export type SessionHandle = Pointer;

/** Every ti_* function of ABI 1, typed. Statuses are returned as numbers (ti_status). */
export interface EngineAbi {
  abiVersion(): number;
  describe(): string;
  statusString(status: number): string;
  /** ti_open: the status, the session (null on failure) and the err buffer's message. */
  open(configJson: string | null, weightsPath: string | null): { status: number; session: SessionHandle | null; message: string };
  close(session: SessionHandle): void;
  lastError(session: SessionHandle): string;
  setInput(session: SessionHandle, name: string, dtype: number, shape: BigInt64Array, data: Uint8Array): number;
  setOption(session: SessionHandle, key: string, value: string): number;
  setRecordCallback(session: SessionHandle, callback: Pointer | null, user: Pointer | null): number;
  setWanted(session: SessionHandle, names: readonly string[]): number;
  inject(session: SessionHandle, boundary: string, dtype: number, shape: BigInt64Array, data: Uint8Array): number;
  prefill(session: SessionHandle): number;
  decode(session: SessionHandle): number;
  reset(session: SessionHandle): number;
  sessionState(session: SessionHandle): string;
}

export interface LoadedEngine {
  readonly library: string;
  readonly abi: EngineAbi;
  readonly abiVersion: number;
  readonly description: EngineDescription;
  /** The raw describe() text, as the engine returned it. */
  readonly describeJson: string;
  readonly librarySha256: string;
}

const ERR_CAPACITY = 1024;

function asNumber(value: unknown, what: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  throw new Error(`${what} returned ${typeof value}, expected a number`);
}

function asString(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  throw new Error(`${what} returned ${typeof value}, expected a string`);
}

function asPointer(value: unknown): Pointer | null {
  return typeof value === 'bigint' && value !== 0n ? value : null;
}

/** The NUL-terminated text at the start of a buffer. */
function cString(buffer: Buffer): string {
  const end = buffer.indexOf(0);
  return buffer.toString('utf8', 0, end < 0 ? buffer.length : end);
}

/** The order the loader looks symbols up in: ti_abi_version first, so a non-engine is named as such. */
const ABI_SYMBOLS = [
  ['ti_abi_version', 'uint32_t ti_abi_version(void)'],
  ['ti_describe', 'const char *ti_describe(void)'],
  ['ti_status_string', 'const char *ti_status_string(int status)'],
  ['ti_open', 'int ti_open(const char *config_json, const char *weights_path, _Out_ ti_session **out, char *err, size_t err_capacity)'],
  ['ti_close', 'void ti_close(ti_session *session)'],
  ['ti_last_error', 'const char *ti_last_error(const ti_session *session)'],
  [
    'ti_set_input',
    'int ti_set_input(ti_session *session, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape, const void *data, uint64_t byte_length)',
  ],
  ['ti_set_option', 'int ti_set_option(ti_session *session, const char *key, const char *value)'],
  ['ti_set_record_callback', 'int ti_set_record_callback(ti_session *session, ti_record_fn *fn, void *user)'],
  ['ti_set_wanted', 'int ti_set_wanted(ti_session *session, const char **names, uint32_t count)'],
  [
    'ti_inject',
    'int ti_inject(ti_session *session, const char *boundary, uint32_t dtype, uint32_t rank, const int64_t *shape, const void *data, uint64_t byte_length)',
  ],
  ['ti_prefill', 'int ti_prefill(ti_session *session)'],
  ['ti_decode', 'int ti_decode(ti_session *session)'],
  ['ti_reset', 'int ti_reset(ti_session *session)'],
  ['ti_session_state', 'const char *ti_session_state(ti_session *session)'],
] as const;

type AbiSymbol = (typeof ABI_SYMBOLS)[number][0];

function bindSymbols(library: string, lib: LibraryHandle): Record<AbiSymbol, NativeFunction> {
  const bound: Partial<Record<AbiSymbol, NativeFunction>> = {};
  for (const [symbol, prototype] of ABI_SYMBOLS) {
    try {
      bound[symbol] = lib.func(prototype) as NativeFunction;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const missing = /cannot find|not find|undefined symbol/i.test(reason);
      throw new EngineLoadError({
        library,
        failure: 'missing_symbol',
        symbol,
        detail: missing
          ? symbol === 'ti_abi_version'
            ? 'not a trace-inspector engine: symbol ti_abi_version missing'
            : `not a complete trace-inspector engine: symbol ${symbol} missing`
          : `cannot bind ${symbol}: ${reason}`,
      });
    }
  }
  return bound as Record<AbiSymbol, NativeFunction>;
}

function makeAbi(fns: Record<AbiSymbol, NativeFunction>): EngineAbi {
  const errBuffer = Buffer.alloc(ERR_CAPACITY);
  return {
    abiVersion: () => asNumber(fns.ti_abi_version(), 'ti_abi_version'),
    describe: () => asString(fns.ti_describe(), 'ti_describe'),
    statusString: (status) => asString(fns.ti_status_string(status), 'ti_status_string'),
    open(configJson, weightsPath) {
      const out: unknown[] = [null];
      errBuffer.fill(0);
      const status = asNumber(fns.ti_open(configJson, weightsPath, out, errBuffer, ERR_CAPACITY), 'ti_open');
      return { status, session: asPointer(out[0]), message: cString(errBuffer) };
    },
    close: (session) => void fns.ti_close(session),
    lastError: (session) => asString(fns.ti_last_error(session), 'ti_last_error'),
    setInput: (session, name, dtype, shape, data) =>
      asNumber(fns.ti_set_input(session, name, dtype, shape.length, shape, data, BigInt(data.byteLength)), 'ti_set_input'),
    setOption: (session, key, value) => asNumber(fns.ti_set_option(session, key, value), 'ti_set_option'),
    setRecordCallback: (session, callback, user) => asNumber(fns.ti_set_record_callback(session, callback, user), 'ti_set_record_callback'),
    setWanted: (session, names) => asNumber(fns.ti_set_wanted(session, names.length === 0 ? null : [...names], names.length), 'ti_set_wanted'),
    inject: (session, boundary, dtype, shape, data) =>
      asNumber(fns.ti_inject(session, boundary, dtype, shape.length, shape, data, BigInt(data.byteLength)), 'ti_inject'),
    prefill: (session) => asNumber(fns.ti_prefill(session), 'ti_prefill'),
    decode: (session) => asNumber(fns.ti_decode(session), 'ti_decode'),
    reset: (session) => asNumber(fns.ti_reset(session), 'ti_reset'),
    sessionState: (session) => asString(fns.ti_session_state(session), 'ti_session_state'),
  };
}

/**
 * Loads an engine library: checks the file, dlopens it, binds every ti_* symbol, checks
 * ti_abi_version() and parses ti_describe(). Throws EngineLoadError.
 */
export function loadEngineLibrary(library: string): LoadedEngine {
  const bytes = readEngineFile(library);
  const librarySha256 = createHash('sha256').update(bytes).digest('hex');

  abiTypesForThisThread();
  let lib: LibraryHandle;
  try {
    lib = koffi.load(library);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new EngineLoadError({ library, failure: 'not_shared_library', detail: `not a loadable shared library: ${reason}` });
  }
  const abi = makeAbi(bindSymbols(library, lib));
  const abiVersion = abi.abiVersion();
  if (abiVersion !== HOST_ABI_VERSION) {
    throw new EngineLoadError({
      library,
      failure: 'abi_version',
      symbol: 'ti_abi_version',
      detail: `ti_abi_version() is ${abiVersion}; this host speaks trace ABI ${HOST_ABI_VERSION}`,
    });
  }
  const describeJson = abi.describe();
  const description = parseEngineDescription(describeJson, library);
  return { library, abi, abiVersion, description, describeJson, librarySha256 };
}

/** Copies `byteLength` bytes from an engine address into a typed array (zero-copy argument). */
export type CopyFromNative = (target: ArrayBufferView, source: Pointer, byteLength: number) => void;

let copier: CopyFromNative | undefined;

/**
 * The fastest copy this platform offers: the C library's memcpy found in the running process
 * (koffi.load(null)), else koffi.decode into a fresh array and a JS copy.
 */
export function copyFromNative(): CopyFromNative {
  if (copier) return copier;
  try {
    const memcpy = koffi.load(null).func('void *memcpy(void *dst, const void *src, size_t n)') as NativeFunction;
    copier = (target, source, byteLength) => {
      if (byteLength > 0) memcpy(target, source, byteLength);
    };
  } catch {
    copier = (target, source, byteLength) => {
      if (byteLength === 0) return;
      const bytes = koffi.decode(source, 'uint8_t', byteLength) as Uint8Array;
      new Uint8Array(target.buffer, target.byteOffset, byteLength).set(bytes);
    };
  }
  return copier;
}

/** One ti_record, as read by RecordReader. Reused between records: copy what you keep. */
export interface RawRecord {
  passIndex: number;
  passKind: number;
  name: string;
  dtype: number;
  rank: number;
  /** rank entries are valid; shape[i] for i < rank. */
  readonly shape: BigInt64Array;
  /** rank entries are valid; null when the engine passed NULL strides (row-major). */
  strides: BigInt64Array | null;
  data: Pointer | null;
  byteLength: number;
}

/**
 * Reads ti_record structs from the callback's address into reusable fields: one memcpy of the
 * struct, one of the shape, one of the strides, and a string decode for the name.
 */
export class RecordReader {
  private readonly struct: Uint8Array;
  private readonly u32: Uint32Array;
  private readonly u64: BigUint64Array;
  private readonly offsets: {
    passIndex: number;
    passKind: number;
    name: number;
    dtype: number;
    rank: number;
    shape: number;
    strides: number;
    data: number;
    byteLength: number;
  };
  private readonly copy = copyFromNative();
  private readonly stridesBuffer = new BigInt64Array(TI_MAX_RANK);
  readonly record: RawRecord = {
    passIndex: 0,
    passKind: 0,
    name: '',
    dtype: 0,
    rank: 0,
    shape: new BigInt64Array(TI_MAX_RANK),
    strides: null,
    data: null,
    byteLength: 0,
  };

  constructor() {
    const type = abiTypesForThisThread().record;
    const size = koffi.sizeof(type);
    this.struct = new Uint8Array(size);
    this.u32 = new Uint32Array(this.struct.buffer);
    this.u64 = new BigUint64Array(this.struct.buffer);
    const at = (member: string): number => koffi.offsetof(type, member);
    this.offsets = {
      passIndex: at('pass_index') / 4,
      passKind: at('pass_kind') / 4,
      name: at('name') / 8,
      dtype: at('dtype') / 4,
      rank: at('rank') / 4,
      shape: at('shape') / 8,
      strides: at('strides') / 8,
      data: at('data') / 8,
      byteLength: at('byte_length') / 8,
    };
  }

  /** Reads the record at `address`. Throws (naming the field) on a rank above TI_MAX_RANK or a NULL name. */
  read(address: Pointer): RawRecord {
    const o = this.offsets;
    const r = this.record;
    this.copy(this.struct, address, this.struct.byteLength);
    r.passIndex = this.u32[o.passIndex] as number;
    r.passKind = this.u32[o.passKind] as number;
    r.dtype = this.u32[o.dtype] as number;
    r.rank = this.u32[o.rank] as number;
    const namePointer = this.u64[o.name] as bigint;
    if (namePointer === 0n) throw new Error('ti_record.name is NULL');
    r.name = koffi.decode.string(namePointer);
    if (r.rank > TI_MAX_RANK) throw new Error(`ti_record.rank is ${r.rank} (at most ${TI_MAX_RANK}) at ${r.name}`);
    const shapePointer = this.u64[o.shape] as bigint;
    if (r.rank > 0) {
      if (shapePointer === 0n) throw new Error(`ti_record.shape is NULL at ${r.name} (rank ${r.rank})`);
      this.copy(r.shape, shapePointer, r.rank * 8);
    }
    const stridesPointer = this.u64[o.strides] as bigint;
    if (r.rank > 0 && stridesPointer !== 0n) {
      this.copy(this.stridesBuffer, stridesPointer, r.rank * 8);
      r.strides = this.stridesBuffer;
    } else {
      r.strides = null;
    }
    const dataPointer = this.u64[o.data] as bigint;
    r.data = dataPointer === 0n ? null : dataPointer;
    r.byteLength = Number(this.u64[o.byteLength] as bigint);
    return r;
  }

  /** Copies `byteLength` bytes of the record's data into `target`. */
  copyData(target: Uint8Array, byteLength: number): void {
    if (byteLength === 0) return;
    if (this.record.data === null) throw new Error(`ti_record.data is NULL at ${this.record.name} (${byteLength} bytes)`);
    this.copy(target, this.record.data, byteLength);
  }
}

// EngineHost: the public face of the engine host, used by the CLI, the gate and the app.
//
//   const host = await EngineHost.start({ library });            // loads, checks ABI, describe()
//   await host.open({}, weightsPath);
//   await host.setInput('prompt_tokens', { dtype: 'I32', shape: [3], data });
//   await host.beginCapture(dir, header);                         // records go to a bundle
//   const pass = await host.runPass('prefill');                   // ok | engine_error | crashed | timeout
//   const manifest = await host.finishCapture(run);
//   await host.close();
//
// Isolation 'process' (the default) runs the engine worker in a forked engine-host process: a
// SIGSEGV, an abort or a hang in the engine kills that process, and the pending runPass resolves
// with status 'crashed' or 'timeout', naming the pass and the last boundary received; the capture
// is then recovered from this process (NativeBundleWriter.recover) so every record already
// written stays readable. A watchdog (passTimeoutMs) SIGKILLs a child that does not answer. After
// a crash or a timeout the host is dead: every later call rejects with EngineHostDeadError.
//
// Isolation 'thread' runs the same worker as a worker_threads Worker of this process: no crash
// protection (a SIGSEGV or abort in the engine ends this process), and a hang in native code
// cannot be interrupted: the watchdog still reports 'timeout' and marks the host dead, but the
// worker thread keeps spinning until this process exits. Meant for trusted engines and for
// measuring the cost of isolation.
//
// This module is plain Node (no electron) and runs on the caller's thread; every message from the
// worker or the engine-host process is validated (engine-protocol.ts) before use. The two ways of
// running the worker (a forked process, a thread) are engine-transports.ts.
import { resolve as resolvePath } from 'node:path';
import type { DType } from '../core/bundle/dtype.ts';
import type { RunOutcome } from '../core/bundle/manifest-schema.ts';
import { NativeBundleWriter, type NativeBundleHeader } from '../core/bundle/native-bundle-writer.ts';
import type { EngineDescription } from './engine-description.ts';
import { EngineCallError, EngineHostDeadError, EngineHostError, EngineLoadError } from './engine-errors.ts';
import {
  CRUMB_SLOTS,
  REPLY_VALUE_SCHEMAS,
  WorkerMessageSchema,
  type JsonValue,
  type PassKind,
  type ReplyError,
  type ReplyValue,
  type CaptureStats,
  type RecordsMessage,
  type SessionState,
  type WorkerOp,
  type WorkerRequest,
} from './engine-protocol.ts';
import { decodeRecordLog } from './record-log.ts';
import { processTransport, threadTransport, type Death, type Transport, type TransportEvents } from './engine-transports.ts';

export type Isolation = 'process' | 'thread';

export interface EngineHostOptions {
  /** Path of the engine shared library (resolved to an absolute path before loading). */
  library: string;
  /** Default 'process'. */
  isolation?: Isolation;
  /** How long one engine call (a pass, or any other) may take before the watchdog fires. Default 60 s. Loading and opening or finishing a capture get loadTimeoutMs. */
  passTimeoutMs?: number;
  /**
   * How long loading the library may take (start(): spawning the engine host, dlopen with the
   * library's constructors, ti_abi_version, ti_describe). Default: passTimeoutMs, but at least
   * MIN_LOAD_TIMEOUT_MS, since it includes starting a process that a busy machine slows down.
   */
  loadTimeoutMs?: number;
}

export const DEFAULT_PASS_TIMEOUT_MS = 60_000;
export const MIN_LOAD_TIMEOUT_MS = 10_000;

/** A tensor handed to the engine: row-major little-endian bytes. */
export interface HostTensor {
  dtype: DType;
  shape: readonly number[];
  data: ArrayBufferView;
}

/** A record as announced during a pass: what arrived, never its data. */
export interface RecordEvent {
  pass: number;
  name: string;
  stage: string;
  dtype: DType;
  shape: readonly number[];
  /** Bytes of the record's row-major data. */
  byteLength: number;
}

export interface PassOk {
  status: 'ok';
  index: number;
  kind: PassKind;
  /** The output this pass produced ("text", "audio"), from ti_session_state() after the pass. */
  mode: string | null;
  recordCount: number;
  bytes: number;
  /** Time inside ti_prefill / ti_decode, record callbacks included, measured in the worker. */
  durationMs: number;
  /** CPU time of the engine's thread during the pass, where it can be read (its work, without time lost to other processes). */
  threadCpuMs?: number;
  state: SessionState;
  /** When capturing through the capture pool: the engine thread's share (callback time, waits for room). */
  capture?: CaptureStats;
}

export interface PassEngineError {
  status: 'engine_error';
  index: number;
  kind: PassKind;
  /** ti_status_string() of the returned status. */
  code: string;
  /** The engine's ti_last_error(), or the host's reason when it stopped the pass. */
  message: string;
  recordCount: number;
  lastBoundary: string | null;
}

/** What a crash or a timeout left behind. */
interface PassDeath {
  index: number;
  kind: PassKind;
  /** The last boundary announced in this pass, null when the pass announced none. */
  lastBoundary: string | null;
  /** Records announced in this pass before it died. */
  recordCount: number;
  message: string;
  /** manifest.json of the recovered capture, when a capture was open and recovery succeeded. */
  recoveredManifest: string | null;
  /** Why recovery failed, when it did. */
  recoveryError: string | null;
}

export interface PassCrashed extends PassDeath {
  status: 'crashed';
  /** The signal that killed the engine-host process (SIGSEGV, SIGABRT...), or null. */
  signal: string | null;
  exitCode: number | null;
}

export interface PassTimeout extends PassDeath {
  status: 'timeout';
  timeoutMs: number;
}

/** The caller stopped the run (abort(): Ctrl+C, SIGTERM): the engine host was killed mid-pass. */
export interface PassAborted extends PassDeath {
  status: 'aborted';
}

export type PassResult = PassOk | PassEngineError | PassCrashed | PassTimeout | PassAborted;

// ---- the host ----------------------------------------------------------------------------

interface PendingRequest {
  op: WorkerOp;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | null;
}

interface CurrentPass {
  index: number;
  kind: PassKind;
  lastBoundary: string | null;
  recordCount: number;
}

function rebuildError(error: ReplyError): Error {
  switch (error.kind) {
    case 'load':
      return new EngineLoadError(error);
    case 'engine':
      return new EngineCallError(error.call, error.code, error.message);
    case 'host':
      return new EngineHostError(error.message);
  }
}

const SIGNAL_MEANING: Readonly<Record<string, string>> = {
  SIGSEGV: 'segmentation fault',
  SIGABRT: 'abort',
  SIGBUS: 'bus error',
  SIGFPE: 'floating-point exception',
  SIGILL: 'illegal instruction',
  SIGKILL: 'killed',
};

export class EngineHost {
  readonly library: string;
  readonly isolation: Isolation;
  readonly passTimeoutMs: number;
  readonly loadTimeoutMs: number;
  private transport!: Transport;
  private nextId = 1;
  private readonly pending = new Map<number, PendingRequest>();
  /** Requests run one at a time, so each watchdog times exactly its own call. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(event: RecordEvent) => void>();
  private stageOf = new Map<string, string>();
  private boundaryNames: string[] = [];
  /** The pass a runPass in flight runs (null when none is), for its crash, timeout or abort. */
  private current: CurrentPass | null = null;
  /**
   * The index the worker gives its next decode, as it counts (engine-worker.ts nextIndex): 0 after
   * open and reset, the last pass that succeeded plus one. The worker sends no message before a
   * pass (one message a pass from the engine's thread, not two): the caller names the pass it asked
   * for, and the pass's reply must say the same index.
   */
  private nextPassIndex = 0;
  private lastRecord: { pass: number; name: string } | null = null;
  private captureDir: string | null = null;
  private timedOut: { op: WorkerOp; timeoutMs: number } | null = null;
  /** Why the caller stopped the run (abort()), when it did. */
  private abortedBy: string | null = null;
  /** What onDeath did with the open capture, when there was one. */
  private recovered: { manifestPath: string | null; error: string | null } | null = null;
  private deadReason: string | null = null;
  private deathHandled = false;
  private loaded: ReplyValue<'load'> | null = null;
  /** A fatal message the worker sent, kept for the death report. */
  private fatalMessage: string | null = null;

  private constructor(options: EngineHostOptions) {
    this.library = resolvePath(options.library);
    this.isolation = options.isolation ?? 'process';
    this.passTimeoutMs = options.passTimeoutMs ?? DEFAULT_PASS_TIMEOUT_MS;
    this.loadTimeoutMs = options.loadTimeoutMs ?? Math.max(this.passTimeoutMs, MIN_LOAD_TIMEOUT_MS);
  }

  /**
   * Starts the worker (in a forked engine-host process, or as a thread), loads the library,
   * checks its ABI version and parses describe(). Rejects with EngineLoadError when the library
   * cannot be used as an engine; nothing is left running then.
   */
  static async start(options: EngineHostOptions): Promise<EngineHost> {
    const host = new EngineHost(options);
    const events: TransportEvents = {
      message: (raw) => host.onMessage(raw),
      death: (death) => void host.onDeath(death),
    };
    host.transport = host.isolation === 'process' ? processTransport(events) : threadTransport(events);
    try {
      host.loaded = (await host.request({ id: 0, op: 'load', library: host.library, crumb: host.transport.crumb })) as ReplyValue<'load'>;
    } catch (error) {
      // A library can kill or wedge its host while it is loaded (a load-time constructor runs
      // inside dlopen): that is a library that cannot be used as an engine, named as such.
      const died = error instanceof EngineHostDeadError ? host.loadDeath() : null;
      await host.dispose();
      throw died ?? error;
    }
    for (const boundary of host.loaded.description.boundaries) host.stageOf.set(boundary.name, boundary.stage);
    host.boundaryNames = host.loaded.description.boundaries.map((boundary) => boundary.name);
    return host;
  }

  /** What a death during the load means for the library (called before dispose()). */
  private loadDeath(): EngineLoadError {
    const timedOut = this.timedOut;
    if (timedOut !== null) {
      return new EngineLoadError({
        library: this.library,
        failure: 'load_timeout',
        detail: `loading the library did not finish within ${timedOut.timeoutMs} ms (a load-time constructor, ti_abi_version or ti_describe hangs); the engine host was killed`,
      });
    }
    return new EngineLoadError({
      library: this.library,
      failure: 'load_crashed',
      detail: `loading the library killed the engine host (a load-time constructor, ti_abi_version or ti_describe crashed): ${this.deadReason ?? 'it died'}`,
    });
  }

  private get load(): ReplyValue<'load'> {
    if (!this.loaded) throw new EngineHostError('the engine is not loaded');
    return this.loaded;
  }

  /** The engine's parsed describe(). */
  get description(): EngineDescription {
    return this.load.description;
  }

  get librarySha256(): string {
    return this.load.librarySha256;
  }

  get abiVersion(): number {
    return this.load.abiVersion;
  }

  /** Whether the host can still take calls (false after close, a crash or a timeout). */
  get alive(): boolean {
    return this.deadReason === null;
  }

  /**
   * Listens to every record announced during passes; returns the unsubscribe function.
   * Announcements arrive in batches (every 64 records or 20 ms, and at each pass end): all of a
   * pass's events have been delivered when its runPass resolves.
   */
  onRecord(listener: (event: RecordEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Opens the session: `config` is passed to ti_open as JSON (null for none). */
  async open(config: JsonValue = null, weightsPath: string | null = null): Promise<void> {
    await this.call({ op: 'open', config, weightsPath: weightsPath === null ? null : resolvePath(weightsPath) });
  }

  async setInput(name: string, tensor: HostTensor): Promise<void> {
    await this.call({ op: 'setInput', name, tensor: tensorMessage(tensor) });
  }

  async setOption(key: string, value: string | number | boolean): Promise<void> {
    await this.call({ op: 'setOption', key, value: String(value) });
  }

  /** Restricts recording to these boundaries; null restores "all". */
  async setWanted(names: readonly string[] | null): Promise<void> {
    await this.call({ op: 'setWanted', names: names === null ? null : [...names] });
  }

  /**
   * Registers (true, the default) or clears the record callback. Without it the engine records
   * nothing at all: this exists to measure what recording costs.
   */
  async setRecordCallbackEnabled(enabled: boolean): Promise<void> {
    await this.call({ op: 'setRecording', enabled });
  }

  async inject(boundary: string, tensor: HostTensor): Promise<void> {
    await this.call({ op: 'inject', boundary, tensor: tensorMessage(tensor) });
  }

  /**
   * Records of every later pass go to a native bundle written in `dir` (fresh or empty). A pass
   * is sealed (pass-NNN.safetensors, journaled) when its runPass resolves; with `sealBehind`,
   * runPass resolves as soon as the engine is done and the capture writer seals behind it (for
   * callers that read the bundle only once it is finished: throughput), a writer failure then
   * reported by a later runPass or by finishCapture.
   */
  async beginCapture(
    dir: string,
    header: NativeBundleHeader,
    options: { sealBehind?: boolean; recordFrom?: number; keepBefore?: readonly string[]; poolBytes?: number } = {},
  ): Promise<void> {
    const absolute = resolvePath(dir);
    await this.call({
      op: 'beginCapture',
      dir: absolute,
      header,
      ...(options.sealBehind === true ? { sealBehind: true } : {}),
      // A pass-sharded gate: passes before recordFrom keep only the records named in keepBefore (engine-worker.ts).
      ...(options.recordFrom !== undefined && options.recordFrom > 0 ? { recordFrom: options.recordFrom, keepBefore: [...(options.keepBefore ?? [])] } : {}),
      // The ring sized from the reference (capture-pool-size.ts); without it the default ring.
      ...(options.poolBytes !== undefined ? { poolBytes: options.poolBytes } : {}),
    });
    this.captureDir = absolute;
  }

  /** Runs one pass. Crashes and timeouts are results here, not rejections. */
  async runPass(kind: PassKind): Promise<PassResult> {
    return (await this.call({ op: 'runPass', kind })) as PassResult;
  }

  async reset(): Promise<void> {
    await this.call({ op: 'reset' });
  }

  async state(): Promise<SessionState> {
    return (await this.call({ op: 'state' })) as SessionState;
  }

  /** Closes the capture with how the run ended; returns the path of its manifest.json. */
  async finishCapture(run: RunOutcome): Promise<string> {
    const { manifestPath } = (await this.call({ op: 'finishCapture', run })) as ReplyValue<'finishCapture'>;
    this.captureDir = null;
    return manifestPath;
  }

  /** The last record announced, in any pass (null before the first); after a crash, from the crumb. */
  get lastRecordSeen(): { pass: number; name: string } | null {
    return this.lastRecord;
  }

  /**
   * Stops the engine now, whatever it is doing (SIGKILL of the engine host and its process
   * group): the run ends 'aborted' with `reason`, an open capture is recovered (its sealed passes
   * kept, the pass in flight sealed from its whole records), a pending runPass resolves
   * 'aborted' and every other call rejects. Resolves once that is done. No-op on a dead host.
   */
  async abort(reason: string): Promise<void> {
    if (this.deathHandled) return;
    this.abortedBy ??= reason;
    const dead = new Promise<void>((resolve) => {
      this.onDead = resolve;
    });
    this.transport.kill();
    if (!this.transport.killIsConfirmed) void this.onDeath({ signal: null, exitCode: null, fatal: null });
    await dead;
  }

  /** What became of the open capture when the host died (null when none was open). */
  get recovery(): { manifestPath: string | null; error: string | null } | null {
    return this.recovered;
  }

  private onDead: (() => void) | null = null;

  /** Closes the session and stops the worker (and its process). Safe to call twice. */
  async close(): Promise<void> {
    if (this.deadReason !== null) return;
    try {
      await this.call({ op: 'close' });
    } finally {
      await this.dispose();
    }
  }

  private async dispose(): Promise<void> {
    if (this.deadReason === null) this.deadReason = 'the engine host was closed';
    this.deathHandled = true;
    await this.transport.shutdown();
  }

  // ---- requests ----

  /** Queues a request; the reply value was validated against REPLY_VALUE_SCHEMAS[op] on receipt. */
  private call(body: RequestBody): Promise<unknown> {
    const run = this.queue.then(() => this.request({ ...body, id: this.nextId++ } as WorkerRequest));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private request(request: WorkerRequest): Promise<unknown> {
    if (this.deadReason !== null) return Promise.reject(new EngineHostDeadError(`engine host for ${this.library} is dead: ${this.deadReason}`));
    return new Promise((resolve, reject) => {
      const pending: PendingRequest = {
        op: request.op,
        resolve,
        reject,
        timer: setTimeout(() => this.onTimeout(request.op), this.timeoutOf(request.op)),
      };
      this.pending.set(request.id, pending);
      if (request.op === 'runPass') {
        this.current = { index: request.kind === 'prefill' ? 0 : this.nextPassIndex, kind: request.kind, lastBoundary: null, recordCount: 0 };
      }
      try {
        this.transport.send(request);
      } catch (error) {
        this.pending.delete(request.id);
        if (pending.timer) clearTimeout(pending.timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** A log of the records the C recorder took (record-log.ts, base64), announced; false (the channel ended) when it is malformed. */
  private onRecordLog(pass: number, log: string | Uint8Array): boolean {
    let records: RecordsMessage['records'];
    try {
      const bytes = typeof log === 'string' ? Buffer.from(log, 'base64') : Buffer.from(log.buffer, log.byteOffset, log.byteLength);
      records = decodeRecordLog(bytes, this.boundaryNames);
    } catch (error) {
      this.protocolViolation(`malformed record log from the engine worker: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    this.onRecords(pass, records);
    return true;
  }

  /** Records the worker announced: the pass's progress, then every listener. */
  private onRecords(pass: number, records: RecordsMessage['records']): void {
    const last = records.at(-1);
    if (last === undefined) return;
    const current = this.current;
    if (current && current.index === pass) {
      current.lastBoundary = last.name;
      current.recordCount += records.length;
    }
    this.lastRecord = { pass, name: last.name };
    if (this.listeners.size === 0) return;
    for (const record of records) {
      const event: RecordEvent = { pass, stage: this.stageOf.get(record.name) ?? '', ...record };
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (error) {
          // A listener's bug must not break the channel to the engine.
          process.emitWarning(`engine host onRecord listener threw: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  }

  private onMessage(raw: unknown): void {
    const parsed = WorkerMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.protocolViolation(
        `malformed message from the engine worker: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
      );
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'records':
        this.onRecords(message.pass, message.records);
        return;
      case 'recordLog':
        this.onRecordLog(message.pass, message.log);
        return;
      case 'fatal':
        this.fatalMessage = message.message;
        return;
      case 'reply': {
        const pending = this.pending.get(message.id);
        if (!pending) {
          this.protocolViolation(`reply to unknown request ${message.id}`);
          return;
        }
        this.pending.delete(message.id);
        if (pending.timer) clearTimeout(pending.timer);
        const expectedIndex = this.current?.index ?? null;
        if (pending.op === 'runPass') this.current = null;
        if (!message.ok) {
          pending.reject(rebuildError(message.error));
          return;
        }
        if (pending.op === 'open' || pending.op === 'reset') this.nextPassIndex = 0;
        const value = REPLY_VALUE_SCHEMAS[pending.op].safeParse(message.value);
        if (!value.success) {
          const problem = `malformed ${pending.op} reply from the engine worker: ${value.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`;
          pending.reject(new EngineHostError(problem));
          this.protocolViolation(problem);
          return;
        }
        let resolved: unknown = value.data;
        if (pending.op === 'runPass') {
          const { recordLog, ...result } = value.data as ReplyValue<'runPass'>;
          if (result.index !== expectedIndex) {
            const problem = `the engine worker ran pass ${result.index} (${result.kind}) where pass ${expectedIndex} was expected`;
            pending.reject(new EngineHostError(problem));
            this.protocolViolation(problem);
            return;
          }
          if (result.status === 'ok') this.nextPassIndex = result.index + 1;
          // The pass's records ride in its reply: announced first, as if they had come before it.
          if (recordLog !== undefined && !this.onRecordLog(result.index, recordLog)) {
            pending.reject(new EngineHostError(this.fatalMessage ?? 'malformed record log from the engine worker'));
            return;
          }
          resolved = result;
        }
        pending.resolve(resolved);
        return;
      }
    }
  }

  private protocolViolation(problem: string): void {
    this.fatalMessage ??= problem;
    this.transport.kill();
    if (!this.transport.killIsConfirmed) void this.onDeath({ signal: null, exitCode: null, fatal: problem });
  }

  /**
   * The watchdog's bound for one request. Loading, and opening or finishing a capture, run no
   * engine code past the library's constructors: they start a thread or a process, map the
   * capture pool and write the manifest, which a busy machine slows down. They get the load's
   * bound (at least MIN_LOAD_TIMEOUT_MS), so a short --timeout times the engine's calls, not the
   * host's setup (a 1.5 s bound once expired in beginCapture at load 20, before any pass).
   */
  private timeoutOf(op: WorkerOp): number {
    return op === 'load' || op === 'beginCapture' || op === 'finishCapture' ? this.loadTimeoutMs : this.passTimeoutMs;
  }

  private onTimeout(op: WorkerOp): void {
    if (this.timedOut !== null || this.deathHandled) return;
    this.timedOut = { op, timeoutMs: this.timeoutOf(op) };
    this.transport.kill();
    // A killed process reports its death (after its pipe is drained); a spinning thread never will.
    if (!this.transport.killIsConfirmed) void this.onDeath({ signal: null, exitCode: null, fatal: null });
  }

  /**
   * Announcements travel in batches; the crumb holds the last record announced before the
   * worker stopped, written before the record itself. It names the crash site.
   */
  private applyCrumb(): void {
    let crumb: Int32Array;
    try {
      crumb = this.transport.readCrumb();
    } catch {
      return; // no crumb left: keep what the announcements said
    }
    if ((crumb[CRUMB_SLOTS.sequence] ?? 0) === 0) return; // nothing announced yet
    const pass = crumb[CRUMB_SLOTS.pass] ?? 0;
    const name = this.boundaryNames[crumb[CRUMB_SLOTS.boundary] ?? -1];
    if (name === undefined) return;
    this.lastRecord = { pass, name };
    if (this.current && this.current.index === pass) {
      this.current.lastBoundary = name;
      this.current.recordCount = crumb[CRUMB_SLOTS.count] ?? this.current.recordCount;
    }
  }

  /** The worker or its process is gone: settle every pending call, recover the capture. */
  private async onDeath(death: Death): Promise<void> {
    if (this.deathHandled) return;
    this.deathHandled = true;
    const fatal = death.fatal ?? this.fatalMessage;
    const timedOut = this.timedOut;
    this.applyCrumb();
    const aborted = this.abortedBy;
    const how =
      aborted !== null
        ? `${aborted}; the engine was stopped`
        : timedOut
          ? `timed out: no answer to ${timedOut.op} within ${timedOut.timeoutMs} ms, the engine was killed`
          : death.signal
            ? `the engine-host process died of ${death.signal} (${SIGNAL_MEANING[death.signal] ?? 'signal'})`
            : `the engine ${this.isolation === 'process' ? 'host process' : 'worker'} exited${death.exitCode === null ? '' : ` with code ${death.exitCode}`}`;
    const current = this.current;
    const where = current
      ? ` during pass ${current.index} (${current.kind}), ${current.lastBoundary === null ? 'before its first boundary' : `after boundary ${current.lastBoundary}`}`
      : '';
    const reason = `${how}${where}${fatal ? `: ${fatal}` : ''}`;
    this.deadReason = reason;

    const pendings = [...this.pending.values()];
    this.pending.clear();
    for (const pending of pendings) if (pending.timer) clearTimeout(pending.timer);

    let recoveredManifest: string | null = null;
    let recoveryError: string | null = null;
    if (this.captureDir !== null) {
      const run: RunOutcome = {
        status: aborted !== null ? 'aborted' : timedOut ? 'timeout' : 'crashed',
        message: reason,
        last_pass: this.lastRecord?.pass ?? null,
        last_boundary: this.lastRecord?.name ?? null,
      };
      try {
        recoveredManifest = await NativeBundleWriter.recover(this.captureDir, run);
      } catch (error) {
        recoveryError = error instanceof Error ? error.message : String(error);
      }
      this.captureDir = null;
      this.recovered = { manifestPath: recoveredManifest, error: recoveryError };
    }

    for (const pending of pendings) {
      if (pending.op === 'runPass' && current) {
        const base: PassDeath = {
          index: current.index,
          kind: current.kind,
          lastBoundary: current.lastBoundary,
          recordCount: current.recordCount,
          message: reason,
          recoveredManifest,
          recoveryError,
        };
        const result: PassResult =
          aborted !== null
            ? { ...base, status: 'aborted' }
            : timedOut
              ? { ...base, status: 'timeout', timeoutMs: timedOut.timeoutMs }
              : { ...base, status: 'crashed', signal: death.signal, exitCode: death.exitCode };
        pending.resolve(result);
      } else {
        pending.reject(new EngineHostDeadError(`engine host for ${this.library} is dead: ${reason}`));
      }
    }
    void this.transport.shutdown(); // removes the crumb; a spinning thread is simply left behind
    this.onDead?.();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type RequestBody = DistributiveOmit<WorkerRequest, 'id'>;

function tensorMessage(tensor: HostTensor): { dtype: DType; shape: number[]; data: Uint8Array } {
  const view = tensor.data;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  // Cloning a view clones its whole buffer: hand over a compact copy when the view is partial.
  const whole = view.byteOffset === 0 && view.byteLength === view.buffer.byteLength && !(view.buffer instanceof SharedArrayBuffer);
  return { dtype: tensor.dtype, shape: [...tensor.shape], data: whole ? bytes : bytes.slice() };
}

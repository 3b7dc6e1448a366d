// Every message between the engine host (caller side), the engine-host process and the engine
// worker, as zod schemas. Each side validates what it receives: a process or a thread is an
// edge like any file.
//
//   caller ──request──▶ [engine-host process ──relay──▶] worker
//   caller ◀──reply / records── worker
//
// In 'process' isolation the worker writes its messages as JSON lines straight to a pipe the
// caller reads, so nothing it sent is lost when the engine kills the process; in 'thread'
// isolation they go by postMessage.
//
// The crash site does not depend on those messages: before each record is written the worker
// stores [pass, boundary, count] in the *crumb* (a 16-byte file written in place, or a
// SharedArrayBuffer in 'thread' isolation), which the caller reads when the worker dies or
// hangs. So record announcements can travel in batches (a write per record to a pipe, or a
// postMessage per record, would cost more than the engine's own pass on a small model).
import { z } from 'zod';
import { DTypeSchema } from '../core/bundle/dtype.ts';
import { RunOutcomeSchema } from '../core/bundle/manifest-schema.ts';
import { EngineDescriptionSchema } from './engine-description.ts';

const Extent = z.number().int().nonnegative();
export const PassKindSchema = z.enum(['prefill', 'decode']);
export type PassKind = z.infer<typeof PassKindSchema>;

/** A tensor crossing into the engine (an input or an injection): row-major bytes. */
export const TensorMessageSchema = z.object({
  dtype: DTypeSchema,
  shape: z.array(Extent).max(8),
  data: z.custom<Uint8Array>((value) => value instanceof Uint8Array, 'expected a Uint8Array'),
});
export type TensorMessage = z.infer<typeof TensorMessageSchema>;

/** JSON-able values: the session config and the capture header travel as data. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValueSchema), z.record(z.string(), JsonValueSchema)]),
);

const RequestId = z.number().int().nonnegative();

/** Int32 slots of the crumb: what the worker last announced. */
export const CRUMB_SLOTS = { pass: 0, boundary: 1, count: 2, sequence: 3 } as const;
export const CRUMB_BYTES = 16;

/** Where the worker leaves its crumb: a file (process isolation) or shared memory (thread). */
export const CrumbTargetSchema = z.union([
  z.object({ path: z.string().min(1) }),
  z.object({
    shared: z.custom<SharedArrayBuffer>(
      (value) => value instanceof SharedArrayBuffer && value.byteLength >= CRUMB_BYTES,
      'expected a SharedArrayBuffer of 16 bytes',
    ),
  }),
]);
export type CrumbTarget = z.infer<typeof CrumbTargetSchema>;

export const WorkerRequestSchema = z.discriminatedUnion('op', [
  z.object({ id: RequestId, op: z.literal('load'), library: z.string().min(1), crumb: CrumbTargetSchema }),
  z.object({ id: RequestId, op: z.literal('open'), config: JsonValueSchema, weightsPath: z.string().nullable() }),
  z.object({ id: RequestId, op: z.literal('setInput'), name: z.string().min(1), tensor: TensorMessageSchema }),
  z.object({ id: RequestId, op: z.literal('setOption'), key: z.string().min(1), value: z.string() }),
  z.object({ id: RequestId, op: z.literal('setWanted'), names: z.array(z.string().min(1)).nullable() }),
  z.object({ id: RequestId, op: z.literal('setRecording'), enabled: z.boolean() }),
  z.object({ id: RequestId, op: z.literal('inject'), boundary: z.string().min(1), tensor: TensorMessageSchema }),
  // The header is validated where it is used, by NativeBundleWriter.create (NativeCaptureHeaderSchema).
  /**
   * `sealBehind`: runPass replies when the engine is done, the writer sealing the pass behind it (default: once the pass is sealed).
   * `recordFrom` / `keepBefore`: records of passes before `recordFrom` are not captured (checked and announced, never copied),
   * except those of the boundaries named in `keepBefore` (a pass-sharded gate, docs/ci.md).
   */
  z.object({
    id: RequestId,
    op: z.literal('beginCapture'),
    dir: z.string().min(1),
    header: z.unknown(),
    sealBehind: z.boolean().optional(),
    recordFrom: z.number().int().nonnegative().optional(),
    keepBefore: z.array(z.string().min(1)).optional(),
    /** The capture pool's ring size the caller asks for (core/capture/capture-pool-size.ts); TRACE_INSPECTOR_CAPTURE_POOL_BYTES overrides it. */
    poolBytes: z.number().int().positive().optional(),
  }),
  z.object({ id: RequestId, op: z.literal('runPass'), kind: PassKindSchema }),
  z.object({ id: RequestId, op: z.literal('reset') }),
  z.object({ id: RequestId, op: z.literal('state') }),
  z.object({ id: RequestId, op: z.literal('finishCapture'), run: RunOutcomeSchema }),
  z.object({ id: RequestId, op: z.literal('close') }),
]);
export type WorkerRequest = z.infer<typeof WorkerRequestSchema>;
export type WorkerOp = WorkerRequest['op'];

/**
 * ti_session_state(): `passes_run`, `cursor` and the output mode, plus whatever the engine adds.
 * Only `passes_run` is required: the rest is the engine's own. The output mode of the pass just
 * run is read from `last_output` (the reference engine's spelling, null before prefill) or `mode`.
 */
export const SessionStateSchema = z.looseObject({
  passes_run: z.number().int().nonnegative(),
  /** Model-specific (positions consumed); engines without a sequence cursor omit it. */
  cursor: z.number().int().nonnegative().optional(),
  mode: z.string().optional(),
  last_output: z.string().nullable().optional(),
});
export type SessionState = z.infer<typeof SessionStateSchema>;

/** The output the last pass produced, as the state says it: `last_output`, else `mode`. */
export function outputModeOf(state: SessionState): string | null {
  return state.last_output ?? state.mode ?? null;
}

/** The engine thread's share of a captured pass (captures through the capture pool). */
export const CaptureStatsSchema = z.object({
  /**
   * Time in the JavaScript record callback (read, check, copy into the pool, waits included). With
   * the C recorder: only the records it handed over and its requests for room (waits included).
   */
  callbackMs: z.number().nonnegative(),
  /** Which record callback took the records: the C recorder (native-recorder.ts) or the JavaScript one. */
  recorder: z.enum(['c', 'js']).optional(),
  /**
   * Of the pass's two entries in the pool (BEGIN_PASS, END_PASS), how many the C recorder wrote
   * itself, one call each (the pool writes the others: the JavaScript callback, or no room then).
   */
  passEntriesByRecorder: z.number().int().min(0).max(2).optional(),
  /** Of which waiting for room in the pool (back-pressure). */
  waitMs: z.number().nonnegative(),
  /** Records (or pass entries) that found the pool full. */
  waits: Extent,
  /** After the pass, waiting for the writer to seal it (0 with sealBehind). */
  sealWaitMs: z.number().nonnegative(),
  /** Bytes of the pool's ring. */
  poolBytes: Extent,
});
export type CaptureStats = z.infer<typeof CaptureStatsSchema>;

export const PassOkSchema = z.object({
  status: z.literal('ok'),
  index: Extent,
  kind: PassKindSchema,
  /** The output this pass produced, from ti_session_state() after the pass ("text", "audio"). */
  mode: z.string().nullable(),
  recordCount: Extent,
  /** Bytes of record data copied out of the engine during the pass. */
  bytes: Extent,
  /** Wall time of the ti_prefill/ti_decode call inside the worker, callbacks included. */
  durationMs: z.number().nonnegative(),
  /** CPU time of the engine's thread during that call (where it can be read): its work, without time lost to other processes. */
  threadCpuMs: z.number().nonnegative().optional(),
  state: SessionStateSchema,
  capture: CaptureStatsSchema.optional(),
});
export const PassEngineErrorSchema = z.object({
  status: z.literal('engine_error'),
  index: Extent,
  kind: PassKindSchema,
  /** ti_status_string() of the status the pass returned. */
  code: z.string(),
  /** The engine's ti_last_error(), or the host's reason when the host stopped the pass. */
  message: z.string(),
  recordCount: Extent,
  lastBoundary: z.string().nullable(),
});
/** What the worker can say about a pass (crashes and timeouts are the caller's verdicts). */
export const WorkerPassResultSchema = z.discriminatedUnion('status', [PassOkSchema, PassEngineErrorSchema]);
export type WorkerPassResult = z.infer<typeof WorkerPassResultSchema>;
/**
 * The runPass reply: the pass's result and, where the C recorder took its records, their log
 * (record-log.ts) since the last 'recordLog' message, which the caller announces before the pass
 * resolves (one message per pass from the engine's thread, not two): base64 in a JSON line
 * ('process' isolation), its bytes as they are in a postMessage ('thread': no text encoding on the
 * engine's thread).
 */
const RecordLogField = { recordLog: z.union([z.string(), z.instanceof(Uint8Array)]).optional() };
export const WorkerPassReplySchema = z.discriminatedUnion('status', [PassOkSchema.extend(RecordLogField), PassEngineErrorSchema.extend(RecordLogField)]);

export const LoadReplySchema = z.object({
  library: z.string(),
  abiVersion: z.number().int(),
  librarySha256: z.string().regex(/^[0-9a-f]{64}$/),
  description: EngineDescriptionSchema,
});
export type LoadReply = z.infer<typeof LoadReplySchema>;

/** The value each op replies with on success. */
export const REPLY_VALUE_SCHEMAS = {
  load: LoadReplySchema,
  open: z.null(),
  setInput: z.null(),
  setOption: z.null(),
  setWanted: z.null(),
  setRecording: z.null(),
  inject: z.null(),
  beginCapture: z.null(),
  runPass: WorkerPassReplySchema,
  reset: z.null(),
  state: SessionStateSchema,
  finishCapture: z.object({ manifestPath: z.string() }),
  close: z.null(),
} as const satisfies Record<WorkerOp, z.ZodType>;

export type ReplyValue<Op extends WorkerOp> = z.infer<(typeof REPLY_VALUE_SCHEMAS)[Op]>;

export const ReplyErrorSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('load'),
    library: z.string(),
    failure: z.enum([
      'missing_file',
      'not_regular_file',
      'not_shared_library',
      'missing_symbol',
      'abi_version',
      'describe_json',
      'describe_schema',
      'load_crashed',
      'load_timeout',
    ]),
    symbol: z.string().optional(),
    field: z.string().optional(),
    detail: z.string(),
  }),
  z.object({ kind: z.literal('engine'), call: z.string(), code: z.string(), message: z.string() }),
  z.object({ kind: z.literal('host'), message: z.string() }),
]);
export type ReplyError = z.infer<typeof ReplyErrorSchema>;

export const ReplySchema = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('reply'), id: RequestId, ok: z.literal(true), value: z.unknown() }),
  z.object({ type: z.literal('reply'), id: RequestId, ok: z.literal(false), error: ReplyErrorSchema }),
]);

export const WorkerMessageSchema = z.discriminatedUnion('type', [
  ReplySchema,
  /** Records announced in batches (at most every ANNOUNCE_BATCH records or ANNOUNCE_INTERVAL_MS, and at the pass end): what arrived, never data. */
  z.object({
    type: z.literal('records'),
    pass: Extent,
    records: z.array(
      z.object({
        name: z.string(),
        dtype: DTypeSchema,
        shape: z.array(Extent),
        byteLength: Extent,
      }),
    ),
  }),
  /** Records the C recorder took, as its log (record-log.ts), base64: announced like 'records'. */
  z.object({ type: z.literal('recordLog'), pass: Extent, log: z.string() }),
  /** The worker itself failed (an exception outside any request). */
  z.object({ type: z.literal('fatal'), message: z.string() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>;
export type RecordsMessage = Extract<WorkerMessage, { type: 'records' }>;

/** Announcements are flushed when this many are pending... */
export const ANNOUNCE_BATCH = 64;
/** ...or when the oldest pending one is this old (checked as records arrive), and at every pass end. */
export const ANNOUNCE_INTERVAL_MS = 20;

/** workerData of the engine worker: where its messages go. */
export const WorkerDataSchema = z.object({
  /** A file descriptor to write JSON lines to ('process' isolation), or null for postMessage. */
  messageFd: z.number().int().nonnegative().nullable(),
});
export type WorkerData = z.infer<typeof WorkerDataSchema>;

export { HOST_PROCESS_MESSAGE_FD } from './engine-host-fd.ts';

// Names and message shapes shared by the Electron main process and the preload bridge. IPC
// carries the same envelopes as serve mode's WebSocket: {method, request} in, an outcome
// ({ok, response} or {ok, error}) out, InspectorEvents pushed.
import { z } from 'zod';
import { CallErrorSchema, InspectorMethodSchema } from './inspector-api.ts';

export const IPC_CHANNELS = {
  /** invoke: renderer -> main, one call. */
  call: 'inspector:call',
  /** send: main -> renderer, one InspectorEvent. */
  event: 'inspector:event',
} as const;

/** What the renderer may invoke: nothing but a known method and its (still unchecked) request. */
export const IpcCallSchema = z.strictObject({ method: InspectorMethodSchema, request: z.unknown() });
export type IpcCall = z.infer<typeof IpcCallSchema>;

/** What main answers: the outcome of dispatchCall. */
export const IpcOutcomeSchema = z.union([
  z.strictObject({ ok: z.literal(true), response: z.unknown() }),
  z.strictObject({ ok: z.literal(false), error: CallErrorSchema }),
]);
export type IpcOutcome = z.infer<typeof IpcOutcomeSchema>;

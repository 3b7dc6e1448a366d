// Preload: exposes exactly one object to the sandboxed renderer, `window.traceInspector`, with
// `call` and `subscribe` (the InspectorTransport shape) over IPC, and nothing else — no
// ipcRenderer, no Node. Every reply and every event from main is parsed with the API's zod
// schemas before the renderer sees it.
//
// A failed call rejects with a plain `{ name: 'InspectorCallError', code, message }` object:
// contextBridge copies an Error's message but drops its other properties, so an Error would lose
// the stable `code`. The renderer's IPC client can rebuild an InspectorCallError from it.
import { contextBridge, ipcRenderer } from 'electron';
import { IPC_CHANNELS, IpcOutcomeSchema } from '../protocol/ipc-channels.ts';
import {
  INSPECTOR_METHODS,
  InspectorEventSchema,
  InspectorMethodSchema,
  type CallError,
  type InspectorEvent,
  type InspectorMethod,
  type InspectorTransport,
  type MethodRequest,
  type MethodResponse,
} from '../protocol/inspector-api.ts';

interface BridgeCallError extends CallError {
  name: 'InspectorCallError';
}

function failure(code: string, message: string): BridgeCallError {
  return { name: 'InspectorCallError', code, message };
}

const listeners = new Set<(event: InspectorEvent) => void>();

ipcRenderer.on(IPC_CHANNELS.event, (_event, raw: unknown) => {
  const parsed = InspectorEventSchema.safeParse(raw);
  if (!parsed.success) {
    console.error(`trace-inspector: dropped an event that does not match the API: ${parsed.error.message}`);
    return;
  }
  for (const listener of listeners) {
    try {
      listener(parsed.data);
    } catch (error) {
      // One listener's bug must not starve the others.
      console.error('trace-inspector: an event listener failed', error);
    }
  }
});

async function invoke(method: unknown, request: unknown): Promise<unknown> {
  const name = InspectorMethodSchema.safeParse(method);
  if (!name.success) throw failure('unknown_method', `unknown method ${JSON.stringify(method)}`);
  const raw: unknown = await ipcRenderer.invoke(IPC_CHANNELS.call, { method: name.data, request });
  const outcome = IpcOutcomeSchema.safeParse(raw);
  if (!outcome.success) throw failure('bad_reply', `${name.data}: the reply from the main process is malformed`);
  if (!outcome.data.ok) throw failure(outcome.data.error.code, outcome.data.error.message);
  const response = INSPECTOR_METHODS[name.data].response.safeParse(outcome.data.response);
  if (!response.success) throw failure('invalid_response', `${name.data}: the response does not match the API: ${response.error.message}`);
  return response.data;
}

const bridge: InspectorTransport = {
  // The response was parsed with this method's own response schema just above.
  call: <M extends InspectorMethod>(method: M, request: MethodRequest<M>) => invoke(method, request) as Promise<MethodResponse<M>>,
  subscribe(listener: (event: InspectorEvent) => void): () => void {
    if (typeof listener !== 'function') throw failure('bad_listener', 'subscribe expects a function');
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  },
};

contextBridge.exposeInMainWorld('traceInspector', { call: bridge.call, subscribe: bridge.subscribe });

// The Electron host: the preload's `window.traceInspector`. contextBridge copies only plain data,
// so a failed call arrives as a plain { name, code, message } object rather than an Error; this
// adapter turns it back into an InspectorCallError so failures read the same on both hosts.
import {
  CallErrorSchema,
  InspectorCallError,
  type InspectorEvent,
  type InspectorMethod,
  type InspectorTransport,
  type MethodRequest,
  type MethodResponse,
} from '../../../protocol/inspector-api.ts';

function asCallError(method: InspectorMethod, error: unknown): Error {
  if (error instanceof InspectorCallError) return error;
  const plain = CallErrorSchema.safeParse(error);
  if (plain.success) return new InspectorCallError(plain.data.code, plain.data.message);
  if (error instanceof Error) return new InspectorCallError('ipc_error', `${method}: ${error.message}`);
  return new InspectorCallError('ipc_error', `${method}: ${String(error)}`);
}

export function preloadTransport(bridge: InspectorTransport): InspectorTransport {
  return {
    async call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>> {
      try {
        return await bridge.call(method, request);
      } catch (error) {
        throw asCallError(method, error);
      }
    },
    subscribe(listener: (event: InspectorEvent) => void): () => void {
      return bridge.subscribe(listener);
    },
  };
}

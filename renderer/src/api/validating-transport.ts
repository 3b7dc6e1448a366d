// Every request is checked before it leaves (a renderer bug is reported as such, not as a core
// failure). Replies and events are validated once, where they are received: serve mode's socket
// arrives here, so validatingTransport checks every response against its method's schema and
// every event against the event schema before anything reaches the store; the Electron preload
// already parsed them with the same schemas as they entered the renderer, so that host only needs
// requestCheckingTransport.
import {
  INSPECTOR_METHODS,
  InspectorCallError,
  InspectorEventSchema,
  type InspectorEvent,
  type InspectorMethod,
  type InspectorTransport,
  type MethodRequest,
  type MethodResponse,
} from '../../../protocol/inspector-api.ts';
import type { ZodError } from 'zod';

function describeIssues(error: ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** Checks each request against its method's schema before it leaves; replies pass as received. */
export function requestCheckingTransport(inner: InspectorTransport): InspectorTransport {
  return {
    call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>> {
      const checkedRequest = INSPECTOR_METHODS[method].request.safeParse(request);
      if (!checkedRequest.success) {
        return Promise.reject(new InspectorCallError('invalid_request', `${method}: the request is invalid — ${describeIssues(checkedRequest.error)}`));
      }
      return inner.call(method, request);
    },
    subscribe: (listener: (event: InspectorEvent) => void): (() => void) => inner.subscribe(listener),
  };
}

/** Requests checked as above, and every response and event validated as it arrives. */
export function validatingTransport(inner: InspectorTransport, onInvalidEvent: (message: string) => void): InspectorTransport {
  const checked = requestCheckingTransport(inner);
  return {
    async call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>> {
      const raw: unknown = await checked.call(method, request);
      const response = INSPECTOR_METHODS[method].response.safeParse(raw);
      if (!response.success) {
        throw new InspectorCallError('invalid_response', `${method}: the core's response does not match the API — ${describeIssues(response.error)}`);
      }
      return response.data as MethodResponse<M>;
    },
    subscribe(listener: (event: InspectorEvent) => void): () => void {
      return inner.subscribe((event: unknown) => {
        const parsed = InspectorEventSchema.safeParse(event);
        if (parsed.success) listener(parsed.data);
        else onInvalidEvent(`an event from the core does not match the API — ${describeIssues(parsed.error)}`);
      });
    },
  };
}

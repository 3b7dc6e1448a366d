// Neither host is trusted blindly: every request is checked before it leaves (a renderer bug is
// reported as such, not as a core failure), every response against its method's schema, and
// every event against the event schema, before anything reaches the store.
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

export function validatingTransport(inner: InspectorTransport, onInvalidEvent: (message: string) => void): InspectorTransport {
  return {
    async call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>> {
      const schemas = INSPECTOR_METHODS[method];
      const checkedRequest = schemas.request.safeParse(request);
      if (!checkedRequest.success) {
        throw new InspectorCallError('invalid_request', `${method}: the request is invalid — ${describeIssues(checkedRequest.error)}`);
      }
      const raw: unknown = await inner.call(method, request);
      const checked = schemas.response.safeParse(raw);
      if (!checked.success) {
        throw new InspectorCallError('invalid_response', `${method}: the core's response does not match the API — ${describeIssues(checked.error)}`);
      }
      return checked.data as MethodResponse<M>;
    },
    subscribe(listener: (event: InspectorEvent) => void): () => void {
      return inner.subscribe((event: unknown) => {
        const checked = InspectorEventSchema.safeParse(event);
        if (checked.success) listener(checked.data);
        else onInvalidEvent(`an event from the core does not match the API — ${describeIssues(checked.error)}`);
      });
    },
  };
}

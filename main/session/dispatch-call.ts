// The one entry point both hosts call: validates the method name and the request against
// INSPECTOR_METHODS, runs the handler, and validates the response too (the core must never send
// what the renderer's schema rejects). Never throws: every failure becomes { ok: false, error }
// with a stable code and a message naming the field at fault.
import type { z } from 'zod';
import { INSPECTOR_METHODS, InspectorMethodSchema, type CallError, type InspectorHandlers } from '../../protocol/inspector-api.ts';
import { CALL_CODES, asCallError } from './session-errors.ts';

export type DispatchResult = { ok: true; response: unknown } | { ok: false; error: CallError };

/** "request.window.row0: expected a number", for the first few issues. */
function describeIssues(root: string, issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 3).map((issue) => {
    const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
    return `${root}${path}: ${issue.message}`;
  });
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  return `${shown.join('; ')}${more}`;
}

/** A handler seen through the wire: the request has been parsed against its schema. */
type WireHandler = (request: unknown) => Promise<unknown>;

export async function dispatchCall(handlers: InspectorHandlers, method: string, rawRequest: unknown): Promise<DispatchResult> {
  const name = InspectorMethodSchema.safeParse(method);
  if (!name.success) {
    const shown = typeof method === 'string' ? JSON.stringify(method.slice(0, 100)) : typeof method;
    return { ok: false, error: { code: CALL_CODES.request, message: `method: unknown method ${shown}` } };
  }
  const schemas = INSPECTOR_METHODS[name.data];
  const request = schemas.request.safeParse(rawRequest);
  if (!request.success) {
    return { ok: false, error: { code: CALL_CODES.request, message: `${name.data}: ${describeIssues('request', request.error.issues)}` } };
  }
  let response: unknown;
  try {
    // Indexing the handlers by a runtime method name loses the pairing of request and response
    // types; the schemas above and below restore both guarantees at run time.
    response = await (handlers[name.data] as WireHandler)(request.data);
  } catch (error) {
    const failure = asCallError(error);
    return { ok: false, error: { code: failure.code, message: failure.message } };
  }
  const checked = schemas.response.safeParse(response);
  if (!checked.success) {
    return {
      ok: false,
      error: { code: CALL_CODES.response, message: `${name.data}: the core produced an invalid response (${describeIssues('response', checked.error.issues)})` },
    };
  }
  return { ok: true, response: checked.data };
}

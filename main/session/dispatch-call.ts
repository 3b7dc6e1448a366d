// The one entry point both hosts call (runCall): validates the method name and the request
// against INSPECTOR_METHODS and runs the handler. Never throws: every failure becomes
// { ok: false, error } with a stable code and a message naming the field at fault. A reply is
// validated once, where it is received: on the Electron path by the preload as it enters the
// renderer, in serve mode by the page's validatingTransport after the network hop. Validating it
// again before it leaves would cost a second parse of every row batch on the thread that serves
// the socket and catch nothing the receiver does not. dispatchCall (runCall plus the response
// check) is for in-process callers with no receiver of their own: the session tests, which use
// it to prove every handler's response matches the API.
import type { z } from 'zod';
import { INSPECTOR_METHODS, InspectorMethodSchema, type CallError, type InspectorHandlers, type InspectorMethod } from '../../protocol/inspector-api.ts';
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

/** The method's name as the API spells it (null when unknown) and the call's outcome. */
async function run(handlers: InspectorHandlers, method: string, rawRequest: unknown): Promise<{ name: InspectorMethod | null; result: DispatchResult }> {
  const name = InspectorMethodSchema.safeParse(method);
  if (!name.success) {
    const shown = typeof method === 'string' ? JSON.stringify(method.slice(0, 100)) : typeof method;
    return { name: null, result: { ok: false, error: { code: CALL_CODES.request, message: `method: unknown method ${shown}` } } };
  }
  const request = INSPECTOR_METHODS[name.data].request.safeParse(rawRequest);
  if (!request.success) {
    return {
      name: name.data,
      result: { ok: false, error: { code: CALL_CODES.request, message: `${name.data}: ${describeIssues('request', request.error.issues)}` } },
    };
  }
  try {
    // Indexing the handlers by a runtime method name loses the pairing of request and response
    // types; the request schema above restores it at run time, the receiver's response schema after.
    return { name: name.data, result: { ok: true, response: await (handlers[name.data] as WireHandler)(request.data) } };
  } catch (error) {
    const failure = asCallError(error);
    return { name: name.data, result: { ok: false, error: { code: failure.code, message: failure.message } } };
  }
}

/** Checks the method and the request, runs the handler; the response is the handler's. */
export async function runCall(handlers: InspectorHandlers, method: string, rawRequest: unknown): Promise<DispatchResult> {
  return (await run(handlers, method, rawRequest)).result;
}

/** runCall, then the response checked against its method's schema (never sent if it fails). */
export async function dispatchCall(handlers: InspectorHandlers, method: string, rawRequest: unknown): Promise<DispatchResult> {
  const { name, result } = await run(handlers, method, rawRequest);
  if (name === null || !result.ok) return result;
  const checked = INSPECTOR_METHODS[name].response.safeParse(result.response);
  if (!checked.success) {
    return {
      ok: false,
      error: { code: CALL_CODES.response, message: `${name}: the core produced an invalid response (${describeIssues('response', checked.error.issues)})` },
    };
  }
  return { ok: true, response: checked.data };
}

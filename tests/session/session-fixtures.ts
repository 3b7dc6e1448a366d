// Helpers for the session tests: a session with its work folder in a temp dir, and `call`,
// which goes through dispatchCall exactly as both hosts do (schemas checked both ways).
import { join } from 'node:path';
import { InspectorCallError, type InspectorEvent, type InspectorMethod, type MethodRequest, type MethodResponse } from '../../protocol/inspector-api.ts';
import { dispatchCall, InspectorSession } from '../../main/session/inspector-session.ts';
import type { JudgePoolOptions } from '../../main/session/judge-pool.ts';
import { tempDirTracker } from '../helpers/paths.ts';

export const { tempDir, removeTempDirs } = tempDirTracker('session');

export interface TestSession {
  session: InspectorSession;
  events: InspectorEvent[];
  workDir: string;
  call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>>;
}

export function openSession(label: string, options: { recentFile?: string | null; passTimeoutMs?: number; judge?: JudgePoolOptions } = {}): TestSession {
  const root = tempDir(label);
  const workDir = join(root, 'work');
  const session = InspectorSession.create({
    workDir,
    recentFile: options.recentFile === undefined ? join(root, 'recent.json') : options.recentFile,
    ...(options.passTimeoutMs !== undefined ? { passTimeoutMs: options.passTimeoutMs } : {}),
    ...(options.judge !== undefined ? { judge: options.judge } : {}),
  });
  const events: InspectorEvent[] = [];
  session.subscribe((event) => events.push(event));
  return {
    session,
    events,
    workDir,
    async call(method, request) {
      const result = await dispatchCall(session.handlers, method, request);
      if (!result.ok) throw new InspectorCallError(result.error.code, result.error.message);
      return result.response as MethodResponse<typeof method>;
    },
  };
}

/** The rejection of a call, for asserting on its code and message. */
export async function failureOf(promise: Promise<unknown>): Promise<InspectorCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InspectorCallError) return error;
    throw error;
  }
  throw new Error('expected the call to be rejected');
}

// Every call the renderer makes goes through here: a failure is recorded in the error list under
// the action the user took, and the caller gets null instead of an exception.
import type { InspectorMethod, MethodRequest, MethodResponse } from '../../../../protocol/inspector-api.ts';
import { api } from '../../api/inspector-client.ts';
import { errorMessage, pushLocalError } from './error-actions.ts';

export async function attempt<M extends InspectorMethod>(action: string, method: M, request: MethodRequest<M>): Promise<MethodResponse<M> | null> {
  try {
    return await api.call(method, request);
  } catch (error) {
    pushLocalError(action, errorMessage(error));
    return null;
  }
}

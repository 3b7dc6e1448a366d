// Components fetch what they draw. This hook runs one API call per distinct request (plus a
// version that says "the data behind it changed"), drops answers that arrive after the request
// moved on, and turns a failure into an inline message instead of an exception.
import { useEffect, useState } from 'react';
import type { InspectorMethod, MethodRequest, MethodResponse } from '../../../protocol/inspector-api.ts';
import { api } from '../api/inspector-client.ts';
import { errorMessage } from '../store/actions/error-actions.ts';

export interface QueryState<T> {
  data: T | null;
  loading: boolean;
  error: string | null;
}

export function useApiQuery<M extends InspectorMethod>(
  method: M,
  request: MethodRequest<M> | null,
  version: number | string = 0,
): QueryState<MethodResponse<M>> {
  const key = request === null ? null : `${method}|${version}|${JSON.stringify(request)}`;
  const [state, setState] = useState<QueryState<MethodResponse<M>> & { key: string | null }>({ data: null, loading: false, error: null, key: null });

  useEffect(() => {
    if (key === null || request === null) {
      setState({ data: null, loading: false, error: null, key: null });
      return;
    }
    let current = true;
    // Keep showing the previous data while the next arrives: plots do not flash empty.
    setState((previous) => ({ ...previous, loading: true, error: null, key }));
    api.call(method, request).then(
      (data) => current && setState({ data, loading: false, error: null, key }),
      (error: unknown) => current && setState({ data: null, loading: false, error: `${method}: ${errorMessage(error)}`, key }),
    );
    return () => {
      current = false;
    };
    // The key captures method, request and version; `request` itself is a fresh object each render.
  }, [key]);

  return { data: state.data, loading: state.loading, error: state.error };
}

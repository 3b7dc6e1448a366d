// Whether the renderer is talking to the core right now (serve mode can lose its socket).
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectConnection } from '../../store/selectors.ts';

export function ConnectionBadge() {
  const { state, detail } = useInspectorStore(selectConnection);
  return (
    <span className={`connection connection-${state}`} title={detail || state} data-testid="connection-state" data-state={state}>
      {state === 'connected' ? '● core' : state === 'connecting' ? '○ connecting' : '○ reconnecting'}
    </span>
  );
}

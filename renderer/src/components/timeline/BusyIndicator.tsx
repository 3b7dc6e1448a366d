// What the core is doing right now, with the live record count of the pass being captured.
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectBusyLabel, selectProgress } from '../../store/selectors.ts';

export function BusyIndicator() {
  const busy = useInspectorStore(selectBusyLabel);
  const progress = useInspectorStore(selectProgress);
  if (busy === null) return <span className="busy-indicator idle" data-testid="busy-indicator" data-busy="false" />;
  return (
    <span className="busy-indicator" data-testid="busy-indicator" data-busy="true" role="status">
      <span className="spinner" aria-hidden="true" />
      {busy}
      {progress === null
        ? ''
        : ` · ${progress.kind} ${progress.pass}: ${progress.records} records${progress.lastBoundary === null ? '' : ` · ${progress.lastBoundary}`}`}
    </span>
  );
}

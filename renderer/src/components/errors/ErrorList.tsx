// What went wrong, specifically: the core's session errors (dismissed through the core) and this
// renderer's failed calls (dismissed here). The app keeps working either way.
import { dismissLocalError } from '../../store/actions/error-actions.ts';
import { dismissCoreError } from '../../store/actions/session-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectCoreErrors, selectLocalErrors } from '../../store/selectors.ts';

function time(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString();
}

export function ErrorList() {
  const coreErrors = useInspectorStore(selectCoreErrors);
  const localErrors = useInspectorStore(selectLocalErrors);
  const empty = coreErrors.length === 0 && localErrors.length === 0;
  return (
    <section className={`error-list${empty ? ' empty' : ''}`} data-testid="error-list" data-count={coreErrors.length + localErrors.length} aria-live="polite">
      {coreErrors.map((error) => (
        <div key={`core-${error.id}`} className="error-item" data-testid="error-item" data-source="core">
          <span className="error-time">{time(error.at)}</span>
          <span className="error-action">{error.action}</span>
          <span className="error-message">{error.message}</span>
          <button type="button" className="dismiss" onClick={() => void dismissCoreError(error.id)} aria-label="dismiss" data-testid="btn-dismiss-error">
            ×
          </button>
        </div>
      ))}
      {localErrors.map((error) => (
        <div key={`local-${error.id}`} className="error-item" data-testid="error-item" data-source="renderer">
          <span className="error-time">{time(error.at)}</span>
          <span className="error-action">{error.action}</span>
          <span className="error-message">{error.message}</span>
          <button type="button" className="dismiss" onClick={() => dismissLocalError(error.id)} aria-label="dismiss" data-testid="btn-dismiss-error">
            ×
          </button>
        </div>
      ))}
    </section>
  );
}

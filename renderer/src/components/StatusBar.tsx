// The bottom line: the first divergence (click or g to jump), the work folder, the help hint.
import { formatCount } from '../format/numbers.ts';
import { jumpToFirstDivergence } from '../store/actions/selection-actions.ts';
import { toggleShortcuts } from '../store/actions/ui-actions.ts';
import { useInspectorStore } from '../store/inspector-store.ts';
import { selectSnapshot } from '../store/selectors.ts';

export function StatusBar() {
  const snapshot = useInspectorStore(selectSnapshot);
  const first = snapshot?.firstDivergence ?? null;
  return (
    <footer className="status-bar">
      {first !== null ? (
        <button type="button" className="link-button first-divergence-link" onClick={jumpToFirstDivergence} data-testid="first-divergence-link">
          first divergence: pass {first.pass} {first.boundary} (g)
        </button>
      ) : (
        <span className="muted" data-testid="first-divergence-link">
          no divergence {snapshot !== null && snapshot.rowCount > 0 ? 'so far' : ''}
        </span>
      )}
      <span className="spacer" />
      {snapshot !== null ? (
        <span className="muted">
          {formatCount(snapshot.rowCount)} rows · work {snapshot.workDir}
        </span>
      ) : null}
      <button type="button" className="link-button" onClick={() => toggleShortcuts()}>
        ? shortcuts
      </button>
    </footer>
  );
}

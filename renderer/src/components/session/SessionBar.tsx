// The top bar: what is open, how to open something else, and how the run is judged (run options;
// for two bundles, the contracts and map files in force).
import { useShallow } from 'zustand/react/shallow';
import { openBundle, openDefault, openEngine, openRun } from '../../store/actions/session-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectBusyLabel, selectSessionBarFields } from '../../store/selectors.ts';
import { ComparisonSettings } from './ComparisonSettings.tsx';
import { ConnectionBadge } from './ConnectionBadge.tsx';
import { EngineSummary } from './EngineSummary.tsx';
import { OpenByPath } from './OpenByPath.tsx';
import { RunOptions } from './RunOptions.tsx';

export function SessionBar() {
  const { recent } = useInspectorStore(useShallow(selectSessionBarFields));
  const busy = useInspectorStore(selectBusyLabel) !== null;
  return (
    <header className="session-bar" data-testid="session-bar">
      <div className="session-row">
        <span className="app-name">trace-inspector</span>
        <EngineSummary />
        <ConnectionBadge />
      </div>
      <div className="session-row session-controls">
        <button
          type="button"
          onClick={() => void openDefault()}
          disabled={busy}
          data-testid="btn-open-default"
          title="The built reference engine and its default case"
        >
          Open default
        </button>
        <OpenByPath
          label="engine"
          placeholder="engine library (.so / .dylib / .dll)"
          recent={recent?.engines ?? []}
          disabled={busy}
          testId="open-engine"
          onOpen={openEngine}
        />
        <OpenByPath
          label="bundle"
          placeholder="reference bundle folder (any kind)"
          recent={recent?.bundles ?? []}
          disabled={busy}
          testId="open-bundle"
          onOpen={openBundle}
        />
        <OpenByPath
          label="run"
          placeholder="captured bundle folder to compare"
          recent={recent?.bundles ?? []}
          disabled={busy}
          testId="open-run"
          onOpen={openRun}
        />
        <RunOptions />
      </div>
      <ComparisonSettings />
    </header>
  );
}

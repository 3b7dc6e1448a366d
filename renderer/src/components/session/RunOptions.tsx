// How the next run is judged and executed: oracle, isolation mode, teacher forcing and engine
// options (set before prefill; the core refuses changes that need a reset and says so).
import { useEffect, useState, type FormEvent } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { pushLocalError } from '../../store/actions/error-actions.ts';
import { setEngineOptions, setIsolation, setOracle, setTeacherForce } from '../../store/actions/session-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectBusyLabel, selectSessionBarFields } from '../../store/selectors.ts';
import { formatEngineOptions, parseEngineOptions } from './engine-options-text.ts';

export function RunOptions() {
  const { oracle, isolation, teacherForce, engineOptions, bundle } = useInspectorStore(useShallow(selectSessionBarFields));
  const busy = useInspectorStore(selectBusyLabel) !== null;
  const current = engineOptions === null ? '' : formatEngineOptions(engineOptions);
  const [draft, setDraft] = useState(current);
  // A new snapshot (another window, a reset) replaces the draft only when the user is not editing.
  useEffect(() => setDraft(current), [current]);

  const applyOptions = (event: FormEvent): void => {
    event.preventDefault();
    const parsed = parseEngineOptions(draft);
    if (!parsed.ok) {
      pushLocalError('set engine options', `engine options: ${parsed.message} (write key=value pairs separated by commas)`);
      return;
    }
    void setEngineOptions(parsed.options);
  };

  return (
    <div className="run-options">
      <label title="Which oracle the verdicts are judged against">
        oracle
        <select
          value={oracle}
          disabled={busy}
          onChange={(event) => void setOracle(event.target.value === 'fp64' ? 'fp64' : 'reference')}
          data-testid="select-oracle"
        >
          <option value="reference">reference</option>
          <option value="fp64" disabled={bundle !== null && bundle.oracleDir === null}>
            {bundle === null || bundle.oracleKind === null || bundle.oracleKind === 'oracle-f64' ? 'fp64' : `oracle (${bundle.oracleKind})`}
          </option>
        </select>
      </label>
      <label title="process: the engine runs in an isolated host process (a crash costs the run, not the app); thread: in-process worker">
        isolation
        <select
          value={isolation}
          disabled={busy}
          onChange={(event) => void setIsolation(event.target.value === 'thread' ? 'thread' : 'process')}
          data-testid="select-isolation"
        >
          <option value="process">process</option>
          <option value="thread">thread</option>
        </select>
      </label>
      <label title="After a token diverges, force the reference's token so later passes stay comparable">
        <input
          type="checkbox"
          checked={teacherForce}
          disabled={busy}
          onChange={(event) => void setTeacherForce(event.target.checked)}
          data-testid="toggle-teacher-force"
        />
        teacher forcing
      </label>
      <form className="engine-options" onSubmit={applyOptions}>
        <input
          type="text"
          value={draft}
          placeholder="engine options: perturb.x=1, …"
          spellCheck={false}
          aria-label="engine options"
          data-testid="engine-options"
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit" disabled={busy || draft === current}>
          set
        </button>
      </form>
    </div>
  );
}

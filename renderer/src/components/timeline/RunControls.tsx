// The buttons that drive the engine. Each names its shortcut; all are disabled while anything
// runs (the core works one operation at a time).
import { useShallow } from 'zustand/react/shallow';
import { keysFor, type CommandName } from '../../keyboard/keymap.ts';
import { prefill, resetSession, runToEnd, runToFirstDivergence, step } from '../../store/actions/session-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectBusyLabel, selectTimelineFields } from '../../store/selectors.ts';

interface ControlSpec {
  label: string;
  command: CommandName;
  testId: string;
  run: () => Promise<boolean>;
  enabled: boolean;
}

export function RunControls() {
  const { timeline, nextPass, hasEngine, hasBundle } = useInspectorStore(useShallow(selectTimelineFields));
  const busy = useInspectorStore(selectBusyLabel) !== null;
  const ready = hasEngine && hasBundle && !busy;
  const prefillDone = timeline !== null && timeline.some((pass) => pass.kind === 'prefill' && pass.state !== 'pending');
  const canAdvance = ready && nextPass !== null;
  const controls: ControlSpec[] = [
    { label: 'Prefill', command: 'prefill', testId: 'btn-prefill', run: prefill, enabled: canAdvance && !prefillDone },
    { label: 'Step', command: 'step', testId: 'btn-step', run: step, enabled: canAdvance },
    { label: 'Run to end', command: 'runToEnd', testId: 'btn-run-end', run: runToEnd, enabled: canAdvance },
    { label: 'Run to first divergence', command: 'runToDivergence', testId: 'btn-run-divergence', run: runToFirstDivergence, enabled: canAdvance },
    { label: 'Reset', command: 'reset', testId: 'btn-reset', run: resetSession, enabled: hasBundle && !busy },
  ];
  return (
    <div className="run-controls">
      {controls.map((control) => (
        <button
          key={control.testId}
          type="button"
          disabled={!control.enabled}
          data-testid={control.testId}
          title={`${control.label} (${keysFor(control.command)})`}
          onClick={() => void control.run()}
        >
          {control.label}
          <kbd>{keysFor(control.command).split(' / ')[0]}</kbd>
        </button>
      ))}
    </div>
  );
}

// The pass the run is at (the last one that ran), always visible, plus the next one Step runs.
import { useShallow } from 'zustand/react/shallow';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectTimelineFields } from '../../store/selectors.ts';

export function PassIndicator() {
  const { timeline, nextPass, run } = useInspectorStore(useShallow(selectTimelineFields));
  const ran = timeline?.filter((pass) => pass.state !== 'pending') ?? [];
  const current = ran[ran.length - 1] ?? null;
  const next = nextPass === null ? null : (timeline?.find((pass) => pass.index === nextPass) ?? null);
  return (
    <div className="pass-indicator-box">
      <span className="pass-indicator" data-testid="pass-indicator" data-pass={current?.index ?? ''} data-kind={current?.kind ?? ''}>
        {current === null ? 'no pass run' : `${current.kind} ${current.index}`}
      </span>
      <span className="muted">
        {timeline === null ? '' : ` / ${timeline.length} passes`}
        {next === null ? '' : ` · next ${next.kind} ${next.index}`}
      </span>
      {run !== null && run.status !== 'idle' && run.status !== 'running' ? (
        <span className={`run-status run-status-${run.status}`} data-testid="run-status" title={run.message}>
          {run.status.replace('_', ' ')}
          {run.message !== '' && run.status !== 'completed' ? `: ${run.message}` : ''}
        </span>
      ) : null}
    </div>
  );
}

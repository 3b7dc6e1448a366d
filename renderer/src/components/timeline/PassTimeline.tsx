// The run: controls, where the run is, what is busy, and one chip per pass.
import { useShallow } from 'zustand/react/shallow';
import { togglePassFilter } from '../../store/actions/filter-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectFilters, selectTimelineFields } from '../../store/selectors.ts';
import { VerdictCounts } from '../table/VerdictCounts.tsx';
import { BusyIndicator } from './BusyIndicator.tsx';
import { PassChip } from './PassChip.tsx';
import { PassIndicator } from './PassIndicator.tsx';
import { RunControls } from './RunControls.tsx';

export function PassTimeline() {
  const { timeline, firstDivergence, counts } = useInspectorStore(useShallow(selectTimelineFields));
  const passFilter = useInspectorStore(selectFilters).pass;
  return (
    <section className="pass-timeline" data-testid="pass-timeline">
      <div className="timeline-row">
        <RunControls />
        <PassIndicator />
        <BusyIndicator />
        <span className="spacer" />
        {counts !== null ? <VerdictCounts counts={counts} /> : null}
      </div>
      <div className="pass-chips" role="list">
        {(timeline ?? []).map((pass) => (
          <PassChip
            key={pass.index}
            pass={pass}
            filtered={passFilter === pass.index}
            isFirstDivergence={firstDivergence?.pass === pass.index}
            onToggle={togglePassFilter}
          />
        ))}
      </div>
    </section>
  );
}

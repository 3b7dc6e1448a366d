// Verdict totals as coloured counters (the run's, or a pass's).
import type { WireVerdict } from '../../../../protocol/inspector-api.ts';
import { VERDICTS, VERDICT_LABEL, verdictClass } from '../../format/verdicts.ts';

export function VerdictCounts({ counts }: { counts: Partial<Record<WireVerdict, number>> }) {
  return (
    <span className="verdict-counts" data-testid="verdict-counts">
      {VERDICTS.map((verdict) => (
        <span
          key={verdict}
          className={`verdict-count ${verdictClass(verdict)}${(counts[verdict] ?? 0) === 0 ? ' zero' : ''}`}
          data-verdict={verdict}
          title={verdict}
        >
          {VERDICT_LABEL[verdict]} {counts[verdict] ?? 0}
        </span>
      ))}
    </span>
  );
}

// One pass of the timeline: kind, index, and a colour for its worst outcome. Clicking it shows
// only that pass's rows in the table (click again for all passes).
import { memo } from 'react';
import type { TimelinePass } from '../../../../protocol/inspector-api.ts';

function passTone(pass: TimelinePass): string {
  if (pass.state === 'pending') return 'pending';
  if (pass.state !== 'done') return 'broken';
  const count = (verdict: keyof TimelinePass['counts']): number => pass.counts[verdict] ?? 0;
  if (count('FAIL') > 0) return 'fail';
  if (count('REVIEW_REQUIRED') > 0) return 'review';
  if (count('GAP') > 0 || count('KNOWN_GAP') > 0) return 'gap';
  return 'pass';
}

function passTitle(pass: TimelinePass): string {
  const counts = Object.entries(pass.counts)
    .filter(([, value]) => value > 0)
    .map(([verdict, value]) => `${verdict} ${value}`)
    .join(', ');
  return `${pass.kind} ${pass.index}: ${pass.state}${counts === '' ? '' : ` — ${counts}`}`;
}

interface PassChipProps {
  pass: TimelinePass;
  filtered: boolean;
  isFirstDivergence: boolean;
  onToggle: (index: number) => void;
}

export const PassChip = memo(function PassChip({ pass, filtered, isFirstDivergence, onToggle }: PassChipProps) {
  return (
    <button
      type="button"
      className={`pass-chip tone-${passTone(pass)}${filtered ? ' filtered' : ''}${isFirstDivergence ? ' first-divergence' : ''}`}
      title={passTitle(pass)}
      data-testid="pass-chip"
      data-pass={pass.index}
      data-state={pass.state}
      onClick={() => onToggle(pass.index)}
    >
      {pass.kind === 'prefill' ? 'P' : 'D'}
      {pass.index}
    </button>
  );
});

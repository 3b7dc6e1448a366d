// The loop region as two sliders (seconds) plus an on/off switch; the waveform's drag-select
// sets the same region.
import type { LoopRegion } from './audio-player.ts';

interface LoopControlsProps {
  duration: number;
  region: LoopRegion | null;
  loop: boolean;
  onRegion: (region: LoopRegion | null) => void;
  onLoop: (loop: boolean) => void;
}

export function LoopControls({ duration, region, loop, onRegion, onLoop }: LoopControlsProps) {
  const start = region?.start ?? 0;
  const end = region?.end ?? duration;
  const step = duration > 0 ? Math.max(0.001, duration / 1000) : 0.001;
  const set = (nextStart: number, nextEnd: number): void => {
    if (nextEnd - nextStart <= step) return;
    onRegion(nextStart <= 0 && nextEnd >= duration ? null : { start: nextStart, end: nextEnd });
  };
  return (
    <div className="loop-controls">
      <label>
        <input type="checkbox" checked={loop} onChange={(event) => onLoop(event.target.checked)} data-testid="audio-loop" />
        loop
      </label>
      <input
        type="range"
        min={0}
        max={duration}
        step={step}
        value={start}
        aria-label="loop start"
        onChange={(event) => set(Number(event.target.value), end)}
        data-testid="loop-start"
      />
      <input
        type="range"
        min={0}
        max={duration}
        step={step}
        value={end}
        aria-label="loop end"
        onChange={(event) => set(start, Number(event.target.value))}
        data-testid="loop-end"
      />
      <span className="num">
        {start.toFixed(3)}–{end.toFixed(3)} s
      </span>
      {region !== null ? (
        <button type="button" className="link-button" onClick={() => onRegion(null)}>
          whole
        </button>
      ) : null}
    </div>
  );
}

// A blind ABX trial: A is the reference, B the native output, X secretly one of them. The score
// and its p-value (chance of doing as well by guessing) update after every answer.
import { useShallow } from 'zustand/react/shallow';
import { answerAbx, startAbx } from '../../store/actions/abx-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectAbx } from '../../store/selectors.ts';
import { abxPValue } from './binomial.ts';

interface AbxTrialProps {
  boundary: string;
  disabled: boolean;
  onPlay: (which: 'A' | 'B' | 'X') => void;
}

export function AbxTrial({ boundary, disabled, onPlay }: AbxTrialProps) {
  const abx = useInspectorStore(useShallow(selectAbx));
  const correct = abx.trials.filter((trial) => trial.x === trial.answer).length;
  const total = abx.trials.length;
  const pValue = abxPValue(correct, total);
  const last = abx.trials[abx.trials.length - 1];
  return (
    <div className="abx" data-testid="abx">
      <span className="panel-title">ABX</span>
      <button type="button" disabled={disabled} onClick={() => onPlay('A')} data-testid="abx-play-a" title="A = reference">
        ▶ A
      </button>
      <button type="button" disabled={disabled} onClick={() => onPlay('B')} data-testid="abx-play-b" title="B = native">
        ▶ B
      </button>
      <button type="button" disabled={disabled} onClick={() => onPlay('X')} data-testid="abx-play-x" title="X is A or B, chosen at random">
        ▶ X
      </button>
      <span className="muted">X is</span>
      <button type="button" disabled={disabled} onClick={() => answerAbx('A')} data-testid="abx-answer-a">
        A
      </button>
      <button type="button" disabled={disabled} onClick={() => answerAbx('B')} data-testid="abx-answer-b">
        B
      </button>
      <span className="abx-score" data-testid="abx-score" data-correct={correct} data-trials={total}>
        {correct}/{total} correct
      </span>
      <span className="muted" data-testid="abx-p-value" title="One-sided binomial: the chance of scoring at least this by guessing">
        p = {pValue < 0.001 ? pValue.toExponential(1) : pValue.toFixed(3)}
      </span>
      {last !== undefined ? <span className={last.x === last.answer ? 'abx-last ok' : 'abx-last wrong'}>last: X was {last.x}</span> : null}
      {total > 0 ? (
        <button type="button" className="link-button" onClick={() => startAbx(boundary)}>
          restart
        </button>
      ) : null}
    </div>
  );
}

// ABX trials: X is A (reference) or B (native) by a fair coin from the platform's CSPRNG, so the
// listener cannot learn a pattern; the score and its p-value follow every answer.
import { getState, setState } from '../inspector-store.ts';
import type { AbxSide } from '../slices/abx-slice.ts';

function coin(): AbxSide {
  const byte = new Uint8Array(1);
  crypto.getRandomValues(byte);
  return ((byte[0] ?? 0) & 1) === 0 ? 'A' : 'B';
}

/** Start over for a boundary (a new boundary's trials are not comparable with the old one's). */
export function startAbx(boundary: string): void {
  setState({ abx: { boundary, trials: [], currentX: coin() } });
}

export function answerAbx(answer: AbxSide): void {
  const { abx } = getState();
  setState({ abx: { ...abx, trials: [...abx.trials, { x: abx.currentX, answer }], currentX: coin() } });
}

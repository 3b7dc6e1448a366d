// The ABX score's significance: the one-sided probability of getting at least `correct` of
// `trials` right by guessing (p = 1/2 per trial).
export function abxPValue(correct: number, trials: number): number {
  if (trials === 0) return 1;
  // Sum of C(n, k) / 2^n for k >= correct, in log space so long sessions do not overflow.
  let logChoose = 0; // log C(n, 0)
  let total = 0;
  for (let k = 0; k <= trials; k += 1) {
    if (k > 0) logChoose += Math.log(trials - k + 1) - Math.log(k);
    if (k >= correct) total += Math.exp(logChoose - trials * Math.LN2);
  }
  return Math.min(1, total);
}

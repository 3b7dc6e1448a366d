// Counting the event loop's turns while a call runs: a call that yields between its slices lets
// a setImmediate ticker run once per yield, one that holds the thread throughout lets it run none.

/** Starts counting turns; stop() ends the count and returns it. */
export function countTurns(): { stop: () => number } {
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    turns += 1;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      ticking = false;
      return turns;
    },
  };
}

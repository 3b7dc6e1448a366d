// Deterministic pseudo-random numbers for test data (xorshift32), so failures reproduce.

/** The xorshift32 state sequence from `seed`: calls return successive 32-bit unsigned states. */
export function xorshift32(seed = 1): () => number {
  let state = (seed * 2654435761) >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

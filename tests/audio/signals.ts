// Deterministic synthetic signals for the audio tests.

/** mulberry32: a small seeded PRNG in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal samples (Box–Muller). */
export function gaussian(length: number, sigma: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i += 2) {
    const u = 1 - random();
    const v = random();
    const radius = Math.sqrt(-2 * Math.log(u)) * sigma;
    out[i] = radius * Math.cos(2 * Math.PI * v);
    if (i + 1 < length) out[i + 1] = radius * Math.sin(2 * Math.PI * v);
  }
  return out;
}

export function sine(length: number, amplitude: number, hz: number, sampleRate = 24000): Float32Array {
  return Float32Array.from({ length }, (_, i) => amplitude * Math.sin((2 * Math.PI * hz * i) / sampleRate));
}

/** A speech-like test signal: two partials plus a little noise. */
export function testSignal(length: number, seed = 1): Float32Array {
  const noise = gaussian(length, 0.05, seed);
  return Float32Array.from(
    { length },
    (_, i) => 0.4 * Math.sin((2 * Math.PI * 220 * i) / 24000) + 0.2 * Math.sin((2 * Math.PI * 1370 * i) / 24000) + noise[i]!,
  );
}

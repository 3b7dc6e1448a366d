// A small short-time Fourier transform for the spectrogram: Hann window, radix-2 FFT, dB
// magnitude. Sized so the result stays a few hundred frames (at most 400): cheap enough for the
// main thread — the speech case's 26 400 samples (203 frames) take ~10 ms, ~25 ms the first time.

function fftInPlace(real: Float64Array, imag: Float64Array): void {
  const n = real.length;
  for (let i = 1, j = 0; i < n; i += 1) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [real[i], real[j]] = [real[j] ?? 0, real[i] ?? 0];
      [imag[i], imag[j]] = [imag[j] ?? 0, imag[i] ?? 0];
    }
  }
  for (let size = 2; size <= n; size <<= 1) {
    const angle = (-2 * Math.PI) / size;
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < size / 2; k += 1) {
        const cos = Math.cos(angle * k);
        const sin = Math.sin(angle * k);
        const a = start + k;
        const b = a + size / 2;
        const re = (real[b] ?? 0) * cos - (imag[b] ?? 0) * sin;
        const im = (real[b] ?? 0) * sin + (imag[b] ?? 0) * cos;
        real[b] = (real[a] ?? 0) - re;
        imag[b] = (imag[a] ?? 0) - im;
        real[a] = (real[a] ?? 0) + re;
        imag[a] = (imag[a] ?? 0) + im;
      }
    }
  }
}

export interface Spectrogram {
  /** [frequency bin][frame] in dB (floor -120). */
  db: number[][];
  times: number[];
  frequencies: number[];
}

export function spectrogram(samples: Float32Array, sampleRate: number, windowSize = 512, maxFrames = 400): Spectrogram {
  const hop = Math.max(windowSize / 4, Math.ceil(Math.max(0, samples.length - windowSize) / maxFrames));
  const frames = samples.length < windowSize ? (samples.length > 0 ? 1 : 0) : Math.floor((samples.length - windowSize) / hop) + 1;
  const bins = windowSize / 2 + 1;
  const hann = Float64Array.from({ length: windowSize }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / windowSize));
  const db: number[][] = Array.from({ length: bins }, () => new Array<number>(frames).fill(-120));
  const real = new Float64Array(windowSize);
  const imag = new Float64Array(windowSize);
  for (let frame = 0; frame < frames; frame += 1) {
    const offset = frame * hop;
    for (let i = 0; i < windowSize; i += 1) {
      real[i] = (samples[offset + i] ?? 0) * (hann[i] ?? 0);
      imag[i] = 0;
    }
    fftInPlace(real, imag);
    for (let bin = 0; bin < bins; bin += 1) {
      const magnitude = Math.hypot(real[bin] ?? 0, imag[bin] ?? 0) / (windowSize / 4);
      const row = db[bin];
      if (row !== undefined) row[frame] = magnitude > 1e-6 ? 20 * Math.log10(magnitude) : -120;
    }
  }
  return {
    db,
    times: Array.from({ length: frames }, (_, frame) => (frame * hop + windowSize / 2) / sampleRate),
    frequencies: Array.from({ length: bins }, (_, bin) => (bin * sampleRate) / windowSize),
  };
}

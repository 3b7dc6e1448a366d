// Metrics on synthetic signals whose answers are known in closed form, each with a deliberate
// error of known size.
import { describe, expect, it } from 'vitest';
import { errorToSignalRatio, mrStftSizes, multiResolutionStft, nullTest, periodicHann, snrDb, stftMagnitudes } from '../../main/core/audio/audio-metrics.ts';
import { gaussian, sine, testSignal } from './signals.ts';

const N = 48000; // 2 s at 24 kHz

describe('identical signals', () => {
  const r = testSignal(N);
  const n = Float32Array.from(r);
  it('ESR 0, SNR Infinity, MR-STFT 0, null-test offset 0 and residual −Infinity', () => {
    expect(errorToSignalRatio(n, r)).toBe(0);
    expect(snrDb(n, r)).toBe(Infinity);
    const stft = multiResolutionStft(n, r);
    expect(stft.distance).toBe(0);
    expect(stft.resolutions.map((res) => res.fftSize)).toEqual([512, 1024, 2048]);
    expect(stft.resolutions.map((res) => res.hop)).toEqual([128, 256, 512]);
    const nulled = nullTest(n, r);
    expect(nulled.offset).toBe(0);
    expect(nulled.residualDbfs).toBe(-Infinity);
    expect(nulled.correlation).toBeCloseTo(1, 12);
  });
});

describe('a gain error of 0.5', () => {
  const r = testSignal(N);
  const n = r.map((x) => 0.5 * x);
  it('gives ESR exactly 0.25 and SNR 10·log10(4) dB', () => {
    expect(errorToSignalRatio(n, r)).toBe(0.25);
    expect(snrDb(n, r)).toBeCloseTo(10 * Math.log10(4), 12);
  });
  it('gives spectral convergence 0.5 and log-magnitude ≈ log 2 at every resolution', () => {
    const stft = multiResolutionStft(n, r);
    for (const res of stft.resolutions) {
      expect(res.spectralConvergence).toBeCloseTo(0.5, 10);
      expect(res.logMagnitude).toBeGreaterThan(Math.log(2) - 0.01);
      expect(res.logMagnitude).toBeLessThanOrEqual(Math.log(2) + 1e-9);
    }
    expect(stft.distance).toBeGreaterThan(0.5 + Math.log(2) - 0.01);
  });
  it('null test aligns at 0 (correlation 1) and reports the residual level of 0.5·r', () => {
    const nulled = nullTest(n, r);
    expect(nulled.offset).toBe(0);
    expect(nulled.correlation).toBeCloseTo(1, 12);
    let sum = 0;
    for (const x of r) sum += (0.5 * x) ** 2;
    expect(nulled.residualDbfs).toBeCloseTo(20 * Math.log10(Math.sqrt(sum / N)), 9);
  });
});

describe('added noise at a known level', () => {
  // Sine of amplitude A over a whole number of periods has power A²/2; Gaussian noise σ has power σ².
  const amplitude = 0.5;
  const r = sine(N, amplitude, 440);
  for (const expected of [40, 20, 6, 0]) {
    it(`SNR ${expected} dB is measured within 0.1 dB; ESR is its inverse`, () => {
      const sigma = Math.sqrt((amplitude * amplitude) / 2 / 10 ** (expected / 10));
      const noise = gaussian(N, sigma, 1000 + expected);
      const n = Float32Array.from(r, (x, i) => x + noise[i]!);
      const measured = snrDb(n, r);
      expect(Math.abs(measured - expected)).toBeLessThan(0.1);
      expect(errorToSignalRatio(n, r)).toBeCloseTo(10 ** (-measured / 10), 12);
    });
  }
  it('MR-STFT distance grows with the noise level', () => {
    const distances = [40, 20, 0].map((level) => {
      const sigma = Math.sqrt((amplitude * amplitude) / 2 / 10 ** (level / 10));
      const noise = gaussian(N, sigma, 7);
      return multiResolutionStft(
        Float32Array.from(r, (x, i) => x + noise[i]!),
        r,
      ).distance;
    });
    expect(distances[0]!).toBeGreaterThan(0);
    expect(distances[1]!).toBeGreaterThan(distances[0]!);
    expect(distances[2]!).toBeGreaterThan(distances[1]!);
  });
});

describe('a delayed copy', () => {
  const r = testSignal(12000, 3);
  for (const delay of [37, -120, 480, 1]) {
    it(`null test finds offset ${delay} with residual −Infinity`, () => {
      const n = new Float32Array(r.length);
      for (let i = 0; i < n.length; i++) {
        const source = i - delay;
        n[i] = source >= 0 && source < r.length ? r[source]! : 0;
      }
      const nulled = nullTest(n, r);
      expect(nulled.offset).toBe(delay);
      expect(nulled.residualDbfs).toBe(-Infinity);
      expect(nulled.overlap).toBe(r.length - Math.abs(delay));
      // Unaligned, the same copy is far from null (even one sample late: ~11 dB for this signal).
      expect(snrDb(n, r)).toBeLessThan(15);
    });
  }
  it('a delay beyond maxOffset is not found', () => {
    const n = new Float32Array(r.length);
    n.set(r.subarray(0, r.length - 600), 600);
    const nulled = nullTest(n, r, 480);
    expect(Math.abs(nulled.offset)).toBeLessThanOrEqual(480);
    expect(nulled.residualDbfs).toBeGreaterThan(-40);
    expect(nullTest(n, r, 600).offset).toBe(600);
  });
  it('a delayed copy with noise still aligns, and the residual is the noise level', () => {
    const noise = gaussian(r.length, 0.001, 9); // −60 dBFS RMS
    const n = new Float32Array(r.length);
    for (let i = 0; i < n.length; i++) n[i] = (i >= 25 ? r[i - 25]! : 0) + noise[i]!;
    const nulled = nullTest(n, r);
    expect(nulled.offset).toBe(25);
    expect(Math.abs(nulled.residualDbfs - -60)).toBeLessThan(0.2);
  });
});

describe('edge cases', () => {
  it('short signals use a smaller FFT size', () => {
    expect(mrStftSizes(48000)).toEqual([512, 1024, 2048]);
    expect(mrStftSizes(1500)).toEqual([512, 1024]);
    expect(mrStftSizes(300)).toEqual([256]);
    expect(mrStftSizes(3)).toEqual([4]);
    const r = testSignal(300);
    const stft = multiResolutionStft(Float32Array.from(r), r);
    expect(stft.resolutions.map((res) => [res.fftSize, res.hop, res.frames])).toEqual([[256, 64, 1]]);
    expect(stft.distance).toBe(0);
    expect(
      multiResolutionStft(
        r.map((x) => 0.5 * x),
        r,
      ).resolutions[0]!.spectralConvergence,
    ).toBeCloseTo(0.5, 10);
  });
  it('periodic Hann: w[0] = 0, w[N/2] = 1, w[N/4] = 0.5', () => {
    const w = periodicHann(512);
    expect(w[0]).toBe(0);
    expect(w[256]).toBe(1);
    expect(w[128]).toBeCloseTo(0.5, 15);
    expect(w[511]).toBeCloseTo(w[1]!, 15);
  });
  it('silence against silence is identical; noise against silence is not', () => {
    const zero = new Float32Array(1000);
    expect(errorToSignalRatio(zero, zero)).toBe(0);
    expect(snrDb(zero, zero)).toBe(Infinity);
    expect(nullTest(zero, zero).residualDbfs).toBe(-Infinity);
    const n = Float32Array.from(gaussian(1000, 0.1, 4));
    expect(errorToSignalRatio(n, zero)).toBe(Infinity);
    expect(snrDb(n, zero)).toBe(-Infinity);
  });
  it('rejects signals of different lengths where they must match', () => {
    const a = new Float32Array(10);
    const b = new Float32Array(11);
    expect(() => errorToSignalRatio(a, b)).toThrow(/10 samples.*11/);
    expect(() => snrDb(a, b)).toThrow(RangeError);
    expect(() => multiResolutionStft(a, b)).toThrow(RangeError);
    expect(() => nullTest(a, b, -1)).toThrow(RangeError);
  });
});

describe('MR-STFT frame by frame', () => {
  // The distance is summed one frame of both sides at a time (no whole spectrogram is held); its
  // sums must be those over the whole spectrograms, in the same order, to the last bit.
  it('equals the distance summed over the whole spectrograms, bit for bit', () => {
    const length = 5000; // frames that end past the signal, and a 2048 resolution of a few frames
    const r = testSignal(length);
    const noise = gaussian(length, 0.01, 3);
    const n = Float32Array.from(r, (x, i) => x + noise[i]!);
    const measured = multiResolutionStft(n, r);
    const wholeSums = mrStftSizes(length).map((size) => {
      const window = periodicHann(size);
      const nm = stftMagnitudes(n, size, size / 4, window);
      const rm = stftMagnitudes(r, size, size / 4, window);
      let diff2 = 0;
      let ref2 = 0;
      let logSum = 0;
      let count = 0;
      rm.forEach((b, f) => {
        const a = nm[f]!;
        b.forEach((rb, k) => {
          const na = a[k]!;
          diff2 += (na - rb) * (na - rb);
          ref2 += rb * rb;
          logSum += Math.abs(Math.log(na + 1e-7) - Math.log(rb + 1e-7));
          count++;
        });
      });
      return { frames: rm.length, spectralConvergence: Math.sqrt(diff2) / Math.sqrt(ref2), logMagnitude: logSum / count };
    });
    expect(measured.resolutions.map(({ frames, spectralConvergence, logMagnitude }) => ({ frames, spectralConvergence, logMagnitude }))).toEqual(wholeSums);
    expect(measured.resolutions.map((res) => res.frames)).toEqual([36, 16, 6]);
  });
});

// The audio panel's pure maths: the spectrogram (STFT), the ABX score's significance
// (binomial) and the PCM helpers (aligned residual, min/max pooling, region slices).
import { describe, expect, it } from 'vitest';
import { abxPValue } from '../../renderer/src/components/audio/binomial.ts';
import { alignedResidual, poolMinMax, sliceSeconds } from '../../renderer/src/components/audio/pcm-math.ts';
import { spectrogram } from '../../renderer/src/components/audio/stft.ts';

describe('spectrogram', () => {
  const RATE = 24_000;
  const WINDOW = 512;

  it('puts a bin-centred sine at its own frequency bin, about 0 dB for amplitude 1', () => {
    const bin = 32; // 1500 Hz at 24 kHz with a 512-point window
    const samples = Float32Array.from({ length: 4096 }, (_, i) => Math.sin((2 * Math.PI * bin * i) / WINDOW));
    const { db, frequencies, times } = spectrogram(samples, RATE, WINDOW);
    expect(frequencies[bin]).toBe(1500);
    expect(frequencies).toHaveLength(WINDOW / 2 + 1);
    expect(times.length).toBeGreaterThan(1);
    for (let frame = 0; frame < times.length; frame += 1) {
      const column = db.map((row) => row[frame] ?? -Infinity);
      const peak = column.indexOf(Math.max(...column));
      expect(peak).toBe(bin);
      // Hann's coherent gain is 1/2 and the magnitude is scaled by 4/N: a unit sine reads 0 dB.
      expect(column[bin]).toBeCloseTo(0, 1);
      // Two bins away the Hann leakage is gone (exactly zero for a bin-centred tone).
      expect(column[bin + 3]).toBeLessThan(-60);
    }
  });

  it('reads silence as the -120 dB floor and times each frame at its centre', () => {
    const { db, times } = spectrogram(new Float32Array(WINDOW * 2), RATE, WINDOW);
    expect(db.flat().every((value) => value === -120)).toBe(true);
    expect(times[0]).toBeCloseTo(WINDOW / 2 / RATE, 12);
  });

  it('keeps at most maxFrames frames however long the signal, and one frame for a short one', () => {
    expect(spectrogram(new Float32Array(RATE * 10), RATE, WINDOW, 400).times.length).toBeLessThanOrEqual(401);
    expect(spectrogram(new Float32Array(100), RATE, WINDOW).times).toHaveLength(1);
    expect(spectrogram(new Float32Array(0), RATE, WINDOW).times).toHaveLength(0);
  });
});

describe('abxPValue', () => {
  it('is the one-sided binomial tail at p = 1/2', () => {
    expect(abxPValue(0, 10)).toBe(1);
    expect(abxPValue(10, 10)).toBeCloseTo(1 / 1024, 15);
    // P(X >= 9 | n = 10) = (10 + 1) / 1024
    expect(abxPValue(9, 10)).toBeCloseTo(11 / 1024, 15);
    // P(X >= 8 | n = 12) = (495 + 220 + 66 + 12 + 1) / 4096
    expect(abxPValue(8, 12)).toBeCloseTo(794 / 4096, 15);
    expect(abxPValue(0, 0)).toBe(1);
  });

  it('stays finite and in [0, 1] for long sessions (log space, no overflow)', () => {
    const p = abxPValue(600, 1000);
    expect(Number.isFinite(p)).toBe(true);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-9);
    expect(abxPValue(500, 1000)).toBeGreaterThan(0.5);
    expect(abxPValue(500, 1000)).toBeLessThanOrEqual(1);
  });
});

describe('PCM helpers', () => {
  it('aligns native by the offset before subtracting the reference, over the overlap only', () => {
    const reference = Float32Array.from([1, 2, 3, 4]);
    const native = Float32Array.from([0, 1, 2, 3, 5]);
    expect([...alignedResidual(reference, native, 1)]).toEqual([0, 0, 0, 1]);
    expect([...alignedResidual(reference, native, 0)]).toEqual([-1, -1, -1, -1]);
    expect([...alignedResidual(reference, Float32Array.from([2, 3]), -1)]).toEqual([0, 0]);
    expect(alignedResidual(reference, native, 10)).toHaveLength(0);
  });

  it('pools min and max per bucket so a one-sample spike survives', () => {
    const samples = new Float32Array(1000);
    samples[437] = 0.9;
    samples[438] = -0.7;
    const pooled = poolMinMax(samples, 1000, 10);
    expect(pooled.time).toHaveLength(10);
    expect(pooled.time[4]).toBeCloseTo(0.4, 12);
    expect(pooled.max[4]).toBeCloseTo(0.9, 6);
    expect(pooled.min[4]).toBeCloseTo(-0.7, 6);
    expect(pooled.max.filter((value) => value !== 0)).toHaveLength(1);
  });

  it('slices a region in seconds as a view, clamped to the signal', () => {
    const samples = Float32Array.from({ length: 100 }, (_, i) => i);
    const region = sliceSeconds(samples, 10, { start: 2.05, end: 3.01 });
    // floor(2.05 s) = sample 20 up to ceil(3.01 s) = sample 31, exclusive
    expect([...region]).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
    expect(region.buffer).toBe(samples.buffer);
    expect(sliceSeconds(samples, 10, { start: -1, end: 99 })).toHaveLength(100);
    expect(sliceSeconds(samples, 10, null)).toBe(samples);
  });
});

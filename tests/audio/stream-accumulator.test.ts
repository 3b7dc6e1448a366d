// The stream's metrics carried forward record by record are measureAudio's over the whole stream,
// bit for bit, at every length: short streams (below every FFT size, at one exactly), records
// shorter and longer than the null test's offsets and the FFT sizes, a delay, a gain error,
// silence, identical sides and NaN samples.
import { describe, expect, it } from 'vitest';
import { measureAudio } from '../../main/core/audio/audio-bounds.ts';
import { nullTest } from '../../main/core/audio/audio-metrics.ts';
import { AudioStreamAccumulator } from '../../main/core/audio/stream-accumulator.ts';
import { gaussian, seededRandom, testSignal } from './signals.ts';

/** The stream cut into records of the given lengths, cycled: [native, reference] per record. */
function records(native: Float32Array, reference: Float32Array, lengths: readonly number[]): [Float32Array, Float32Array][] {
  const out: [Float32Array, Float32Array][] = [];
  for (let at = 0, k = 0; at < native.length; k++) {
    const length = Math.min(lengths[k % lengths.length] as number, native.length - at);
    out.push([native.slice(at, at + length), reference.slice(at, at + length)]);
    at += length;
  }
  return out;
}

/** Appends the records one by one; after each, the carried metrics must be measureAudio's of the prefix. */
function expectSameAtEveryRecord(native: Float32Array, reference: Float32Array, lengths: readonly number[]): number {
  const stream = new AudioStreamAccumulator();
  let length = 0;
  let checked = 0;
  for (const [n, r] of records(native, reference, lengths)) {
    stream.append(n, r);
    length += n.length;
    if (length === 0) continue;
    const whole = measureAudio(native.subarray(0, length), reference.subarray(0, length));
    // toEqual compares with Object.is: every metric the same double (NaN and ±Infinity included).
    expect(stream.metrics(), `after ${length} samples`).toEqual(whole);
    checked++;
  }
  return checked;
}

const noisy = (signal: Float32Array, sigma: number, seed: number): Float32Array => {
  const noise = gaussian(signal.length, sigma, seed);
  return Float32Array.from(signal, (value, i) => value + (noise[i] as number));
};

describe('an audio stream measured record by record', () => {
  it('equals measureAudio of the whole stream after every record, for records of every size', () => {
    const reference = testSignal(9000, 3);
    const native = noisy(reference, 0.01, 4);
    // 1,920-sample frames (a real model's), records shorter than the null test's 480 offsets, ones
    // around the FFT sizes, a single sample, and an empty record.
    expect(expectSameAtEveryRecord(native, reference, [1920])).toBe(5);
    expect(expectSameAtEveryRecord(native, reference, [100, 37, 0, 1, 611, 2048, 511, 513])).toBeGreaterThan(10);
    const random = seededRandom(11);
    const lengths = Array.from({ length: 40 }, () => Math.floor(random() * 700));
    expect(expectSameAtEveryRecord(native, reference, lengths)).toBeGreaterThan(20);
  });

  it('equals it on a delayed copy, a gain error, silence, identical sides and NaN samples', () => {
    const reference = testSignal(6000, 5);
    const delayed = new Float32Array(reference.length);
    delayed.set(reference.subarray(0, reference.length - 37), 37);
    expectSameAtEveryRecord(delayed, reference, [1920, 300]);
    expectSameAtEveryRecord(
      Float32Array.from(reference, (value) => value * 0.5),
      reference,
      [1000],
    );
    expectSameAtEveryRecord(new Float32Array(5000), new Float32Array(5000), [1920]);
    expectSameAtEveryRecord(noisy(new Float32Array(5000), 0.1, 8), new Float32Array(5000), [700]);
    expectSameAtEveryRecord(reference, reference, [1920]);
    const withNaN = Float32Array.from(reference);
    withNaN[2500] = Number.NaN;
    expectSameAtEveryRecord(withNaN, reference, [1920]);
  });

  it('searches offsets wider than the largest FFT frame as nullTest does (the tail keeps them)', () => {
    const reference = testSignal(12_000, 6);
    const delayed = new Float32Array(reference.length);
    delayed.set(reference.subarray(0, reference.length - 2500), 2500);
    const stream = new AudioStreamAccumulator(3000);
    let length = 0;
    for (const [n, r] of records(delayed, reference, [1920, 400])) {
      stream.append(n, r);
      length += n.length;
      const whole = nullTest(delayed.subarray(0, length), reference.subarray(0, length), 3000);
      const carried = stream.metrics();
      expect([carried.nullOffset, carried.nullResidualDbfs], `after ${length} samples`).toEqual([whole.offset, whole.residualDbfs]);
    }
    expect(stream.metrics().nullOffset).toBe(2500);
  });

  it('keeps only a bounded tail of the stream', () => {
    const reference = testSignal(200_000, 9);
    const stream = new AudioStreamAccumulator();
    for (const [n, r] of records(reference, reference, [1920])) stream.append(n, r);
    expect(stream.samples).toBe(200_000);
    expect(stream.keptSamples).toBeLessThanOrEqual(2 * 2048);
  });

  it('refuses sides of different lengths', () => {
    expect(() => new AudioStreamAccumulator().append(new Float32Array(3), new Float32Array(4))).toThrow(RangeError);
  });
});

// The objective audio metrics of a stream that grows record by record (a live run judged pass by
// pass), carried forward instead of measured again over every sample so far: each sample is
// folded in once, when its record is appended, and only the last few thousand samples are kept.
//
// The metrics are exactly measureAudio's over the whole stream (audio-bounds.ts, the same float64
// sums in the same order, bit for bit), because each of its sums runs over the samples in index
// order and a longer stream only extends the sums:
//   - ESR and SNR: Σ(n−r)² and Σr² over every sample;
//   - the MR-STFT: for each FFT size N (hop N/4) its frames that fit, each frame [f·hop, f·hop+N)
//     summed in frame order — a frame that fits now fits in every longer stream, and a stream of
//     at least N samples has exactly the frames that fit (shorter ones use one zero-padded frame,
//     measured afresh from the samples, all kept while the stream is shorter than the smallest N);
//   - the null test: for each offset d in ±DEFAULT_NULL_TEST_MAX_OFFSET, Σ n[i+d]·r[i], Σ n[i+d]²,
//     Σ r[i]² and Σ (n[i+d]−r[i])² over its overlap, which only grows at its end; the best offset
//     and its residual are then chosen as nullTest chooses them.
import { DEFAULT_NULL_TEST_MAX_OFFSET, MR_STFT_SIZES, mrStftSizes, multiResolutionStft, periodicHann, stftMagnitudes } from './audio-metrics.ts';
import type { AudioMetricValues } from '../compare/comparison-types.ts';

const LOG_EPS = 1e-7;

interface StftSums {
  readonly size: number;
  readonly hop: number;
  readonly window: Float64Array;
  /** Frames folded in: [0, frames · hop + size) is summed. */
  frames: number;
  diff2: number;
  ref2: number;
  logSum: number;
  count: number;
}

export class AudioStreamAccumulator {
  private length = 0;
  /** Samples [tailStart, length) of each side: what later frames and offsets still read. */
  private tailStart = 0;
  private tailN = new Float32Array(0);
  private tailR = new Float32Array(0);
  private error = 0;
  private energy = 0;
  private readonly stft: StftSums[] = MR_STFT_SIZES.map((size) => ({
    size,
    hop: size / 4,
    window: periodicHann(size),
    frames: 0,
    diff2: 0,
    ref2: 0,
    logSum: 0,
    count: 0,
  }));
  /** The null test's offsets in its order of trial (0, −1, 1, −2, 2, …). */
  private readonly offsets: number[];
  private readonly cross: Float64Array;
  private readonly nn: Float64Array;
  private readonly rr: Float64Array;
  private readonly residual: Float64Array;
  /** Per offset, the end of the overlap summed so far. */
  private readonly summedTo: Float64Array;

  constructor(private readonly maxOffset: number = DEFAULT_NULL_TEST_MAX_OFFSET) {
    this.offsets = [0];
    for (let k = 1; k <= maxOffset; k++) this.offsets.push(-k, k);
    const count = this.offsets.length;
    this.cross = new Float64Array(count);
    this.nn = new Float64Array(count);
    this.rr = new Float64Array(count);
    this.residual = new Float64Array(count);
    this.summedTo = new Float64Array(count);
  }

  /** Samples appended so far (each side). */
  get samples(): number {
    return this.length;
  }

  /** Samples kept (each side): the tail later frames and offsets still read, bounded whatever the stream's length. */
  get keptSamples(): number {
    return this.tailN.length;
  }

  /** Appends a record: its native and reference samples, of equal length. */
  append(native: Float32Array, reference: Float32Array): void {
    if (native.length !== reference.length) throw new RangeError(`audio stream: native has ${native.length} samples, reference has ${reference.length}`);
    const from = this.length;
    const to = from + native.length;
    const n = joined(this.tailN, native);
    const r = joined(this.tailR, reference);
    const base = this.tailStart;
    // ESR and SNR.
    for (let i = from; i < to; i++) {
      const ri = r[i - base] as number;
      const d = (n[i - base] as number) - ri;
      this.error += d * d;
      this.energy += ri * ri;
    }
    // The null test: each offset's overlap {i : max(0, −d) ≤ i < min(L, L − d)} grows at its end.
    this.offsets.forEach((d, j) => {
      const lo = Math.max(0, -d);
      const hi = Math.min(to, to - d);
      let cross = this.cross[j] as number;
      let nn = this.nn[j] as number;
      let rr = this.rr[j] as number;
      let residual = this.residual[j] as number;
      for (let i = Math.max(lo, this.summedTo[j] as number); i < hi; i++) {
        const a = n[i + d - base] as number;
        const b = r[i - base] as number;
        cross += a * b;
        nn += a * a;
        rr += b * b;
        const e = a - b;
        residual += e * e;
      }
      this.cross[j] = cross;
      this.nn[j] = nn;
      this.rr[j] = rr;
      this.residual[j] = residual;
      this.summedTo[j] = Math.max(this.summedTo[j] as number, hi);
    });
    // The MR-STFT frames that now fit.
    for (const sums of this.stft) {
      for (let start = sums.frames * sums.hop; start + sums.size <= to; start += sums.hop) {
        const [a] = stftMagnitudes(n.subarray(start - base, start - base + sums.size), sums.size, sums.hop, sums.window);
        const [b] = stftMagnitudes(r.subarray(start - base, start - base + sums.size), sums.size, sums.hop, sums.window);
        if (a === undefined || b === undefined) throw new Error('internal: a frame of the audio stream has no magnitudes');
        for (let k = 0; k < b.length; k++) {
          const na = a[k] as number;
          const rb = b[k] as number;
          sums.diff2 += (na - rb) * (na - rb);
          sums.ref2 += rb * rb;
          sums.logSum += Math.abs(Math.log(na + LOG_EPS) - Math.log(rb + LOG_EPS));
          sums.count++;
        }
        sums.frames++;
      }
    }
    // Keep what the next frames and the null test's offsets read: until the smallest FFT size
    // fits, every sample (a shorter stream's MR-STFT is measured afresh from them).
    const keepFrom = Math.min(Math.max(0, to - this.maxOffset), ...this.stft.map((sums) => sums.frames * sums.hop));
    this.tailN = n.slice(keepFrom - base);
    this.tailR = r.slice(keepFrom - base);
    this.tailStart = keepFrom;
    this.length = to;
  }

  /** measureAudio of the whole stream appended so far (which must not be empty). */
  metrics(): AudioMetricValues {
    const length = this.length;
    if (length === 0) throw new RangeError('audio stream: no samples to measure');
    const esr = this.error === 0 ? 0 : this.error / this.energy;
    const snrDb = this.error === 0 ? Infinity : 10 * Math.log10(this.energy / this.error);
    const null_ = this.nullTest();
    return { esr, snrDb, mrStft: this.mrStft(), nullResidualDbfs: null_.residualDbfs, nullOffset: null_.offset };
  }

  private mrStft(): number {
    const sizes = mrStftSizes(this.length);
    const smallest = MR_STFT_SIZES[0];
    if (this.length < smallest) {
      // Every sample is kept (tailStart is 0 until the smallest size fits).
      return multiResolutionStft(this.tailN.subarray(0, this.length), this.tailR.subarray(0, this.length)).distance;
    }
    let total = 0;
    for (const size of sizes) {
      const sums = this.stft.find((entry) => entry.size === size);
      if (sums === undefined) throw new Error(`internal: no sums for FFT size ${size}`);
      const spectralConvergence = sums.diff2 === 0 ? 0 : Math.sqrt(sums.diff2) / Math.sqrt(sums.ref2);
      total = total + spectralConvergence + sums.logSum / sums.count;
    }
    return total / sizes.length;
  }

  private nullTest(): { offset: number; residualDbfs: number } {
    const length = this.length;
    const minOverlap = Math.max(1, Math.ceil(length / 2));
    let best: { j: number; correlation: number } | null = null;
    this.offsets.forEach((d, j) => {
      const overlap = Math.min(length, length - d) - Math.max(0, -d);
      if (overlap <= 0 || (d !== 0 && overlap < minOverlap)) return;
      const nn = this.nn[j] as number;
      const rr = this.rr[j] as number;
      const correlation = nn === 0 || rr === 0 ? 0 : (this.cross[j] as number) / Math.sqrt(nn * rr);
      if (best === null || correlation > best.correlation) best = { j, correlation };
    });
    const chosen = best as { j: number; correlation: number } | null;
    if (chosen === null) return { offset: 0, residualDbfs: -Infinity };
    const d = this.offsets[chosen.j] as number;
    const overlap = Math.min(length, length - d) - Math.max(0, -d);
    const sum = this.residual[chosen.j] as number;
    return { offset: d, residualDbfs: sum === 0 ? -Infinity : 20 * Math.log10(Math.sqrt(sum / overlap)) };
  }
}

function joined(tail: Float32Array, next: Float32Array): Float32Array {
  if (tail.length === 0) return next;
  const both = new Float32Array(tail.length + next.length);
  both.set(tail, 0);
  both.set(next, tail.length);
  return both;
}

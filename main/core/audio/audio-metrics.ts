// Objective audio metrics comparing a native PCM stream `n` with its reference `r` (equal
// lengths, same sample rate). All sums are accumulated in float64. Pure functions.
import { fft } from './fft.ts';

function requireSameLength(n: Float32Array, r: Float32Array, what: string): void {
  if (n.length !== r.length) throw new RangeError(`${what}: native has ${n.length} samples, reference has ${r.length}`);
}

function energies(n: Float32Array, r: Float32Array): { error: number; reference: number } {
  let error = 0;
  let reference = 0;
  for (let i = 0; i < r.length; i++) {
    const ri = r[i] as number;
    const d = (n[i] as number) - ri;
    error += d * d;
    reference += ri * ri;
  }
  return { error, reference };
}

/**
 * Error-to-signal ratio: ESR = Σ(n−r)² / Σr².
 * 0 when identical; a gain error g (n = g·r) gives (g−1)². Σr² = 0: 0 if n = r, else Infinity.
 */
export function errorToSignalRatio(n: Float32Array, r: Float32Array): number {
  requireSameLength(n, r, 'ESR');
  const { error, reference } = energies(n, r);
  if (error === 0) return 0;
  return error / reference; // reference = 0 → Infinity
}

/**
 * Signal-to-noise ratio in dB: SNR = 10·log10(Σr² / Σ(n−r)²) = −10·log10(ESR).
 * Infinity when identical; −Infinity when r is all zero and n is not.
 */
export function snrDb(n: Float32Array, r: Float32Array): number {
  requireSameLength(n, r, 'SNR');
  const { error, reference } = energies(n, r);
  if (error === 0) return Infinity;
  return 10 * Math.log10(reference / error);
}

export const MR_STFT_SIZES = [512, 1024, 2048] as const;
const LOG_EPS = 1e-7;

export interface StftResolution {
  readonly fftSize: number;
  readonly hop: number;
  readonly frames: number;
  /** ‖|N|−|R|‖_F / ‖|R|‖_F over every frame and bin (0 when both are zero, Infinity when only R is). */
  readonly spectralConvergence: number;
  /** mean over frames and bins of |log(|N|+1e-7) − log(|R|+1e-7)|. */
  readonly logMagnitude: number;
}

export interface MrStftResult {
  /** Mean over resolutions of (spectralConvergence + logMagnitude). */
  readonly distance: number;
  readonly resolutions: readonly StftResolution[];
}

/**
 * The FFT sizes used for a signal of `length` samples: those of 512/1024/2048 that fit; when
 * none fits, the largest power of two ≤ length (at least 4; shorter signals are zero-padded).
 */
export function mrStftSizes(length: number): number[] {
  const fitting = MR_STFT_SIZES.filter((size) => size <= length);
  if (fitting.length > 0) return fitting;
  let size = 4;
  while (size * 2 <= length) size *= 2;
  return [size];
}

/** Periodic Hann window: w[t] = 0.5 − 0.5·cos(2πt/N), t = 0..N−1. */
export function periodicHann(size: number): Float64Array {
  const w = new Float64Array(size);
  for (let t = 0; t < size; t++) w[t] = 0.5 - 0.5 * Math.cos((2 * Math.PI * t) / size);
  return w;
}

/** Frames of an STFT of `length` samples (no centring; frames start at 0, hop, … while they fit, at least one). */
function stftFrameCount(length: number, size: number, hop: number): number {
  return length <= size ? 1 : 1 + Math.floor((length - size) / hop);
}

/**
 * One frame's |STFT| into `magnitudes` (size / 2 + 1 bins): samples [start, start + size) of `x`,
 * windowed, zero-padded past its end; `re` and `im` (size each) are the FFT's scratch.
 */
function stftFrameInto(x: Float32Array, start: number, window: Float64Array, re: Float64Array, im: Float64Array, magnitudes: Float64Array): void {
  const size = re.length;
  for (let t = 0; t < size; t++) {
    const i = start + t;
    re[t] = i < x.length ? (x[i] as number) * (window[t] as number) : 0;
    im[t] = 0;
  }
  fft(re, im);
  for (let k = 0; k < magnitudes.length; k++) magnitudes[k] = Math.hypot(re[k] as number, im[k] as number);
}

/** |STFT| frames (no centring; frames start at 0, hop, … while they fit, at least one, zero-padded). */
export function stftMagnitudes(x: Float32Array, size: number, hop: number, window: Float64Array): Float64Array[] {
  const frames = stftFrameCount(x.length, size, hop);
  const out: Float64Array[] = [];
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  for (let f = 0; f < frames; f++) {
    const mag = new Float64Array(size / 2 + 1);
    stftFrameInto(x, f * hop, window, re, im, mag);
    out.push(mag);
  }
  return out;
}

/**
 * Multi-resolution STFT distance. For each FFT size N (mrStftSizes), hop N/4, periodic Hann:
 *   SC  = ‖|N|−|R|‖_F / ‖|R|‖_F
 *   LM  = mean_{frame,bin} |log(|N|+1e-7) − log(|R|+1e-7)|
 * distance = mean over resolutions of (SC + LM). 0 when identical.
 *
 * Frame by frame, both sides at once, into buffers reused across frames: the sums are the same,
 * in the same order, as over the whole spectrograms, which are never held (the gate's audio line
 * of the 10 GiB scale trace, 393,600 samples: 13 MB of magnitudes per resolution, built whole
 * at the end of the run, when the gate process's memory peaks).
 */
export function multiResolutionStft(n: Float32Array, r: Float32Array): MrStftResult {
  requireSameLength(n, r, 'MR-STFT');
  const resolutions: StftResolution[] = [];
  for (const fftSize of mrStftSizes(r.length)) {
    const hop = fftSize / 4;
    const window = periodicHann(fftSize);
    const frames = stftFrameCount(r.length, fftSize, hop);
    const re = new Float64Array(fftSize);
    const im = new Float64Array(fftSize);
    const a = new Float64Array(fftSize / 2 + 1);
    const b = new Float64Array(fftSize / 2 + 1);
    let diff2 = 0;
    let ref2 = 0;
    let logSum = 0;
    let count = 0;
    for (let f = 0; f < frames; f++) {
      stftFrameInto(n, f * hop, window, re, im, a);
      stftFrameInto(r, f * hop, window, re, im, b);
      for (let k = 0; k < b.length; k++) {
        const na = a[k] as number;
        const rb = b[k] as number;
        diff2 += (na - rb) * (na - rb);
        ref2 += rb * rb;
        logSum += Math.abs(Math.log(na + LOG_EPS) - Math.log(rb + LOG_EPS));
        count++;
      }
    }
    const spectralConvergence = diff2 === 0 ? 0 : Math.sqrt(diff2) / Math.sqrt(ref2);
    resolutions.push({ fftSize, hop, frames, spectralConvergence, logMagnitude: logSum / count });
  }
  const distance = resolutions.reduce((sum, res) => sum + res.spectralConvergence + res.logMagnitude, 0) / resolutions.length;
  return { distance, resolutions };
}

export const DEFAULT_NULL_TEST_MAX_OFFSET = 480; // 20 ms at 24 kHz

export interface NullTestResult {
  /** d maximising the NCC: n[i+d] is aligned with r[i] (n = r delayed by D gives d = D). */
  readonly offset: number;
  /** Normalised cross-correlation at `offset` (0 when either side is silent over the overlap). */
  readonly correlation: number;
  /** Samples compared at `offset`. */
  readonly overlap: number;
  /** 20·log10(RMS(n[i+offset] − r[i])) over the overlap, dBFS (full scale = 1.0); −Infinity when zero. */
  readonly residualDbfs: number;
}

/**
 * Null test. For every d in [−maxOffset, +maxOffset] whose overlap {i : 0 ≤ i < |r|, 0 ≤ i+d < |n|}
 * holds at least half the shorter signal (d = 0 is always tried):
 *   NCC(d) = Σ n[i+d]·r[i] / sqrt(Σ n[i+d]² · Σ r[i]²)   (sums over the overlap)
 * The d with the largest NCC wins (ties: smallest |d|, then negative first); the residual is
 *   20·log10( sqrt( mean_i (n[i+d] − r[i])² ) )  dBFS.
 * Lengths may differ.
 */
export function nullTest(n: Float32Array, r: Float32Array, maxOffset: number = DEFAULT_NULL_TEST_MAX_OFFSET): NullTestResult {
  if (!Number.isInteger(maxOffset) || maxOffset < 0) throw new RangeError(`null test: maxOffset must be a non-negative integer, got ${maxOffset}`);
  const minOverlap = Math.max(1, Math.ceil(Math.min(n.length, r.length) / 2));
  let best: { offset: number; correlation: number } | null = null;
  const order: number[] = [0];
  for (let k = 1; k <= maxOffset; k++) order.push(-k, k);
  for (const d of order) {
    const lo = Math.max(0, -d);
    const hi = Math.min(r.length, n.length - d);
    const overlap = hi - lo;
    if (overlap <= 0 || (d !== 0 && overlap < minOverlap)) continue;
    let cross = 0;
    let nn = 0;
    let rr = 0;
    for (let i = lo; i < hi; i++) {
      const a = n[i + d] as number;
      const b = r[i] as number;
      cross += a * b;
      nn += a * a;
      rr += b * b;
    }
    const correlation = nn === 0 || rr === 0 ? 0 : cross / Math.sqrt(nn * rr);
    if (best === null || correlation > best.correlation) best = { offset: d, correlation };
  }
  if (best === null) return { offset: 0, correlation: 0, overlap: 0, residualDbfs: -Infinity };
  const d = best.offset;
  const lo = Math.max(0, -d);
  const hi = Math.min(r.length, n.length - d);
  let sum = 0;
  for (let i = lo; i < hi; i++) {
    const e = (n[i + d] as number) - (r[i] as number);
    sum += e * e;
  }
  const overlap = hi - lo;
  const residualDbfs = sum === 0 ? -Infinity : 20 * Math.log10(Math.sqrt(sum / overlap));
  return { offset: d, correlation: best.correlation, overlap, residualDbfs };
}

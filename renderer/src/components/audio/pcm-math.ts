// Small signal helpers for the audio panel: the aligned residual, min/max pooling for drawing.

/**
 * native − reference with native shifted by `offset` samples (native[i + offset] aligns with
 * reference[i]), over the overlap — the same null test the core's metrics use.
 */
export function alignedResidual(reference: Float32Array, native: Float32Array, offset: number): Float32Array<ArrayBuffer> {
  const start = Math.max(0, -offset);
  const end = Math.min(reference.length, native.length - offset);
  const residual = new Float32Array(Math.max(0, end - start));
  for (let i = start; i < end; i += 1) residual[i - start] = (native[i + offset] ?? 0) - (reference[i] ?? 0);
  return residual;
}

export interface PooledSignal {
  /** Seconds at each bucket's start. */
  time: number[];
  min: number[];
  max: number[];
}

/** Min/max per bucket so a click or a spike stays visible at any zoom. */
export function poolMinMax(samples: Float32Array, sampleRate: number, buckets: number): PooledSignal {
  const step = Math.max(1, Math.ceil(samples.length / buckets));
  const time: number[] = [];
  const min: number[] = [];
  const max: number[] = [];
  for (let start = 0; start < samples.length; start += step) {
    let low = Infinity;
    let high = -Infinity;
    const end = Math.min(samples.length, start + step);
    for (let i = start; i < end; i += 1) {
      const value = samples[i] ?? 0;
      if (value < low) low = value;
      if (value > high) high = value;
    }
    time.push(start / sampleRate);
    min.push(low);
    max.push(high);
  }
  return { time, min, max };
}

export function sliceSeconds(samples: Float32Array<ArrayBuffer>, sampleRate: number, region: { start: number; end: number } | null): Float32Array<ArrayBuffer> {
  if (region === null) return samples;
  // A view, not a copy: playback copies into its AudioBuffer and the spectrogram only reads.
  return samples.subarray(Math.max(0, Math.floor(region.start * sampleRate)), Math.min(samples.length, Math.ceil(region.end * sampleRate)));
}

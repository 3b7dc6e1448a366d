// The 1-D plot of a boundary: an element range of the flattened tensor, min/max pooled per
// bucket on each side and max |diff| per bucket, so a one-element spike survives any
// downsampling. A bucket holding a NaN reports NaN for that side (and for the diff when either
// side has one) instead of the range of its other values: a NaN must never vanish. Raw values
// (step 1) when the range fits maxPoints. A side without the boundary yields empty arrays (and
// so does absDiff), so the reference still plots before the engine ran.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE } from '../bundle/dtype.ts';
import type { SeriesRequest, SeriesSide, SeriesValue } from './view-values.ts';
import { boundarySides, where } from './boundary-sides.ts';
import { NAN, WindowValues } from './element-quantities.ts';
import { rowAlignedWindow, streamWindows } from './window-stream.ts';

/** Min / max per bucket of one side. */
class Envelope {
  readonly min: Float64Array;
  readonly max: Float64Array;
  readonly nan: Uint8Array;

  constructor(buckets: number) {
    this.min = new Float64Array(buckets).fill(Infinity);
    this.max = new Float64Array(buckets).fill(-Infinity);
    this.nan = new Uint8Array(buckets);
  }

  /** Per bucket; NaN where the bucket holds a NaN. */
  side(): SeriesSide {
    const min: number[] = [];
    const max: number[] = [];
    for (let b = 0; b < this.nan.length; b++) {
      min.push(this.nan[b] === 1 ? NaN : (this.min[b] as number));
      max.push(this.nan[b] === 1 ? NaN : (this.max[b] as number));
    }
    return { min, max };
  }
}

export async function series(native: TraceBundle | null, reference: TraceBundle, request: SeriesRequest): Promise<SeriesValue> {
  const { pass, boundary } = request;
  const sides = boundarySides(native, reference, pass, boundary);
  if (sides.native !== null && sides.reference !== null && !sides.paired) {
    throw new Error(`${where(pass, boundary)}: the series pairs elements of both sides, and ${sides.unpaired ?? 'they do not pair'}`);
  }
  const start = request.start ?? 0;
  const end = request.end ?? sides.elements;
  if (start > end || end > sides.elements) {
    throw new Error(`${where(pass, boundary)}: element range [${start}, ${end}) is not inside [0, ${sides.elements}) of shape [${sides.shape.join(', ')}]`);
  }
  const length = end - start;
  const step = length <= request.maxPoints ? 1 : Math.ceil(length / request.maxPoints);
  const buckets = Math.ceil(length / step);
  const hasNative = sides.native !== null;
  const hasReference = sides.reference !== null;
  const referenceEnvelope = new Envelope(hasReference ? buckets : 0);
  const nativeEnvelope = new Envelope(hasNative ? buckets : 0);
  const both = hasNative && hasReference;
  const diff = new Float64Array(both ? buckets : 0);
  const diffNan = new Uint8Array(both ? buckets : 0);

  const elementBytes = DTYPE_SIZE[sides.dtype];
  const windowElements = rowAlignedWindow(elementBytes, 0);
  const values = new WindowValues(sides.dtype, windowElements, { native: hasNative, reference: hasReference });
  const quantity = new Float64Array(windowElements);
  const flags = new Uint8Array(windowElements);

  const envelope = (env: Envelope, from: number, to: number, bucketOf: (i: number) => number): void => {
    for (let i = from; i < to; i++) {
      const b = bucketOf(i);
      if (((flags[i] as number) & NAN) !== 0) {
        env.nan[b] = 1;
        continue;
      }
      const v = quantity[i] as number;
      if (v < (env.min[b] as number)) env.min[b] = v;
      if (v > (env.max[b] as number)) env.max[b] = v;
    }
  };

  await streamWindows(
    hasNative ? native : null,
    hasReference ? reference : null,
    { pass, name: boundary, elementBytes, elements: sides.elements, windowElements },
    (window) => {
      const from = Math.max(start, window.start) - window.start;
      const to = Math.min(end, window.start + window.count) - window.start;
      if (from >= to) return;
      values.attach(window.native, window.reference);
      values.decode(from, to);
      const offset = window.start - start;
      const bucketOf = (i: number): number => Math.floor((offset + i) / step);
      if (hasReference) {
        values.quantity('reference', from, to, quantity, flags, false);
        envelope(referenceEnvelope, from, to, bucketOf);
      }
      if (hasNative) {
        values.quantity('native', from, to, quantity, flags, false);
        envelope(nativeEnvelope, from, to, bucketOf);
      }
      if (both) {
        values.quantity('abs_diff', from, to, quantity, flags);
        for (let i = from; i < to; i++) {
          const b = bucketOf(i);
          if (((flags[i] as number) & NAN) !== 0) diffNan[b] = 1;
          else if ((quantity[i] as number) > (diff[b] as number)) diff[b] = quantity[i] as number;
        }
      }
    },
  );

  const absDiff: number[] = [];
  for (let b = 0; b < diff.length; b++) absDiff.push(diffNan[b] === 1 ? NaN : (diff[b] as number));
  return { pass, boundary, start, end, step, reference: referenceEnvelope.side(), native: nativeEnvelope.side(), absDiff };
}

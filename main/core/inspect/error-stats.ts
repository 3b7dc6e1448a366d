// Error statistics of one boundary, in one streaming pass over both sides:
// - a histogram of log10 |native - reference| over finite pairs with a nonzero difference, on
//   fixed quarter-decade bins (bin k holds 10^(k/4) <= d < 10^((k+1)/4), as Math.log10 places
//   d), trimmed to the bins the data spans, so two boundaries' histograms line up edge for edge;
// - exactlyEqual: finite pairs with d = 0 (+0 against -0 included: equal values; the
//   special-values panel judges signs); nonFinitePairs: a NaN or an infinity on either side;
// - a scatter of |reference| against |diff| for finite pairs: a systematic sample (every
//   ceil(n / SAMPLE)-th element, reproducible) plus, always, the WORST worst elements.
// C64 follows the element conventions of element-quantities.ts (larger component).
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE } from '../bundle/dtype.ts';
import type { BoundaryRef, ErrorStatsValue } from './view-values.ts';
import { boundarySides, requirePaired } from './boundary-sides.ts';
import { INF, NAN, WindowValues } from './element-quantities.ts';
import { rowAlignedWindow, streamWindows } from './window-stream.ts';

/** Worst elements the scatter always keeps. */
export const WORST = 200;
/** Elements sampled systematically besides them (at most WORST + SAMPLE points in all). */
export const SAMPLE = 1800;
/** Quarter decades per decade. */
const BINS_PER_DECADE = 4;
/** Bin offset: doubles span 10^-324 .. 10^308, so k lies in [-1300, 1240). */
const BIN_OFFSET = 1300;
const BIN_COUNT = 2600;

/** The WORST largest differences seen, as a min-heap on d (a later element equal to the smallest kept does not displace it). */
class WorstHeap {
  readonly d = new Float64Array(WORST);
  readonly index = new Float64Array(WORST);
  readonly magnitude = new Float64Array(WORST);
  size = 0;

  offer(d: number, index: number, magnitude: number): void {
    if (this.size < WORST) {
      let at = this.size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if ((this.d[parent] as number) <= d) break;
        this.move(parent, at);
        at = parent;
      }
      this.set(at, d, index, magnitude);
      return;
    }
    if (d <= (this.d[0] as number)) return;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= WORST) break;
      const right = left + 1;
      const child = right < WORST && (this.d[right] as number) < (this.d[left] as number) ? right : left;
      if ((this.d[child] as number) >= d) break;
      this.move(child, at);
      at = child;
    }
    this.set(at, d, index, magnitude);
  }

  private move(from: number, to: number): void {
    this.set(to, this.d[from] as number, this.index[from] as number, this.magnitude[from] as number);
  }

  private set(at: number, d: number, index: number, magnitude: number): void {
    this.d[at] = d;
    this.index[at] = index;
    this.magnitude[at] = magnitude;
  }
}

export async function errorStats(native: TraceBundle | null, reference: TraceBundle, ref: BoundaryRef): Promise<ErrorStatsValue> {
  const sides = boundarySides(native, reference, ref.pass, ref.boundary);
  requirePaired(sides, 'the error statistics');
  const elementBytes = DTYPE_SIZE[sides.dtype];
  const windowElements = rowAlignedWindow(elementBytes, 0);
  const values = new WindowValues(sides.dtype, windowElements, { native: true, reference: true });
  const diff = new Float64Array(windowElements);
  const magnitude = new Float64Array(windowElements);
  const flags = new Uint8Array(windowElements);
  const referenceFlags = new Uint8Array(windowElements);

  const bins = new Float64Array(BIN_COUNT);
  let exactlyEqual = 0;
  let nonFinitePairs = 0;
  const worst = new WorstHeap();
  const stride = Math.max(1, Math.ceil(sides.elements / SAMPLE));
  const sample: { index: number; magnitude: number; d: number }[] = [];

  await streamWindows(
    native,
    reference,
    { pass: ref.pass, name: ref.boundary, elementBytes, elements: sides.elements, windowElements, priority: 'background' },
    (window) => {
      values.attach(window.native, window.reference);
      values.decode(0, window.count);
      values.quantity('abs_diff', 0, window.count, diff, flags);
      values.quantity('reference', 0, window.count, magnitude, referenceFlags, false);
      for (let i = 0; i < window.count; i++) {
        if (((flags[i] as number) & (NAN | INF)) !== 0) {
          nonFinitePairs += 1;
          continue;
        }
        const d = diff[i] as number;
        const flat = window.start + i;
        const m = Math.abs(magnitude[i] as number);
        if (d === 0) exactlyEqual += 1;
        else {
          const k = Math.floor(BINS_PER_DECADE * Math.log10(d)) + BIN_OFFSET;
          bins[k] = (bins[k] as number) + 1;
        }
        worst.offer(d, flat, m);
        if (flat % stride === 0) sample.push({ index: flat, magnitude: m, d });
      }
    },
  );

  // Trim the histogram to the bins the data spans.
  let low = 0;
  while (low < BIN_COUNT && bins[low] === 0) low += 1;
  let high = BIN_COUNT - 1;
  while (high >= low && bins[high] === 0) high -= 1;
  const edges: number[] = [];
  const counts: number[] = [];
  if (low <= high) {
    for (let k = low; k <= high + 1; k++) edges.push((k - BIN_OFFSET) / BINS_PER_DECADE);
    for (let k = low; k <= high; k++) counts.push(bins[k] as number);
  }

  const points = new Map<number, { magnitude: number; d: number }>();
  for (let w = 0; w < worst.size; w++) points.set(worst.index[w] as number, { magnitude: worst.magnitude[w] as number, d: worst.d[w] as number });
  for (const point of sample) points.set(point.index, point);
  const order = [...points.keys()].sort((a, b) => a - b);
  return {
    pass: ref.pass,
    boundary: ref.boundary,
    histogram: { edges, counts },
    exactlyEqual,
    nonFinitePairs,
    scatter: {
      magnitude: order.map((index) => (points.get(index) as { magnitude: number }).magnitude),
      absDiff: order.map((index) => (points.get(index) as { d: number }).d),
      flatIndex: order,
    },
  };
}

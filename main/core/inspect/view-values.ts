// What the inspect views return: plain values, with non-finite numbers as the numbers they are
// (NaN, ±Infinity). The wire format (protocol/inspector-api.ts) carries them as WireNumber
// strings; the session converts (main/session/view-wire.ts), so the core knows no wire format.
// The shapes match the wire schemas field for field; the session's conversion is type-checked
// against them, so a field added on one side and not the other fails `npm run typecheck`.
import type { MismatchClass, SideCensus } from '../compare/comparison-types.ts';

/** One boundary of one pass. */
export interface BoundaryRef {
  pass: number;
  boundary: string;
}

/** What a heatmap cell shows. */
export type HeatmapMetric = 'abs_diff' | 'ulp' | 'reference' | 'native';

/** Half-open window of the folded 2-D view (rows x cols: the last dimension is the columns). */
export interface ViewWindow {
  row0: number;
  row1: number;
  col0: number;
  col1: number;
}

export interface TensorViewRequest {
  pass: number;
  boundary: string;
  metric: HeatmapMetric;
  /** Default: the whole tensor. */
  window?: ViewWindow | undefined;
  maxRows: number;
  maxCols: number;
}

/** Row-major cells as base64 of little-endian floats (tensor-view-encoding.ts). */
export interface EncodedCells {
  format: 'f32' | 'f64';
  data: string;
}

/** Where each cell's max is, base64 of little-endian offsets or flat indices (tensor-view-encoding.ts). */
export interface EncodedArgmax {
  format: 'u8_offset' | 'u16_offset' | 'u32_offset' | 'f64_index';
  data: string;
}

export interface TensorViewValue {
  pass: number;
  boundary: string;
  metric: HeatmapMetric;
  dtype: string;
  shape: number[];
  folded: { rows: number; cols: number };
  window: ViewWindow;
  grid: { rows: number; cols: number; rowStep: number; colStep: number };
  values: EncodedCells;
  argmax: EncodedArgmax;
  nanCells: number[];
  infCells: number[];
  /** The largest finite cell value over the window (-Infinity when there is none). */
  max: number;
}

export interface SeriesRequest {
  pass: number;
  boundary: string;
  start?: number | undefined;
  end?: number | undefined;
  maxPoints: number;
}

/** Min and max per bucket; NaN where the bucket holds a NaN. */
export interface SeriesSide {
  min: number[];
  max: number[];
}

export interface SeriesValue {
  pass: number;
  boundary: string;
  start: number;
  end: number;
  step: number;
  reference: SeriesSide;
  native: SeriesSide;
  absDiff: number[];
}

export interface ErrorStatsValue {
  pass: number;
  boundary: string;
  histogram: { edges: number[]; counts: number[] };
  exactlyEqual: number;
  nonFinitePairs: number;
  scatter: { magnitude: number[]; absDiff: number[]; flatIndex: number[] };
}

export interface ElementBits {
  decimal: string;
  hex: string;
  fields: { sign: string; exponent: string; mantissa: string; exponentBias: number } | null;
  class: 'zero' | 'subnormal' | 'normal' | 'inf' | 'nan' | 'integer';
}

export interface ElementValue {
  pass: number;
  boundary: string;
  dtype: string;
  flatIndex: number;
  index: number[];
  reference: ElementBits | null;
  native: ElementBits | null;
  absDiff: number | null;
  ulp: number | null;
}

export interface SpecialMismatch {
  flatIndex: number;
  index: number[];
  class: MismatchClass;
  reference: string;
  native: string;
  referenceBits: string;
  nativeBits: string;
}

export interface SpecialsValue {
  pass: number;
  boundary: string;
  census: { native: SideCensus; reference: SideCensus };
  byClass: Record<MismatchClass, number>;
  mismatches: SpecialMismatch[];
  truncated: boolean;
}

export type FirstSpecialValue = { pass: number; boundary: string; flatIndex: number; side: 'native' | 'reference' } | null;

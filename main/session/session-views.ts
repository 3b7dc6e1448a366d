// The read-only views of a session (heatmaps, series, histograms, element bits, special values,
// audio), delegated to the inspect modules. Each compares the native run with the session's
// comparison base: the reference bundle, or the fp64 oracle when that is the chosen oracle — so
// the views always show what the table's numeric columns show. The inspect modules return plain
// values; view-wire.ts turns them into the wire's.
import type {
  Audio,
  BoundaryRef,
  Element,
  ErrorStats,
  FirstSpecial,
  Series,
  SeriesRequest,
  Specials,
  TensorView,
  TensorViewRequest,
} from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { elementAt } from '../core/inspect/element-bits.ts';
import { errorStats } from '../core/inspect/error-stats.ts';
import { findFirstSpecial } from '../core/inspect/first-special.ts';
import { series } from '../core/inspect/series-pooling.ts';
import { specials } from '../core/inspect/special-values.ts';
import { tensorView } from '../core/inspect/tensor-view-pooling.ts';
import { audioOf, wavOf } from './session-audio.ts';
import { viewWire } from './view-wire.ts';

/** The two sides a view compares: native (null before anything ran) and the comparison base. */
export interface ViewSides {
  native: TraceBundle | null;
  base: TraceBundle;
}

export const sessionViews = {
  tensorView: async (sides: ViewSides, request: TensorViewRequest): Promise<TensorView> =>
    viewWire.tensorView(await tensorView(sides.native, sides.base, request)),
  series: async (sides: ViewSides, request: SeriesRequest): Promise<Series> => viewWire.series(await series(sides.native, sides.base, request)),
  errorStats: async (sides: ViewSides, ref: BoundaryRef): Promise<ErrorStats> => viewWire.errorStats(await errorStats(sides.native, sides.base, ref)),
  element: async (sides: ViewSides, request: { pass: number; boundary: string; flatIndex: number }): Promise<Element> =>
    viewWire.element(await elementAt(sides.native, sides.base, request)),
  specials: async (sides: ViewSides, ref: BoundaryRef, limit: number): Promise<Specials> =>
    viewWire.specials(await specials(sides.native, sides.base, ref, limit)),
  firstSpecial: async (sides: ViewSides, order: readonly BoundaryRef[], kind: 'nan' | 'inf'): Promise<FirstSpecial> =>
    viewWire.firstSpecial(await findFirstSpecial(sides.native, sides.base, order, kind)),
  audio: (sides: ViewSides, boundary: string): Promise<Audio> => audioOf(sides.native, sides.base, boundary),
  wav: (sides: ViewSides, boundary: string, side: 'reference' | 'native' | 'residual'): Promise<{ fileName: string; bytes: string }> =>
    wavOf(sides.native, sides.base, boundary, side),
};

// The session's half of the view calls: the inspect modules (main/core/inspect) return plain
// values with non-finite numbers as numbers; the wire (protocol/inspector-api.ts) carries those
// as WireNumber ("NaN", "Infinity", "-Infinity"), since JSON has no non-finite numbers. Every
// conversion is typed against the wire type, so a field the core adds and the wire lacks (or
// the other way round) fails the type check here.
import {
  toWire,
  type Element,
  type ErrorStats,
  type FirstSpecial,
  type Series,
  type Specials,
  type TensorView,
  type WireNumber,
} from '../../protocol/inspector-api.ts';
import type { ElementValue, ErrorStatsValue, FirstSpecialValue, SeriesSide, SeriesValue, SpecialsValue, TensorViewValue } from '../core/inspect/view-values.ts';

const wireAll = (values: readonly number[]): WireNumber[] => values.map(toWire);
const wireSide = (side: SeriesSide): Series['reference'] => ({ min: wireAll(side.min), max: wireAll(side.max) });
const wireOrNull = (value: number | null): WireNumber | null => (value === null ? null : toWire(value));

export const viewWire = {
  tensorView: (view: TensorViewValue): TensorView => ({ ...view, max: toWire(view.max) }),
  series: (series: SeriesValue): Series => ({
    ...series,
    reference: wireSide(series.reference),
    native: wireSide(series.native),
    absDiff: wireAll(series.absDiff),
  }),
  errorStats: (stats: ErrorStatsValue): ErrorStats => ({
    ...stats,
    scatter: { magnitude: wireAll(stats.scatter.magnitude), absDiff: wireAll(stats.scatter.absDiff), flatIndex: stats.scatter.flatIndex },
  }),
  element: (element: ElementValue): Element => ({ ...element, absDiff: wireOrNull(element.absDiff), ulp: wireOrNull(element.ulp) }),
  /** Strings and counts only: the same object, checked against the wire type. */
  specials: (specials: SpecialsValue): Specials => specials,
  firstSpecial: (first: FirstSpecialValue): FirstSpecial => first,
};

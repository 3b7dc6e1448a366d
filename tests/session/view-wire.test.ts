// The session converts the core's plain view values into the wire's: every non-finite number
// becomes its WireNumber string, finite ones stay numbers, and the result passes the wire schema.
import { describe, expect, it } from 'vitest';
import { ElementSchema, ErrorStatsSchema, SeriesSchema } from '../../protocol/inspector-api.ts';
import { viewWire } from '../../main/session/view-wire.ts';

describe('viewWire', () => {
  it('turns NaN and the infinities of a series into the wire strings, keeping finite values', () => {
    const wire = viewWire.series({
      pass: 0,
      boundary: 's',
      start: 0,
      end: 6,
      step: 2,
      reference: { min: [1, 3, 5], max: [2, 4, 6] },
      native: { min: [NaN, 3, -Infinity], max: [NaN, 4, 6] },
      absDiff: [NaN, 0, Infinity],
    });
    expect(wire.native.min).toEqual(['NaN', 3, '-Infinity']);
    expect(wire.absDiff).toEqual(['NaN', 0, 'Infinity']);
    expect(wire.reference).toEqual({ min: [1, 3, 5], max: [2, 4, 6] });
    expect(SeriesSchema.safeParse(wire).success).toBe(true);
  });

  it("converts an element's distances and the error-stats scatter, and -0 stays a number", () => {
    const element = viewWire.element({
      pass: 1,
      boundary: 'b',
      dtype: 'F32',
      flatIndex: 0,
      index: [0],
      reference: null,
      native: null,
      absDiff: Infinity,
      ulp: null,
    });
    expect(element.absDiff).toBe('Infinity');
    expect(element.ulp).toBeNull();
    expect(ElementSchema.safeParse(element).success).toBe(true);
    const stats = viewWire.errorStats({
      pass: 1,
      boundary: 'b',
      histogram: { edges: [-3, -2], counts: [1] },
      exactlyEqual: 0,
      nonFinitePairs: 1,
      scatter: { magnitude: [-0, Infinity], absDiff: [NaN, 1e-3], flatIndex: [0, 1] },
    });
    expect(stats.scatter.magnitude).toEqual([-0, 'Infinity']);
    expect(Object.is(stats.scatter.magnitude[0], -0)).toBe(true);
    expect(stats.scatter.absDiff).toEqual(['NaN', 1e-3]);
    expect(ErrorStatsSchema.safeParse(stats).success).toBe(true);
  });
});

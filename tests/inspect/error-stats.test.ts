// Error statistics: quarter-decade histogram edges, exact and non-finite pair counts, and a
// bounded scatter that always keeps the worst elements.
import { afterEach, describe, expect, it } from 'vitest';
import { errorStats, SAMPLE, WORST } from '../../main/core/inspect/error-stats.ts';
import { ErrorStatsSchema } from '../../protocol/inspector-api.ts';
import { cleanupBundles, f64, makeBundle, pair, randomFloats, tensor } from '../compare/compare-fixtures.ts';

afterEach(cleanupBundles);

describe('errorStats', () => {
  it('bins log10 |diff| on quarter decades and counts equal and non-finite pairs', async () => {
    // f64 so the differences are exactly the planted ones.
    const reference = [1, 1, 1, 2, 2, 0, 0, 0, 0, 5, 5];
    const native = [1 + 3e-3, 1 + 3e-3, 1 + 1.5e-6, 2, 2, 0, -0, Number.NaN, Infinity, Infinity, 5];
    const sides = await pair([tensor('e', 'F64', [11], f64(native))], [tensor('e', 'F64', [11], f64(reference))]);
    const stats = ErrorStatsSchema.parse(await errorStats(sides.native, sides.reference, { pass: 0, boundary: 'e' }));
    // 3e-3: log10 = -2.52 -> bin [-2.75, -2.5); 1.5e-6: log10 = -5.82 -> bin [-6, -5.75).
    expect(stats.histogram.edges[0]).toBe(-6);
    expect(stats.histogram.edges.at(-1)).toBe(-2.5);
    expect(stats.histogram.edges).toHaveLength(15);
    stats.histogram.edges.forEach((edge, i) => expect(edge).toBe(-6 + i / 4));
    expect(stats.histogram.counts[0]).toBe(1);
    expect(stats.histogram.counts.at(-1)).toBe(2);
    expect(stats.histogram.counts.reduce((a, b) => a + b, 0)).toBe(3);
    expect(stats.exactlyEqual).toBe(5); // 2, 2, 0, 0 vs -0, 5
    expect(stats.nonFinitePairs).toBe(3); // NaN, inf vs finite, inf vs finite
    expect(stats.scatter.flatIndex).toEqual([0, 1, 2, 3, 4, 5, 6, 10]);
    expect(stats.scatter.magnitude[0]).toBe(1);
  });

  it('samples at most WORST + SAMPLE points and always keeps the worst elements', async () => {
    const count = 100_000;
    const reference = randomFloats(count, 21, 1);
    const noise = randomFloats(count, 22, 1e-6);
    const native = reference.map((value, i) => value + (noise[i] as number));
    // 300 planted errors of rising size; the worst 200 of them must all be in the scatter.
    const planted: number[] = [];
    for (let k = 0; k < 300; k++) {
      const at = (k * 331 + 17) % count;
      planted.push(at);
      native[at] = (reference[at] as number) + 0.01 * (k + 1);
    }
    const sides = await pair([tensor('e', 'F64', [count], f64(native))], [tensor('e', 'F64', [count], f64(reference))]);
    const stats = await errorStats(sides.native, sides.reference, { pass: 0, boundary: 'e' });
    expect(stats.scatter.flatIndex.length).toBeLessThanOrEqual(WORST + SAMPLE);
    expect(stats.scatter.flatIndex.length).toBeGreaterThan(SAMPLE * 0.9);
    const kept = new Set(stats.scatter.flatIndex);
    for (const at of planted.slice(100)) expect(kept.has(at), `planted error at ${at}`).toBe(true);
    const sorted = [...stats.scatter.flatIndex].sort((a, b) => a - b);
    expect(stats.scatter.flatIndex).toEqual(sorted);
    const worstAt = stats.scatter.flatIndex.indexOf(planted[299] as number);
    expect(stats.scatter.absDiff[worstAt]).toBeCloseTo(3, 10);
    expect(stats.histogram.counts.reduce((a, b) => a + b, 0) + stats.exactlyEqual).toBe(count);
  });

  it('needs both sides', async () => {
    const reference = await makeBundle('reference', [[tensor('e', 'F64', [1], f64([1]))]]);
    await expect(errorStats(null, reference, { pass: 0, boundary: 'e' })).rejects.toThrow(/pass 0 boundary "e": the error statistics needs both sides/);
  });
});

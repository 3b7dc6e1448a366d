// Foreground and background streams (window-stream.ts): a background stream (error statistics)
// started first waits while a foreground stream (a heatmap) runs, then finishes every window of
// its own, checked as before. An ordering, not a timing: the background cannot run past its
// first window while the foreground is streaming.
import { afterEach, describe, expect, it } from 'vitest';
import { streamWindows, WINDOW_BYTES } from '../../main/core/inspect/window-stream.ts';
import { cleanupBundles, f32, pair, randomFloats, tensor } from '../compare/compare-fixtures.ts';

afterEach(cleanupBundles);

describe('stream priority', () => {
  it('a background stream yields to a foreground one and still reads everything', async () => {
    const elements = (4 * WINDOW_BYTES) / 4; // four windows per side
    const values = f32(randomFloats(elements, 5, 1));
    const { native, reference } = await pair([tensor('t', 'F32', [elements], values)], [tensor('t', 'F32', [elements], values)]);
    const plan = { pass: 0, name: 't', elementBytes: 4, elements, windowElements: WINDOW_BYTES / 4 };
    const log: string[] = [];
    const background = streamWindows(native, reference, { ...plan, priority: 'background' }, (window) => {
      log.push(`background ${window.start / plan.windowElements}`);
    });
    const foreground = streamWindows(native, reference, plan, (window) => {
      log.push(`foreground ${window.start / plan.windowElements}`);
    });
    await Promise.all([background, foreground]);
    const lastForeground = log.lastIndexOf('foreground 3');
    // At most the window the background had already asked for lands before the foreground ends.
    expect(log.slice(0, lastForeground).filter((entry) => entry.startsWith('background')).length).toBeLessThanOrEqual(1);
    expect(log.filter((entry) => entry.startsWith('background'))).toEqual(['background 0', 'background 1', 'background 2', 'background 3']);
    expect(log.filter((entry) => entry.startsWith('foreground'))).toEqual(['foreground 0', 'foreground 1', 'foreground 2', 'foreground 3']);
  });
});

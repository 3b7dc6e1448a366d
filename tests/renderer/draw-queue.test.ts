// The plot's draw queue (renderer/src/components/plot/draw-queue.ts): Plotly's draws are
// asynchronous, and a purge or a second draw in the middle of one broke it in the browser ("Cannot
// read properties of undefined (reading '_redrawFromAutoMarginCount')"). Draws here are promises
// the test settles by hand, so every ordering is exact.
import { describe, expect, it } from 'vitest';
import { DrawQueue } from '../../renderer/src/components/plot/draw-queue.ts';

/** A draw the test settles: its calls are logged, its promise resolved or rejected on demand. */
function controlledDraw(log: string[], name: string): { draw: () => Promise<unknown>; finish: () => void; fail: (error: Error) => void } {
  let finish = (): void => undefined;
  let fail = (_error: Error): void => undefined;
  return {
    draw: () => {
      log.push(`start ${name}`);
      return new Promise((resolve, reject) => {
        finish = () => {
          log.push(`end ${name}`);
          resolve(undefined);
        };
        fail = reject;
      });
    },
    finish: () => finish(),
    fail: (error) => fail(error),
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('the draw queue', () => {
  it('purges only once the draw in flight has ended', async () => {
    const log: string[] = [];
    const queue = new DrawQueue(() => log.push('error'));
    const first = controlledDraw(log, 'newPlot');
    queue.draw('data', first.draw);
    queue.close(() => log.push('purge'));
    await settle();
    expect(log).toEqual(['start newPlot']);
    first.finish();
    await settle();
    expect(log).toEqual(['start newPlot', 'end newPlot', 'purge']);
  });

  it('runs one draw at a time, the latest of a kind replacing the one waiting, kinds in order', async () => {
    const log: string[] = [];
    const queue = new DrawQueue(() => log.push('error'));
    const draws = ['newPlot', 'react 1', 'resize', 'react 2'].map((name) => controlledDraw(log, name));
    queue.draw('data', draws[0]!.draw);
    queue.draw('data', draws[1]!.draw);
    queue.draw('resize', draws[2]!.draw);
    queue.draw('data', draws[3]!.draw);
    expect(log).toEqual(['start newPlot']);
    draws[0]!.finish();
    await settle();
    // react 2 took react 1's place (and its turn, before the resize).
    expect(log).toEqual(['start newPlot', 'end newPlot', 'start react 2']);
    draws[3]!.finish();
    await settle();
    expect(log).toEqual(['start newPlot', 'end newPlot', 'start react 2', 'end react 2', 'start resize']);
  });

  it('starts nothing after close: the waiting draws are dropped, later ones refused', async () => {
    const log: string[] = [];
    const queue = new DrawQueue(() => log.push('error'));
    const draws = ['newPlot', 'react', 'late'].map((name) => controlledDraw(log, name));
    queue.draw('data', draws[0]!.draw);
    queue.draw('data', draws[1]!.draw);
    queue.close(() => log.push('purge'));
    queue.draw('data', draws[2]!.draw);
    draws[0]!.finish();
    await settle();
    expect(log).toEqual(['start newPlot', 'end newPlot', 'purge']);
  });

  it('purges at once when nothing is drawing', () => {
    const log: string[] = [];
    new DrawQueue(() => log.push('error')).close(() => log.push('purge'));
    expect(log).toEqual(['purge']);
  });

  it('reports a failed draw (no unhandled rejection) and goes on with the next, then the purge', async () => {
    const errors: unknown[] = [];
    const log: string[] = [];
    const queue = new DrawQueue((error) => errors.push(error));
    const broken = controlledDraw(log, 'broken');
    const next = controlledDraw(log, 'next');
    queue.draw('data', broken.draw);
    queue.draw('resize', next.draw);
    broken.fail(new Error('draw failed'));
    await settle();
    expect(errors).toEqual([new Error('draw failed')]);
    expect(log).toEqual(['start broken', 'start next']);
    queue.close(() => log.push('purge'));
    next.finish();
    await settle();
    expect(log).toEqual(['start broken', 'start next', 'end next', 'purge']);
  });
});

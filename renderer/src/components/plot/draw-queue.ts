// Plotly draws asynchronously: newPlot and react resolve only after fonts, auto-margins and
// redraws, and each of those steps reads the plot's layout. Purging a plot (on unmount) between
// two steps deletes that layout, and the draw's next step throws "Cannot read properties of
// undefined (reading '_redrawFromAutoMarginCount')" (seen in the e2e audio panel: the waveform
// unmounted while it drew). Two draws in flight at once interleave their steps the same way.
//
// A DrawQueue holds one plot's draws: one runs at a time; a draw asked for while another runs
// waits its turn, and replaces a draw of the same kind still waiting (a react with the latest data
// supersedes one with older data; a resize, another resize); close() runs the purge once the draw
// in flight has settled, and no draw starts after it. A draw that fails is reported, never left as
// an unhandled rejection.

export type Draw = () => Promise<unknown>;

export class DrawQueue {
  private running = false;
  /** Draws waiting their turn, in order, at most one of each kind. */
  private readonly waiting: { kind: string; draw: Draw }[] = [];
  private closing: (() => void) | null = null;
  private closed = false;

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Runs `draw` now, or after the draws before it (replacing a waiting draw of its `kind`); never after close(). */
  draw(kind: string, draw: Draw): void {
    if (this.closed) return;
    if (this.running) {
      const same = this.waiting.find((entry) => entry.kind === kind);
      if (same !== undefined) same.draw = draw;
      else this.waiting.push({ kind, draw });
      return;
    }
    this.start(draw);
  }

  /** No draw starts after this; `last` (the purge) runs now, or once the draw in flight has settled. */
  close(last: () => void): void {
    if (this.closed) return;
    this.closed = true;
    this.waiting.length = 0;
    if (this.running) this.closing = last;
    else this.finish(last);
  }

  private start(draw: Draw): void {
    this.running = true;
    let drawing: Promise<unknown>;
    try {
      drawing = draw();
    } catch (error) {
      drawing = Promise.reject(error);
    }
    drawing.then(
      () => this.settled(),
      (error: unknown) => {
        this.onError(error);
        this.settled();
      },
    );
  }

  private settled(): void {
    this.running = false;
    const closing = this.closing;
    if (closing !== null) {
      this.closing = null;
      this.finish(closing);
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) this.start(next.draw);
  }

  private finish(last: () => void): void {
    try {
      last();
    } catch (error) {
      this.onError(error);
    }
  }
}

// A tiny effect-based Plotly wrapper: newPlot once, Plotly.react on every change, resize with the
// container, purge on unmount. Event callbacks are read through refs so changing them does not
// re-plot. Draws and the purge go through a DrawQueue (draw-queue.ts): Plotly's draws are
// asynchronous, and a purge or a second draw in the middle of one breaks it.
import { useEffect, useRef, useState } from 'react';
import type { Data, Layout, PlotlyHTMLElement, PlotMouseEvent, PlotRelayoutEvent, PlotSelectionEvent } from 'plotly.js';
import { DrawQueue } from './draw-queue.ts';
import { loadPlotly, type PlotlyApi } from './plotly-loader.ts';
import { PLOT_CONFIG } from './plot-theme.ts';

export interface PlotProps {
  data: Data[];
  layout: Partial<Layout>;
  className?: string;
  testId?: string;
  onClick?: (event: PlotMouseEvent) => void;
  onRelayout?: (event: PlotRelayoutEvent) => void;
  onSelected?: (event: PlotSelectionEvent | undefined) => void;
  /** Called with the plot's outer element after every (re)draw. */
  onAfterPlot?: (element: HTMLElement) => void;
}

export function Plot({ data, layout, className, testId, onClick, onRelayout, onSelected, onAfterPlot }: PlotProps) {
  const outer = useRef<HTMLDivElement>(null);
  const container = useRef<HTMLDivElement>(null);
  const [plotly, setPlotly] = useState<PlotlyApi | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const plotted = useRef(false);
  const draws = useRef<DrawQueue | null>(null);
  const handlers = useRef({ onClick, onRelayout, onSelected, onAfterPlot });
  handlers.current = { onClick, onRelayout, onSelected, onAfterPlot };

  useEffect(() => {
    let alive = true;
    loadPlotly().then(
      (module) => alive && setPlotly(module),
      (error: unknown) => alive && setLoadError(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      alive = false;
    };
  }, []);

  useEffect(() => {
    const element = container.current;
    if (plotly === null || element === null) return;
    // A failed draw is reported as the page's error, as an unhandled rejection was before.
    const queue = (draws.current ??= new DrawQueue((error) => window.reportError(error)));
    if (!plotted.current) {
      plotted.current = true;
      queue.draw('data', () =>
        plotly.newPlot(element, data, layout, PLOT_CONFIG).then((plot: PlotlyHTMLElement) => {
          plot.on('plotly_click', (event) => handlers.current.onClick?.(event));
          plot.on('plotly_relayout', (event) => handlers.current.onRelayout?.(event));
          // Plotly passes undefined when a selection is cleared by a double click.
          plot.on('plotly_selected', (event: PlotSelectionEvent | undefined) => handlers.current.onSelected?.(event));
          const afterPlot = (): void => {
            if (outer.current !== null) handlers.current.onAfterPlot?.(outer.current);
          };
          plot.on('plotly_afterplot', afterPlot);
          afterPlot();
        }),
      );
    } else {
      queue.draw('data', () => plotly.react(element, data, layout, PLOT_CONFIG));
    }
  }, [plotly, data, layout]);

  useEffect(() => {
    const element = container.current;
    if (plotly === null || element === null) return;
    // Coalesce bursts of resize notifications (a splitter drag) into one relayout per frame.
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        // Plots.resize returns the promise of its relayout (typed void): the queue waits for it.
        if (plotted.current && element.isConnected) draws.current?.draw('resize', () => Promise.resolve<unknown>(plotly.Plots.resize(element)));
      });
    });
    observer.observe(element);
    return () => {
      cancelAnimationFrame(frame);
      observer.disconnect();
    };
  }, [plotly]);

  useEffect(() => {
    const element = container.current;
    return () => {
      const queue = draws.current;
      draws.current = null;
      if (plotly !== null && element !== null && plotted.current) {
        // After the draw in flight, if any: purging mid-draw breaks its next step.
        if (queue !== null) queue.close(() => plotly.purge(element));
        else plotly.purge(element);
      }
      plotted.current = false;
    };
  }, [plotly]);

  return (
    <div ref={outer} className={`plot ${className ?? ''}`} data-testid={testId}>
      {loadError !== null ? <div className="plot-error">Plotting is unavailable: {loadError}</div> : null}
      <div className="plot-surface" ref={container} />
    </div>
  );
}

// Plotly is ~5 MB; loading it on first use keeps the table (the first thing an engineer needs)
// fast to appear. Every plot shares the one module promise. Once the table has painted rows,
// warmPlotly() starts that load in idle time, so the first heatmap does not wait ~2 s for it.
import type PlotlyModule from 'plotly.js-dist-min';

export type PlotlyApi = typeof PlotlyModule;

let plotly: Promise<PlotlyApi> | null = null;

export function loadPlotly(): Promise<PlotlyApi> {
  plotly ??= import('plotly.js-dist-min').then((module) => module.default);
  return plotly;
}

/** Longest wait for an idle moment before loading anyway (a page that is never idle still gets it). */
const IDLE_TIMEOUT_MS = 3000;

/** Starts loading Plotly when the page is next idle; once, and never ahead of a real use. */
export function warmPlotly(): void {
  if (plotly !== null) return;
  const load = (): void => {
    // A failure here is reported by the first plot that needs the module (it calls loadPlotly again).
    loadPlotly().catch(() => {
      plotly = null;
    });
  };
  if (typeof window.requestIdleCallback === 'function') window.requestIdleCallback(load, { timeout: IDLE_TIMEOUT_MS });
  else window.setTimeout(load, 0);
}

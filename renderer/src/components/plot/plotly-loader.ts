// Plotly is ~5 MB; loading it on first use keeps the table (the first thing an engineer needs)
// fast to appear. Every plot shares the one module promise.
import type PlotlyModule from 'plotly.js-dist-min';

export type PlotlyApi = typeof PlotlyModule;

let plotly: Promise<PlotlyApi> | null = null;

export function loadPlotly(): Promise<PlotlyApi> {
  plotly ??= import('plotly.js-dist-min').then((module) => module.default);
  return plotly;
}

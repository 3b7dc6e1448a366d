// The dark, dense look shared by every plot, and the colours that carry meaning across plots.
import type { Config, Layout } from 'plotly.js';

export const PLOT_COLORS = {
  reference: '#5fb3ff',
  native: '#ffb454',
  diff: '#ff6b6b',
  residual: '#c792ea',
  local: '#7fd962',
  accumulated: '#ff6b6b',
  nan: '#ff3df5',
  inf: '#00d8b0',
  grid: '#2a2f3a',
  text: '#c8ccd4',
};

/** Plotly has no Inferno: black through purple and orange to pale yellow, perceptually ordered. */
export const INFERNO: [number, string][] = [
  [0, '#000004'],
  [0.13, '#1b0c41'],
  [0.25, '#4a0c6b'],
  [0.38, '#781c6d'],
  [0.5, '#a52c60'],
  [0.63, '#cf4446'],
  [0.75, '#ed6925'],
  [0.88, '#fb9b06'],
  [1, '#fcffa4'],
];

const MONO_FONT = 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace';

export function plotLayout(overrides: Partial<Layout>): Partial<Layout> {
  return {
    autosize: true,
    paper_bgcolor: '#14171d',
    plot_bgcolor: '#14171d',
    font: { family: MONO_FONT, size: 10, color: PLOT_COLORS.text },
    margin: { l: 48, r: 12, t: 22, b: 30 },
    showlegend: false,
    hoverlabel: { font: { family: MONO_FONT, size: 10 } },
    ...overrides,
    xaxis: { gridcolor: PLOT_COLORS.grid, zerolinecolor: PLOT_COLORS.grid, ...overrides.xaxis },
    yaxis: { gridcolor: PLOT_COLORS.grid, zerolinecolor: PLOT_COLORS.grid, ...overrides.yaxis },
  };
}

export const PLOT_CONFIG: Partial<Config> = {
  displaylogo: false,
  responsive: false,
  // The instrument is offline: no "edit in chart studio" links, no remote requests.
  showLink: false,
  showSendToCloud: false,
  modeBarButtonsToRemove: ['toImage', 'lasso2d'],
  scrollZoom: false,
  // Plotly's own pop-up hints ("double-click to zoom back out") cover the app's controls.
  showTips: false,
};

// The window's first view: the embedded default's capture, one row per pass × boundary.
import type { CaptureSummaryMessage, InspectorApi } from '../../preload/inspector-api.ts';

declare global {
  interface Window {
    traceInspector: InspectorApi;
  }
}

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function render(result: CaptureSummaryMessage): void {
  const app = document.getElementById('app') as HTMLElement;
  app.replaceChildren();
  const heading = document.createElement('h1');
  heading.textContent = `${result.caseId}: run ${result.run.status}`;
  const summary = document.createElement('p');
  summary.textContent = result.summary
    ? `${result.summary.compared} comparisons, ${result.summary.identical} identical, ${result.summary.within} within bound, ${result.summary.failing} failing — bundle ${result.outDir}`
    : `no bundle: ${result.run.message}`;
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const title of ['pass', 'boundary', 'stage', 'dtype', 'shape', 'contract', 'max abs', 'max ULP', 'result']) {
    const th = document.createElement('th');
    th.textContent = title;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of result.rows) {
    const tr = body.insertRow();
    tr.append(
      cell(String(row.pass)),
      cell(row.boundary),
      cell(row.stage),
      cell(row.dtype),
      cell(`[${row.shape.join(',')}]`),
      cell(row.contract),
      cell(row.maxAbs === null ? '' : row.maxAbs.toExponential(2)),
      cell(row.maxUlp === null ? '' : String(row.maxUlp)),
      cell(row.status),
    );
  }
  app.append(heading, summary, table);
}

window.traceInspector.captureDefault().then(render, (error: unknown) => {
  const status = document.getElementById('status') as HTMLElement;
  status.textContent = `Capture failed: ${error instanceof Error ? error.message : String(error)}`;
});

// The gate's progress on stderr (trace-inspector --gate): one bar redrawn in place on a terminal,
// plain lines in a log (CI), so a long run shows where it is without flooding a log.
import type { GateProgress } from '../core/gate/gate-types.ts';
import type { CliIO } from './cli-io.ts';

/** Narrower than any terminal: a longer line would wrap, and \r only returns to the start of the last row. */
const LINE_WIDTH = 79;

/** Progress on stderr: one bar redrawn in place on a terminal, plain lines in a log. */
export function progressPrinter(io: CliIO): { onEvent: (event: GateProgress) => void; finish: () => void } {
  let caseLabel = '';
  let passText = '';
  let lastDraw = 0;
  let drawn = false;
  const width = 20;
  const draw = (fraction: number, detail: string, force: boolean): void => {
    const now = Date.now();
    if (!force && now - lastDraw < 80) return;
    lastDraw = now;
    const filled = Math.max(0, Math.min(width, Math.round(fraction * width)));
    const line = `gate ${caseLabel} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${passText}${detail}`;
    io.stderr(`\r${line.slice(0, LINE_WIDTH).padEnd(LINE_WIDTH)}`);
    drawn = true;
  };
  const onEvent = (event: GateProgress): void => {
    if (!io.stderrIsTTY) {
      if (event.kind === 'case_start') io.stderr(`gate: case ${event.case} (${event.caseIndex + 1}/${event.caseCount}): ${event.passes} passes\n`);
      else if (event.kind === 'pass')
        io.stderr(`gate: ${event.case}: pass ${event.pass} [${event.pass + 1}/${event.passes}] ${event.status}: ${event.detail}\n`);
      else if (event.kind === 'case_end') {
        const c = event.counts;
        io.stderr(
          `gate: ${event.case}: run ${event.run}; ${c.PASS} PASS, ${c.FAIL} FAIL, ${c.REVIEW_REQUIRED} REVIEW_REQUIRED, ${c.KNOWN_GAP} KNOWN_GAP, ${c.GAP} GAP\n`,
        );
      }
      return;
    }
    switch (event.kind) {
      case 'case_start':
        caseLabel = `${event.caseIndex + 1}/${event.caseCount} ${event.case}`;
        passText = '';
        draw(0, 'starting', true);
        break;
      case 'pass':
        passText = `pass ${event.pass} [${event.pass + 1}/${event.passes}] `;
        draw((event.pass + 1) / Math.max(1, event.passes) / 2, event.status === 'ok' ? 'running' : event.status, event.status !== 'ok');
        break;
      case 'compare':
        draw(0.5 + event.done / Math.max(1, event.total) / 2, `compare ${event.done}/${event.total}`, event.done === event.total);
        break;
      case 'case_end':
        break;
    }
  };
  const finish = (): void => {
    if (drawn) io.stderr(`\r${' '.repeat(LINE_WIDTH)}\r`);
  };
  return { onEvent, finish };
}

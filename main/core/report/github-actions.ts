// The gate's GitHub Actions face (used when GITHUB_ACTIONS=true): workflow-command annotations
// on stdout (`::error file=...,title=...::message`), capped, and a Markdown summary appended to
// the file named by $GITHUB_STEP_SUMMARY.
//
// Escaping follows the workflow-command rules (actions/toolkit, core/src/command.ts): in the
// message, % -> %25, \r -> %0D, \n -> %0A; in property values additionally : -> %3A, , -> %2C.
import { isAbsolute, relative } from 'node:path';
import type { BoundaryVerdict, CaseResult, GateResult } from '../gate/gate-types.ts';
import { audioStreamText, failingSide, firstDivergenceOf, formatStat, mismatchText, rowName, rowsWorstFirst } from './report-format.ts';

/** GitHub shows at most 10 errors and 10 warnings per step; more is noise. */
export const DEFAULT_MAX_ANNOTATIONS = 20;

export function escapeCommandData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function escapeCommandProperty(text: string): string {
  return escapeCommandData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export type AnnotationLevel = 'error' | 'warning' | 'notice';

export function workflowCommand(level: AnnotationLevel, properties: Record<string, string>, message: string): string {
  const props = Object.entries(properties)
    .map(([name, value]) => `${name}=${escapeCommandProperty(value)}`)
    .join(',');
  return `::${level}${props ? ` ${props}` : ''}::${escapeCommandData(message)}`;
}

export interface AnnotationOptions {
  /** Annotation file paths are made relative to this folder (the workspace). */
  workspace: string;
  max?: number;
}

function fileOf(item: CaseResult, workspace: string): string {
  const path = item.reference.manifestPath;
  const rel = relative(workspace, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split('\\').join('/') : path;
}

/** One line per annotation, the most useful first, with a final notice when some were left out. */
export function formatAnnotations(result: GateResult, options: AnnotationOptions): string[] {
  const max = options.max ?? DEFAULT_MAX_ANNOTATIONS;
  const byCase = new Map(result.cases.map((item) => [item.id, item]));
  const candidates: { level: AnnotationLevel; file: string; title: string; message: string }[] = [];

  for (const item of result.cases) {
    if (item.run.outcome.status !== 'completed') {
      candidates.push({
        level: 'error',
        file: fileOf(item, options.workspace),
        title: `engine ${item.run.outcome.status} (case ${item.id})`,
        message: item.run.summary,
      });
    }
  }
  const first = firstDivergenceOf(result);
  const failing = rowsWorstFirst(result).filter((verdict) => verdict.verdict === 'FAIL' || verdict.verdict === 'REVIEW_REQUIRED');
  const rows = first === null ? failing : [first.verdict, ...failing.filter((verdict) => verdict !== first.verdict)];
  for (const verdict of rows) {
    const item = byCase.get(verdict.case) as CaseResult;
    const lead = first !== null && verdict === first.verdict ? 'first divergence: ' : '';
    candidates.push({
      level: 'error',
      file: fileOf(item, options.workspace),
      title: `${verdict.verdict} ${rowName(verdict)} (case ${verdict.case})`,
      message: `${lead}${verdict.kind ? `${verdict.kind}: ` : ''}${verdict.reason}`,
    });
  }
  // Gaps: one warning per gap id, not per row.
  for (const gap of result.gaps) {
    const item = gap.case === null ? result.cases[0] : byCase.get(gap.case);
    if (item === undefined) continue;
    candidates.push({ level: 'warning', file: fileOf(item, options.workspace), title: `GAP ${gap.id}`, message: gap.reason });
  }

  const shown = candidates.slice(0, max);
  const lines = shown.map((candidate) => workflowCommand(candidate.level, { file: candidate.file, title: candidate.title }, candidate.message));
  const omitted = candidates.length - shown.length;
  if (omitted > 0) {
    lines.push(
      workflowCommand(
        'notice',
        { title: 'trace-inspector gate' },
        `${omitted} more annotation(s) omitted (${candidates.length} in all); every row is in the JUnit and JSON reports and the step summary`,
      ),
    );
  }
  return lines;
}

/** A Markdown table cell: no pipes, no newlines, no raw HTML. */
export function markdownCell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n|\r/g, ' ')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

function summaryRow(verdict: BoundaryVerdict): string {
  const side = failingSide(verdict);
  const record = side?.record ?? verdict.reference;
  const cells = [
    verdict.verdict,
    verdict.case,
    String(verdict.pass),
    `\`${verdict.boundary}\``,
    verdict.kind ?? '',
    mismatchText(verdict),
    formatStat(record?.maxAbs),
    formatStat(record?.maxUlp),
    verdict.reason.length > 240 ? `${verdict.reason.slice(0, 239)}…` : verdict.reason,
  ];
  return `| ${cells.map((cell, index) => (index === 3 ? cell.replace(/\|/g, '\\|') : markdownCell(cell))).join(' | ')} |`;
}

/** The step summary: seals first, then a case table, the first divergence and the rows that did not pass. */
export function formatStepSummary(result: GateResult, maxRows = 100): string {
  const { seals } = result;
  const lines: string[] = [
    `## trace-inspector gate — FIDELITY: ${seals.fidelity}, OVERALL: ${seals.overall}${seals.reason ? ` (${seals.reason})` : ''}`,
    '',
    '```text',
    ...seals.lines,
    '```',
    '',
    `Engine **${markdownCell(result.engine.name)} ${markdownCell(result.engine.version)}** (sha256 \`${result.engine.sha256.slice(0, 16)}\`), ` +
      `trace-inspector ${markdownCell(result.tool.version)} (\`${result.tool.commit.slice(0, 10)}\`${result.tool.dirty ? ', modified' : ''}), strict: ${result.strict ? 'yes' : 'no'}.`,
    '',
    '| case | run | passes | PASS | FAIL | REVIEW_REQUIRED | KNOWN_GAP | GAP |',
    '|---|---|---|---|---|---|---|---|',
    ...result.cases.map(
      (item) =>
        `| ${markdownCell(item.id)} | ${item.run.outcome.status} | ${item.run.passesCompleted}/${item.run.passesExpected} | ${item.counts.PASS} | ${item.counts.FAIL} | ` +
        `${item.counts.REVIEW_REQUIRED} | ${item.counts.KNOWN_GAP} | ${item.counts.GAP} |`,
    ),
    '',
  ];
  const first = firstDivergenceOf(result);
  lines.push(
    first === null
      ? '**First divergence:** none.'
      : `**First divergence:** case \`${markdownCell(first.item.id)}\`, ${markdownCell(rowName(first.verdict))} — ${first.verdict.verdict}${first.verdict.kind ? ` (${first.verdict.kind})` : ''}: ${markdownCell(first.verdict.reason)}`,
    '',
  );
  for (const item of result.cases) {
    if (item.run.outcome.status !== 'completed') lines.push(`**Run of ${markdownCell(item.id)}:** ${markdownCell(item.run.summary)}`, '');
  }
  const streams = result.cases.flatMap((item) =>
    (item.audio ?? []).map(
      (judgement) =>
        `- ${markdownCell(item.id)}: \`${judgement.boundary.replace(/`/g, "'")}\` ${markdownCell(audioStreamText(judgement).slice(judgement.boundary.length + 1))}`,
    ),
  );
  if (streams.length > 0) lines.push('**Audio streams:**', '', ...streams, '');
  const notPassing = rowsWorstFirst(result).filter((verdict) => verdict.verdict !== 'PASS');
  if (notPassing.length > 0) {
    const shown = notPassing.slice(0, maxRows);
    lines.push(
      `<details><summary>${notPassing.length} row(s) not PASS${notPassing.length > shown.length ? ` (worst ${shown.length} shown)` : ''}</summary>`,
      '',
      '| verdict | case | pass | boundary | kind | mismatches | max abs | max ULP | reason |',
      '|---|---|---|---|---|---|---|---|---|',
      ...shown.map(summaryRow),
      '',
      '</details>',
      '',
    );
  }
  if (result.gaps.length > 0) {
    lines.push('**Gaps:**', '', ...result.gaps.map((gap) => `- \`${gap.id.replace(/`/g, "'")}\` — ${markdownCell(gap.reason)}`), '');
  }
  return `${lines.join('\n')}\n`;
}

// JUnit XML for CI test-report viewers: one <testsuite> per case, one <testcase> per
// pass x boundary named "pass 3 / backbone.l2.out". FAIL and REVIEW_REQUIRED are <failure>s,
// GAP and KNOWN_GAP are <skipped> (reported, not compared or declared broken), each with the
// explanation in the element's body. The seals ride along as <property name="seal"> of each suite.
import type { BoundaryVerdict, CaseResult, GateResult } from '../gate/gate-types.ts';
import { describeDivergence } from './human-report.ts';
import { audioStreamText, rowName } from './report-format.ts';

/** Characters XML 1.0 cannot hold at all (C0 controls other than tab, LF, CR; lone surrogates; U+FFFE/F). */
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function scrub(text: string): string {
  return text.replace(XML_INVALID, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Text content: & < > escaped ("]]>" cannot appear unescaped then). */
export function escapeXmlText(text: string): string {
  return scrub(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value in double quotes: also quotes, and whitespace kept as character references. */
export function escapeXmlAttribute(text: string): string {
  return escapeXmlText(text).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

const attrs = (values: Record<string, string | number>): string =>
  Object.entries(values)
    .map(([name, value]) => ` ${name}="${escapeXmlAttribute(String(value))}"`)
    .join('');

const seconds = (ms: number): string => (Math.max(0, ms) / 1000).toFixed(3);

function firstLine(text: string, max = 200): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function testcase(item: CaseResult, verdict: BoundaryVerdict): string {
  const open = `    <testcase${attrs({ classname: `trace-inspector.${item.id}`, name: rowName(verdict), time: seconds(verdict.durationMs) })}`;
  const body = (): string =>
    [
      `case ${item.id}, ${rowName(verdict)} (stage ${verdict.stage})`,
      `${verdict.verdict}${verdict.kind ? ` (${verdict.kind})` : ''}: ${verdict.reason}`,
      ...describeDivergence(verdict).slice(1),
    ].join('\n');
  switch (verdict.verdict) {
    case 'PASS':
      return `${open}/>`;
    case 'FAIL':
    case 'REVIEW_REQUIRED':
      return (
        `${open}>\n      <failure${attrs({ type: verdict.verdict === 'FAIL' ? (verdict.kind ?? 'fail') : 'review_required', message: firstLine(`${verdict.verdict}: ${verdict.reason}`) })}>` +
        `${escapeXmlText(body())}</failure>\n    </testcase>`
      );
    case 'GAP':
    case 'KNOWN_GAP':
      return (
        `${open}>\n      <skipped${attrs({ message: firstLine(`${verdict.verdict}${verdict.gapId ? ` ${verdict.gapId}` : ''}: ${verdict.reason}`) })}>` +
        `${escapeXmlText(body())}</skipped>\n    </testcase>`
      );
  }
}

function suite(result: GateResult, item: CaseResult): string {
  const failures = item.counts.FAIL + item.counts.REVIEW_REQUIRED;
  const skipped = item.counts.GAP + item.counts.KNOWN_GAP;
  const time = item.verdicts.reduce((sum, verdict) => sum + verdict.durationMs, 0);
  const properties = [
    ['run', item.run.outcome.status],
    ['run_summary', item.run.summary],
    ['reference', item.reference.dir],
    ['oracle', item.oracle?.dir ?? 'none'],
    ...item.gaps.map((gap) => ['gap', gap.id]),
    // A broken stream bound is also the <failure> of its last pass's testcase; the property keeps every stream's metrics.
    ...(item.audio ?? []).map((judgement) => ['audio', audioStreamText(judgement)]),
    // The run's seals (they cover every case) on each suite: the root element has no properties in the common schemas.
    ...result.seals.lines.map((line) => ['seal', line]),
  ];
  const systemOut = item.run.outcome.status === 'completed' ? '' : `\n    <system-err>${escapeXmlText(item.run.summary)}</system-err>`;
  return [
    `  <testsuite${attrs({ name: item.id, tests: item.verdicts.length, failures, errors: 0, skipped, time: seconds(time), timestamp: result.startedAt.replace(/\.\d+Z$/, '').replace(/Z$/, '') })}>`,
    '    <properties>',
    ...properties.map(([name, value]) => `      <property${attrs({ name: name as string, value: value as string })}/>`),
    '    </properties>',
    ...item.verdicts.map((verdict) => testcase(item, verdict)),
    `${systemOut ? systemOut.slice(1) : ''}`,
    '  </testsuite>',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

export function formatJunit(result: GateResult): string {
  const tests = result.cases.reduce((sum, item) => sum + item.verdicts.length, 0);
  const failures = result.counts.FAIL + result.counts.REVIEW_REQUIRED;
  const skipped = result.counts.GAP + result.counts.KNOWN_GAP;
  const time = (Date.parse(result.finishedAt) - Date.parse(result.startedAt)) / 1000;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: 'trace-inspector gate', tests, failures, errors: 0, skipped, time: Number.isFinite(time) ? time.toFixed(3) : '0' })}>`,
    ...result.cases.map((item) => suite(result, item)),
    '</testsuites>',
    '',
  ].join('\n');
}

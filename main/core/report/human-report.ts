// The gate's report for people, on stdout: a header (tool, engine, bundles and their provenance,
// how each run ended), a per-case summary, the worst rows first, the first divergence with its
// where / how much / what kind, the files written, and the seals as the very last lines.
import type { BoundaryVerdict, CaseResult, GateResult } from '../gate/gate-types.ts';
import { describeViolation, formatAudioMetrics } from '../audio/audio-bounds.ts';
import {
  audioStreamText,
  failingSide,
  firstDivergenceOf,
  formatShare,
  formatStat,
  formatTable,
  mismatchText,
  rowsWorstFirst,
  rowName,
  shortSha,
} from './report-format.ts';

export interface HumanReportOptions {
  /** Most non-PASS rows listed (default 25). */
  maxRows?: number;
  /** Files written by this run, listed before the seals. */
  files?: { label: string; path: string }[];
  /** Replaces the gate's header (compare names two bundles, not an engine run). */
  header?: string[];
}

function provenanceLine(item: CaseResult): string {
  const reference = item.reference;
  const runtime = Object.entries(reference.runtime)
    .filter(([name]) => ['torch', 'python'].includes(name))
    .map(([name, value]) => `${name} ${String(value)}`)
    .join(', ');
  const generator = `${reference.generator.revision.slice(0, 10)}${reference.generator.dirty ? ' (dirty)' : ''}`;
  return `${reference.precision}, ${runtime || 'runtime not stated'}, generator ${generator}, created ${reference.createdAt}`;
}

function runLine(item: CaseResult): string {
  const { run } = item;
  if (run.outcome.status === 'completed') return `completed ${run.passesCompleted}/${run.passesExpected} passes`;
  return `${run.outcome.status.toUpperCase()} after ${run.passesCompleted}/${run.passesExpected} passes: ${run.summary}`;
}

// A comparison of two bundles ran no engine: it has no isolation or timeout to state.
function engineRunLine(options: GateResult['options']): string {
  const isolation = options.isolation === null ? '' : `, isolation ${options.isolation}`;
  return options.passTimeoutMs === null ? isolation : `${isolation}, timeout ${options.passTimeoutMs / 1000} s per call`;
}

function header(result: GateResult): string[] {
  const { tool, engine } = result;
  const lines = [
    `trace-inspector ${tool.version} gate (commit ${tool.commit === 'unknown' ? 'unknown' : tool.commit.slice(0, 10)}${tool.dirty ? ', modified' : ''})`,
    `engine   ${engine.name} ${engine.version} (build ${engine.buildId}, ABI ${engine.abiVersion}, ${engine.catalogue.length} boundaries declared)`,
    `         ${engine.library}  sha256 ${shortSha(engine.sha256)}`,
    `run      strict ${result.strict ? 'yes' : 'no'}${engineRunLine(result.options)}` +
      `${result.options.teacherForce ? ', teacher forcing' : ''}${result.options.isolate ? ', layer isolation' : ''}` +
      `, options ${
        Object.keys(result.options.engineOptions).length === 0
          ? 'none'
          : Object.entries(result.options.engineOptions)
              .map(([key, value]) => `${key}=${value}`)
              .join(' ')
      }`,
  ];
  if (result.options.referenceContracts != null) lines.push(`contracts ${result.options.referenceContracts.description}`);
  if (result.ledger.length > 0) lines.push(`ledger   ${result.ledger.length} known gap(s): ${result.ledger.map((entry) => entry.id).join(', ')}`);
  for (const item of result.cases) {
    lines.push(`case     ${item.id}`);
    lines.push(`  reference  ${item.reference.dir}  (${provenanceLine(item)})`);
    lines.push(`  oracle     ${item.oracle === null ? 'none (gap)' : `${item.oracle.dir}  (${item.oracle.precision})`}`);
    lines.push(
      `  weights    ${item.weights === null ? 'no weights (the reference names none; the engine opened with none)' : `${item.weights.path}  sha256 ${shortSha(item.weights.sha256)}`}`,
    );
    lines.push(`  run        ${runLine(item)}`);
    if (item.nativeDir !== null) lines.push(`  native     ${item.nativeDir}`);
  }
  for (const warning of result.warnings) lines.push(`warning  ${warning}`);
  return lines;
}

function caseSummary(result: GateResult): string[] {
  const rows = result.cases.map((item) => {
    const first = item.firstDivergence === null ? null : item.verdicts[item.firstDivergence];
    return [
      item.id,
      `${item.run.passesCompleted}/${item.run.passesExpected}`,
      String(item.counts.PASS),
      String(item.counts.FAIL),
      String(item.counts.REVIEW_REQUIRED),
      String(item.counts.KNOWN_GAP),
      String(item.counts.GAP),
      first ? `${rowName(first)} (${first.verdict})` : '-',
    ];
  });
  return formatTable(['case', 'passes', 'PASS', 'FAIL', 'REVIEW', 'KNOWN_GAP', 'GAP', 'first divergence'], rows);
}

function verdictRow(verdict: BoundaryVerdict): string[] {
  const side = failingSide(verdict);
  const record = side?.record ?? verdict.reference;
  return [
    verdict.verdict,
    verdict.case,
    String(verdict.pass),
    verdict.boundary,
    verdict.kind ?? '-',
    mismatchText(verdict),
    formatStat(record?.maxAbs),
    formatStat(record?.maxUlp),
    verdict.gapId ?? verdict.ledgerId ?? (side ? `vs ${side.against}` : ''),
  ];
}

/** Where / how much / what kind of the first divergence, one item per line. */
export function describeDivergence(verdict: BoundaryVerdict): string[] {
  const side = failingSide(verdict);
  const head = `  verdict    ${verdict.verdict}${verdict.kind ? ` (${verdict.kind})` : ''}`;
  // A plain FAIL is fully told by the lines below; other verdicts need their reason (which oracle, which ledger entry, which crash).
  const lines = [side !== null && verdict.verdict === 'FAIL' ? `${head} against the ${side.against}` : `${head}: ${verdict.reason}`];
  if (side === null) return lines;
  const { record, against } = side;
  if (record.structural !== null) {
    lines.push(`  what kind  ${record.structural.problem}: ${record.structural.detail}`);
    return lines;
  }
  const first = record.firstMismatch;
  const worst = record.worst;
  if (first)
    lines.push(
      `  where      first mismatch at [${first.index.join(', ')}] (flat ${first.flatIndex}): native ${String(first.native)} vs ${against} ${String(first.reference)}`,
    );
  if (worst)
    lines.push(
      `             worst at [${worst.index.join(', ')}]: native ${String(worst.native)} vs ${against} ${String(worst.reference)}, abs error ${formatStat(worst.absError)}, ${formatStat(worst.ulp)} ULP`,
    );
  lines.push(
    `  how much   ${record.mismatches}/${record.elements} elements (${formatShare(record.mismatchShare)}) outside; max abs ${formatStat(record.maxAbs)}, ` +
      `max rel ${formatStat(record.maxRel)}, max ULP ${formatStat(record.maxUlp)}, RMSE ${formatStat(record.rmse)}` +
      (record.oracle ? `, RMSE vs fp64 oracle ${formatStat(record.oracle.native.rmse)} (reference: ${formatStat(record.oracle.reference.rmse)})` : ''),
  );
  lines.push(
    `  needed     abs ${formatStat(record.required.abs)}, rel ${formatStat(record.required.rel)}, ULP ${formatStat(record.required.ulp)} would have passed`,
  );
  const kinds = Object.entries(record.classes)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
  if (kinds) lines.push(`  what kind  ${kinds}`);
  const audio = record.audio;
  if (audio != null) {
    lines.push(`  audio      ${audio.samples} samples: ${formatAudioMetrics(audio.metrics, audio.bounds)}`);
    if (!audio.passed) lines.push(`             broken: ${audio.violations.map(describeViolation).join('; ')}`);
  }
  return lines;
}

/** The audio streams the contracts bound, one line each (the informative unbounded line is the CLI's). */
function audioStreams(result: GateResult): string[] {
  return result.cases.flatMap((item) => (item.audio ?? []).map((judgement) => `audio    ${item.id} ${audioStreamText(judgement)}`));
}

export function formatHumanReport(result: GateResult, options: HumanReportOptions = {}): string {
  const maxRows = options.maxRows ?? 25;
  const streams = audioStreams(result);
  const lines: string[] = [...(options.header ?? header(result)), '', ...caseSummary(result), '', ...(streams.length > 0 ? [...streams, ''] : [])];

  const notPassing = rowsWorstFirst(result).filter((verdict) => verdict.verdict !== 'PASS');
  const total = result.cases.reduce((sum, item) => sum + item.verdicts.length, 0);
  if (notPassing.length === 0) {
    lines.push(`all ${total} boundary rows PASS`);
  } else {
    const shown = notPassing.slice(0, maxRows);
    lines.push(...formatTable(['verdict', 'case', 'pass', 'boundary', 'kind', 'mismatches', 'max abs', 'max ULP', 'note'], shown.map(verdictRow)));
    const hidden = notPassing.length - shown.length;
    lines.push(
      `(${shown.length} of ${notPassing.length} rows that are not PASS, worst first${hidden > 0 ? `; ${hidden} more in the JSON / JUnit reports` : ''}; ${result.counts.PASS} PASS rows not listed)`,
    );
  }
  lines.push('');

  const first = firstDivergenceOf(result);
  if (first === null) {
    lines.push('first divergence: none');
  } else {
    lines.push(`first divergence: case ${first.item.id}, ${rowName(first.verdict)} (stage ${first.verdict.stage})`);
    lines.push(...describeDivergence(first.verdict));
  }
  for (const item of result.cases) {
    if (item.run.outcome.status !== 'completed') lines.push(`run of case ${item.id}: ${item.run.summary}`);
    if (item.compared === 0) {
      lines.push(`case ${item.id} compared nothing (its reference lists ${item.reference.passes} passes): it fails the run whatever the other cases did`);
    }
  }
  const { counts } = result;
  lines.push(
    '',
    `${total} rows: ${counts.PASS} PASS, ${counts.FAIL} FAIL, ${counts.REVIEW_REQUIRED} REVIEW_REQUIRED, ${counts.KNOWN_GAP} KNOWN_GAP, ${counts.GAP} GAP; ` +
      `${result.compared} compared with the reference`,
  );
  for (const file of options.files ?? []) lines.push(`${file.label.padEnd(8)} ${file.path}`);
  lines.push(...result.seals.lines);
  return `${lines.join('\n')}\n`;
}

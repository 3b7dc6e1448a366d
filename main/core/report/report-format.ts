// Small formatting helpers shared by the gate's reports (human table, JUnit, Actions, Markdown).
import { formatAudioMetrics } from '../audio/audio-bounds.ts';
import type { AudioStreamJudgement, BoundaryVerdict, CaseResult, GateResult } from '../gate/gate-types.ts';
import { VERDICT_SEVERITY } from '../gate/verdicts.ts';

/** A statistic for people: 4 significant digits, exponent form when very small or large. */
export function formatStat(value: number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (Number.isInteger(value) && abs < 1e9) return String(value);
  return abs >= 1e-3 && abs < 1e6 ? String(Number(value.toPrecision(4))) : value.toExponential(2);
}

export function formatShare(share: number): string {
  if (!Number.isFinite(share)) return String(share);
  const percent = share * 100;
  return `${percent < 0.1 && percent > 0 ? percent.toPrecision(2) : percent.toFixed(1)}%`;
}

export function shortSha(sha256: string): string {
  return sha256.slice(0, 12);
}

/** "pass 3 / backbone.l2.out": the name a row goes by in every report. */
export function rowName(verdict: Pick<BoundaryVerdict, 'pass' | 'boundary'>): string {
  return `pass ${verdict.pass} / ${verdict.boundary}`;
}

/** Mismatch count of the side that failed (the reference side, else the oracle side). */
export function mismatchText(verdict: BoundaryVerdict): string {
  const record =
    verdict.reference !== null && (verdict.reference.mismatches > 0 || verdict.reference.structural !== null)
      ? verdict.reference
      : (verdict.oracle ?? verdict.reference);
  if (record === null) return '-';
  if (record.structural !== null) return record.structural.problem;
  return `${record.mismatches}/${record.elements}`;
}

/** Every row of every case, worst first: verdict severity, then mismatch share, then execution order. */
export function rowsWorstFirst(result: GateResult): BoundaryVerdict[] {
  const order = new Map<BoundaryVerdict, number>();
  let position = 0;
  for (const item of result.cases) for (const verdict of item.verdicts) order.set(verdict, position++);
  const share = (verdict: BoundaryVerdict): number => {
    const shares = [verdict.reference?.mismatchShare ?? 0, verdict.oracle?.mismatchShare ?? 0].filter(Number.isFinite);
    return Math.max(0, ...shares);
  };
  return result.cases
    .flatMap((item) => item.verdicts)
    .sort((a, b) => VERDICT_SEVERITY[b.verdict] - VERDICT_SEVERITY[a.verdict] || share(b) - share(a) || (order.get(a) as number) - (order.get(b) as number));
}

/** The verdict the first divergence points at, if any. */
export function firstDivergenceOf(result: GateResult): { item: CaseResult; verdict: BoundaryVerdict } | null {
  const ref = result.firstDivergence;
  if (ref === null) return null;
  const item = result.cases.find((candidate) => candidate.id === ref.case);
  const verdict = item?.verdicts[ref.index];
  return item && verdict ? { item, verdict } : null;
}

/** The failing comparison of a verdict: the reference side when it failed, else the oracle side. */
export function failingSide(verdict: BoundaryVerdict): { against: 'reference' | 'oracle'; record: NonNullable<BoundaryVerdict['reference']> } | null {
  const failed = (record: BoundaryVerdict['reference']): boolean => record !== null && (record.structural !== null || record.mismatches > 0 || !record.passed);
  if (failed(verdict.reference)) return { against: 'reference', record: verdict.reference as NonNullable<BoundaryVerdict['reference']> };
  if (failed(verdict.oracle)) return { against: 'oracle', record: verdict.oracle as NonNullable<BoundaryVerdict['oracle']> };
  return null;
}

/** Pads a table: columns separated by two spaces, the last one unpadded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** "detok.pcm passes 0-20 (26400 samples): PASS — ESR 1.2e-10 (max 3e-7), ...": one audio stream judgement. */
export function audioStreamText(judgement: AudioStreamJudgement): string {
  return (
    `${judgement.boundary} passes ${judgement.passRange} (${judgement.samples} samples): ${judgement.passed ? 'PASS' : 'FAIL'} — ` +
    formatAudioMetrics(judgement.metrics, judgement.bounds)
  );
}

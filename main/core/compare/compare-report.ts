// The head of compare's report for people (the rest is the gate's: human-report.ts): the tool,
// the two bundles (and the oracle) with their provenance, where the contracts came from, and what
// the map did — every candidate boundary declared unmapped, and every one no map entry covers.
import { shortSha } from '../report/report-format.ts';
import type { BundleSummary } from '../gate/gate-types.ts';
import type { CompareResult } from './compare-run.ts';

function passList(passes: readonly number[]): string {
  if (passes.length <= 6) return passes.join(', ');
  return `${passes.slice(0, 3).join(', ')}, ... ${passes.at(-1)} (${passes.length} passes)`;
}

function bundleLine(role: string, summary: BundleSummary): string {
  const runtime = Object.entries(summary.runtime)
    .filter(([name]) => ['torch', 'engine_name', 'engine_version', 'engine_build_id'].includes(name))
    .map(([name, value]) => `${name} ${String(value)}`)
    .join(', ');
  return `${role.padEnd(10)} ${summary.dir}  (${summary.kind}, ${summary.precision}${runtime ? `, ${runtime}` : ''}, created ${summary.createdAt}; manifest sha256 ${shortSha(summary.manifestSha256)})`;
}

export function compareHeader(result: CompareResult): string[] {
  const { tool, comparison } = result;
  const item = result.cases[0];
  const lines = [
    `trace-inspector ${tool.version} compare (commit ${tool.commit === 'unknown' ? 'unknown' : tool.commit.slice(0, 10)}${tool.dirty ? ', modified' : ''})${comparison.baseline ? ': regression mode (--baseline)' : ''}`,
    `case       ${item?.id ?? ''}`,
    bundleLine(comparison.baseline ? 'baseline' : 'reference', comparison.reference),
    bundleLine('candidate', comparison.candidate),
    comparison.oracle === null ? 'oracle     none (every boundary is judged against the reference alone)' : bundleLine('oracle', comparison.oracle),
    `contracts  ${comparison.contracts.description}${comparison.contracts.sha256 !== null ? `  sha256 ${shortSha(comparison.contracts.sha256)}` : ''}`,
    `strict     ${result.strict ? 'yes' : 'no'}`,
  ];
  if (item !== undefined && item.run.outcome.status !== 'completed') lines.push(`run        ${item.run.summary}`);
  const map = comparison.map;
  if (map !== null) {
    const unknown = map.uncovered.filter((row) => !row.inReference);
    lines.push(
      `map        ${map.file}  sha256 ${shortSha(map.sha256)}: ${map.mapped.length} candidate boundary name(s) mapped, ${map.unmapped.length} declared unmapped, ` +
        `${map.uncovered.length} kept under their own name, ${unknown.length} of them unknown to the reference`,
    );
    for (const row of map.unmapped)
      lines.push(`  unmapped   ${row.candidate} (passes ${passList(row.passes)}): declared unmapped (unmapped[${row.rule}]): ${row.reason}`);
    // A name no entry covers and the reference lacks is neither mapped nor declared: said here, and a gap in the rows.
    for (const row of unknown)
      lines.push(
        `  uncovered  ${row.candidate} (passes ${passList(row.passes)}): no map entry covers it and the reference has no boundary of that name (not compared)`,
      );
  }
  if (result.ledger.length > 0) lines.push(`ledger     ${result.ledger.length} known gap(s): ${result.ledger.map((entry) => entry.id).join(', ')}`);
  for (const warning of result.warnings) lines.push(`warning    ${warning}`);
  return lines;
}

// Pairs the records of a native bundle with a reference bundle by (pass, boundary) and judges
// each pair with the comparator (compareBoundary) under the reference's contract: the compact
// per-boundary view that `capture` prints. The gate adds verdicts, oracles and the ledger.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { isFloatDType, type DType } from '../bundle/dtype.ts';
import type { BoundaryEntry } from '../bundle/manifest-schema.ts';
import { compareBoundary } from '../compare/compare-boundary.ts';
import type { BoundaryComparison } from '../compare/comparison-types.ts';

export type BoundaryDiffStatus =
  | 'identical' // every element equal (bit for bit; NaN equals NaN)
  | 'within' // differs, every element inside the faithful contract
  | 'outside' // a faithful boundary with elements outside the contract
  | 'differs' // a bit-exact boundary that differs
  | 'missing' // in the reference, not in the native run
  | 'extra' // in the native run, not in the reference
  | 'mismatch'; // dtype, shape or layout disagree, or the contract cannot be evaluated

/** The element statistics the table shows, from the comparator's result. */
export interface BoundaryDiffStats {
  elements: number;
  mismatches: number;
  maxAbs: number;
  maxUlp: number;
}

export interface BoundaryDiffRow {
  pass: number;
  boundary: string;
  stage: string;
  dtype: DType;
  shape: readonly number[];
  floating: boolean;
  contract: 'bit_exact' | 'faithful' | 'none';
  status: BoundaryDiffStatus;
  detail: string;
  diff: BoundaryDiffStats | null;
}

function rowFor(pass: number, entry: BoundaryEntry, status: BoundaryDiffStatus, detail = '', diff: BoundaryDiffStats | null = null): BoundaryDiffRow {
  return {
    pass,
    boundary: entry.name,
    stage: entry.stage,
    dtype: entry.dtype,
    shape: entry.shape,
    floating: isFloatDType(entry.dtype),
    contract: entry.contract === null ? 'none' : entry.contract.kind,
    status,
    detail,
    diff,
  };
}

function statusOf(comparison: BoundaryComparison): BoundaryDiffStatus {
  if (comparison.passed && comparison.maxAbs === 0 && comparison.maxUlp === 0 && comparison.mismatches === 0) return 'identical';
  if (comparison.contract.kind === 'bit_exact') return comparison.passed ? 'identical' : 'differs';
  return comparison.passed ? 'within' : 'outside';
}

/** Diff every (pass, boundary) of the reference against the native bundle, in execution order. */
export async function diffCapture(native: TraceBundle, reference: TraceBundle): Promise<BoundaryDiffRow[]> {
  const rows: BoundaryDiffRow[] = [];
  for (const referencePass of reference.passes) {
    const seen = new Set<string>();
    for (const referenceEntry of referencePass.boundaries) {
      seen.add(referenceEntry.name);
      const comparison = await compareBoundary({ native, reference }, referencePass.index, referenceEntry.name);
      if (comparison.structural !== null) {
        const status = comparison.structural.problem === 'missing' ? 'missing' : 'mismatch';
        rows.push(rowFor(referencePass.index, referenceEntry, status, `${comparison.structural.problem}: ${comparison.structural.detail}`));
        continue;
      }
      if (comparison.gap !== null) {
        rows.push(rowFor(referencePass.index, referenceEntry, 'mismatch', `not evaluable: ${comparison.gap}`));
        continue;
      }
      const stats: BoundaryDiffStats = {
        elements: comparison.elements,
        mismatches: comparison.mismatches,
        maxAbs: comparison.maxAbs,
        maxUlp: comparison.maxUlp,
      };
      rows.push(rowFor(referencePass.index, referenceEntry, statusOf(comparison), '', stats));
    }
    const nativePass = native.passes.find((pass) => pass.index === referencePass.index);
    for (const nativeEntry of nativePass?.boundaries ?? []) {
      if (!seen.has(nativeEntry.name)) rows.push(rowFor(referencePass.index, nativeEntry, 'extra'));
    }
  }
  return rows;
}

export interface CaptureDiffSummary {
  compared: number;
  identical: number;
  within: number;
  failing: number;
  missing: number;
  extra: number;
  /** The first failing row in execution order (pass, then catalogue order). */
  firstFailure: BoundaryDiffRow | null;
}

export function summarizeCaptureDiff(rows: readonly BoundaryDiffRow[]): CaptureDiffSummary {
  const summary: CaptureDiffSummary = { compared: 0, identical: 0, within: 0, failing: 0, missing: 0, extra: 0, firstFailure: null };
  for (const row of rows) {
    if (row.status === 'missing') summary.missing += 1;
    else if (row.status === 'extra') summary.extra += 1;
    else summary.compared += 1;
    if (row.status === 'identical') summary.identical += 1;
    if (row.status === 'within') summary.within += 1;
    const failing = row.status === 'outside' || row.status === 'differs' || row.status === 'mismatch' || row.status === 'missing';
    if (failing) {
      summary.failing += 1;
      if (summary.firstFailure === null) summary.firstFailure = row;
    }
  }
  return summary;
}

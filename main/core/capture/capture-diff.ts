// Pairs the records of a native bundle with a reference bundle by (pass, boundary) and diffs
// each pair under the reference's contract: the quick per-boundary check that `capture`
// prints. (The gate's comparator adds the full statistics, classification and verdicts.)
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { isFloatDType, type DType } from '../bundle/dtype.ts';
import type { BoundaryEntry, Contract } from '../bundle/manifest-schema.ts';
import { diffElements, type ElementDiff, type ElementTolerance } from '../compare/element-diff.ts';

export type BoundaryDiffStatus =
  | 'identical' // every element equal (bit for bit; NaN equals NaN)
  | 'within' // differs, every element inside the faithful contract
  | 'outside' // a faithful boundary with elements outside the contract
  | 'differs' // a bit-exact boundary that differs
  | 'missing' // in the reference, not in the native run
  | 'extra' // in the native run, not in the reference
  | 'mismatch'; // dtype or shape disagree: values not comparable

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
  diff: ElementDiff | null;
}

export function toleranceOf(contract: Contract | null): ElementTolerance | null {
  if (contract === null || contract.kind === 'bit_exact') return null;
  return {
    abs: contract.abs,
    rel: contract.rel,
    maxUlp: contract.max_ulp,
    signedZeroMustMatch: contract.signed_zero === 'must_match',
  };
}

function rowFor(pass: number, entry: BoundaryEntry, status: BoundaryDiffStatus, detail = '', diff: ElementDiff | null = null): BoundaryDiffRow {
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

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((extent, i) => extent === b[i]);
}

/** Diff every (pass, boundary) of the reference against the native bundle, in execution order. */
export async function diffCapture(native: TraceBundle, reference: TraceBundle): Promise<BoundaryDiffRow[]> {
  const rows: BoundaryDiffRow[] = [];
  for (const referencePass of reference.passes) {
    const seen = new Set<string>();
    for (const referenceEntry of referencePass.boundaries) {
      seen.add(referenceEntry.name);
      const nativeEntry = native.boundary(referencePass.index, referenceEntry.name);
      if (nativeEntry === undefined) {
        rows.push(rowFor(referencePass.index, referenceEntry, 'missing'));
        continue;
      }
      if (nativeEntry.dtype !== referenceEntry.dtype) {
        rows.push(rowFor(referencePass.index, referenceEntry, 'mismatch', `dtype ${nativeEntry.dtype} vs ${referenceEntry.dtype}`));
        continue;
      }
      if (!sameShape(nativeEntry.shape, referenceEntry.shape)) {
        rows.push(
          rowFor(referencePass.index, referenceEntry, 'mismatch', `shape [${nativeEntry.shape.join(',')}] vs [${referenceEntry.shape.join(',')}]`),
        );
        continue;
      }
      const [nativeTensor, referenceTensor] = await Promise.all([
        native.readBoundary(referencePass.index, referenceEntry.name),
        reference.readBoundary(referencePass.index, referenceEntry.name),
      ]);
      const tolerance = toleranceOf(referenceEntry.contract);
      const diff = diffElements(referenceEntry.dtype, referenceEntry.shape, nativeTensor.data, referenceTensor.data, tolerance);
      let status: BoundaryDiffStatus;
      if (diff.differing === 0 && diff.outside === 0) status = 'identical';
      else if (tolerance === null) status = 'differs';
      else status = diff.outside === 0 ? 'within' : 'outside';
      rows.push(rowFor(referencePass.index, referenceEntry, status, '', diff));
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

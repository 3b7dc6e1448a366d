// One verdict per (case, pass, boundary), decided from what is known about it: whether the run
// reached it, what the engine's catalogue says, whether native emitted it, and the two
// comparisons (native vs the reference under the reference's contract, native vs the fp64
// oracle under the oracle's). Pure: gate-run.ts gathers the facts, this file judges them.
//
//   PASS             compared in full and inside its contract against the reference and, when the
//                    case has an oracle, against the oracle too
//   FAIL             outside its contract (kept: where, how much, what kind); a boundary the
//                    catalogue promises for this pass and the engine did not emit (kind missing);
//                    a boundary a crash never let the engine reach (kind missing, crash named)
//   GAP              not compared: the engine does not declare it, the oracle lacks it, a contract
//                    cannot be evaluated, native emitted something the reference lacks
//   KNOWN_GAP        declared in the ledger and still failing against the reference
//   REVIEW_REQUIRED  native passes one oracle and fails the other, or a ledger entry now passes
import { describeViolation } from '../audio/audio-bounds.ts';
import type { BoundaryComparison } from '../compare/comparison-types.ts';
import type { FailureKind, LedgerEntry, OracleSide, Verdict } from './gate-types.ts';

/** Where the catalogue stands on this (pass, boundary). */
export type CatalogueStance =
  | 'emitted' // declared, and promised for a pass of this kind and mode
  | 'not_emitted' // declared, but the catalogue says it is not emitted in a pass like this
  // declared `engine_decides`: the engine emits it when it chooses. Absent from the run where the
  // reference has it, it is neither a GAP nor a FAIL: case-verdicts.ts makes no row for it (only
  // an unreached or unreadable one is judged, as for every stance).
  | 'engine_decides'
  | 'undeclared'; // the catalogue does not declare it at all

export interface VerdictFacts {
  caseId: string;
  pass: number;
  boundary: string;
  /** The reference has this (pass, boundary); false for native records the reference lacks. */
  inReference: boolean;
  inNative: boolean;
  catalogue: CatalogueStance;
  /** Set when the run ended (crash, timeout, engine error) before reaching this boundary. */
  unreachedBecause: string | null;
  /** Set when the evidence for this boundary could not be read (digest, truncated file...). */
  unreadable: string | null;
  /** Native vs reference; null when not compared. */
  reference: BoundaryComparison | null;
  oracleSide: OracleSide;
  /** Native vs oracle; null unless oracleSide is 'compared'. */
  oracle: BoundaryComparison | null;
  ledger: LedgerEntry | null;
}

export interface Judgement {
  verdict: Verdict;
  kind: FailureKind | null;
  reason: string;
  gapId: string | null;
}

/** Gap ids, stable across runs so CI can track them. */
export const gapIds = {
  oracleAbsent: (caseId: string): string => `oracle_absent:${caseId}`,
  notInCatalogue: (boundary: string): string => `not_in_catalogue:${boundary}`,
  notEmittedPerCatalogue: (boundary: string): string => `catalogue_excludes:${boundary}`,
  oracleLacks: (caseId: string, boundary: string): string => `oracle_lacks:${caseId}:${boundary}`,
  notInReference: (caseId: string, boundary: string): string => `not_in_reference:${caseId}:${boundary}`,
  contractUnevaluable: (caseId: string, boundary: string): string => `contract_unevaluable:${caseId}:${boundary}`,
  oracleContractUnevaluable: (caseId: string, boundary: string): string => `oracle_contract_unevaluable:${caseId}:${boundary}`,
  knownGap: (ledgerId: string): string => `known_gap:${ledgerId}`,
} as const;

type SideState = 'pass' | 'fail' | 'gap';

/** How one comparison came out: passed, failed (outside its contract), or not fully evaluable. */
export function sideState(comparison: BoundaryComparison): SideState {
  // The comparator states its outcome; the fields are re-checked so that a comparison whose
  // values failed is never softened into a pass or a gap.
  if (comparison.outcome === 'fail') return 'fail';
  if (comparison.structural !== null) return 'fail';
  if (comparison.mismatches > 0) return 'fail';
  if (comparison.oracleRel !== null && comparison.oracleRel !== undefined && !comparison.oracleRel.passed) return 'fail';
  if (comparison.audio != null && !comparison.audio.passed) return 'fail';
  if (comparison.gap != null || comparison.outcome === 'gap') return 'gap';
  return comparison.passed ? 'pass' : 'fail';
}

/** The kind of a failed comparison: the structural problem, else the class of the first mismatch. */
export function failureKind(comparison: BoundaryComparison): FailureKind {
  if (comparison.structural !== null) return comparison.structural.problem;
  // A PCM signal outside its audio bounds is told as 'audio' when its elements fail (if at all)
  // only by degree ('value'): the error then shows in the signal as a whole, not in a few
  // samples. A NaN, an infinity, a signed zero or bad padding is no matter of degree and keeps
  // its own kind.
  const audioBroken = comparison.audio != null && !comparison.audio.passed;
  if (audioBroken && Object.entries(comparison.classes).every(([name, count]) => name === 'value' || count === 0)) return 'audio';
  if (comparison.firstMismatch !== null) return comparison.firstMismatch.class;
  // Only the error relative to the fp64 oracle is out of bound: a value failure.
  if (comparison.mismatches === 0 && comparison.oracleRel?.passed === false) return 'value';
  let best: FailureKind = 'other';
  let bestCount = 0;
  for (const [name, count] of Object.entries(comparison.classes)) {
    if (count > bestCount) {
      best = name as FailureKind;
      bestCount = count;
    }
  }
  return best;
}

const formatNumber = (value: number): string => {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const abs = Math.abs(value);
  return abs >= 1e-3 && abs < 1e6 ? String(Number(value.toPrecision(4))) : value.toExponential(3);
};

const formatValue = (value: number | string): string => (typeof value === 'number' ? formatNumber(value) : value);

/** One sentence on a failed comparison: how many, what kind, where first and worst, how much. */
export function describeFailure(comparison: BoundaryComparison, against: 'reference' | 'oracle'): string {
  if (comparison.structural !== null) {
    return `${comparison.structural.problem} mismatch against the ${against}: ${comparison.structural.detail}`;
  }
  const share = (comparison.mismatchShare * 100).toFixed(comparison.mismatchShare < 0.001 ? 3 : 1);
  const classes = Object.entries(comparison.classes)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
  const parts = [`${comparison.mismatches}/${comparison.elements} elements (${share}%) outside the ${against}'s ${comparison.contract.kind} contract`];
  if (classes) parts.push(`kinds: ${classes}`);
  const first = comparison.firstMismatch;
  if (first !== null) {
    parts.push(`first at [${first.index.join(', ')}]: native ${formatValue(first.native)} vs ${formatValue(first.reference)} (${first.class})`);
  }
  const worst = comparison.worst;
  if (worst !== null && (first === null || worst.flatIndex !== first.flatIndex)) {
    parts.push(`worst at [${worst.index.join(', ')}]: native ${formatValue(worst.native)} vs ${formatValue(worst.reference)}`);
  }
  parts.push(`max abs ${formatNumber(comparison.maxAbs)}, max rel ${formatNumber(comparison.maxRel)}, max ULP ${formatNumber(comparison.maxUlp)}`);
  if (comparison.oracle !== null) parts.push(`RMSE vs oracle ${formatNumber(comparison.oracle.native.rmse)}`);
  const bound = comparison.oracleRel;
  if (bound != null && !bound.passed) {
    parts.push(
      `RMS error vs the fp64 oracle ${formatNumber(bound.nativeRmse)} exceeds oracle_rel ${formatNumber(bound.bound)} x RMS(oracle) ${formatNumber(bound.oracleRms)}`,
    );
  }
  const audio = comparison.audio;
  if (audio != null && !audio.passed) {
    parts.push(`audio of this record (${audio.samples} samples): ${audio.violations.map(describeViolation).join('; ')}`);
  }
  const audioFailed = audio != null && !audio.passed;
  if (!comparison.passed && comparison.mismatches === 0 && comparison.structural === null && !(bound != null && !bound.passed) && !audioFailed) {
    parts.push('the comparison did not pass');
  }
  return parts.join('; ');
}

function gapOf(comparison: BoundaryComparison): string {
  return comparison.gap ?? 'the contract could not be evaluated';
}

/** Applies the ledger to a verdict reached without it. */
function withLedger(raw: Judgement, facts: VerdictFacts, referenceState: SideState | null): Judgement {
  const entry = facts.ledger;
  if (entry === null) return raw;
  // A crash is a different failure than the one the ledger declares: never absorbed by it.
  if (facts.unreachedBecause !== null || facts.unreadable !== null) return raw;
  if (referenceState === 'pass') {
    return {
      verdict: 'REVIEW_REQUIRED',
      kind: raw.kind,
      reason:
        `known gap ${entry.id} now passes against the reference${raw.verdict === 'REVIEW_REQUIRED' ? ` (and: ${raw.reason})` : ''}; ` +
        `confirm the fix and remove the entry (reopen evidence: ${entry.reopen_evidence})`,
      gapId: null,
    };
  }
  // Not compared against the reference: nothing new is known about the declared gap.
  if (raw.verdict === 'GAP') return raw;
  // FAIL, or REVIEW_REQUIRED with the reference side failing: still broken as declared.
  return {
    verdict: 'KNOWN_GAP',
    kind: raw.kind,
    reason: `known gap ${entry.id} (${entry.reason}) still fails: ${raw.reason}`,
    gapId: gapIds.knownGap(entry.id),
  };
}

export function judgeBoundary(facts: VerdictFacts): Judgement {
  const { caseId, boundary } = facts;
  if (facts.unreadable !== null) {
    return { verdict: 'FAIL', kind: 'unreadable', reason: `evidence unreadable: ${facts.unreadable}`, gapId: null };
  }
  if (!facts.inReference) {
    return {
      verdict: 'GAP',
      kind: null,
      reason: 'the engine emitted this record but the reference has no such boundary in this pass: not compared',
      gapId: gapIds.notInReference(caseId, boundary),
    };
  }
  if (!facts.inNative) {
    if (facts.unreachedBecause !== null) {
      return { verdict: 'FAIL', kind: 'missing', reason: `never reached: ${facts.unreachedBecause}`, gapId: null };
    }
    if (facts.catalogue === 'undeclared') {
      return {
        verdict: 'GAP',
        kind: null,
        reason: "the engine's catalogue does not declare this boundary: not compared",
        gapId: gapIds.notInCatalogue(boundary),
      };
    }
    if (facts.catalogue === 'not_emitted') {
      return {
        verdict: 'GAP',
        kind: null,
        reason: "the engine's catalogue says it does not emit this boundary in a pass of this kind and mode: not compared",
        gapId: gapIds.notEmittedPerCatalogue(boundary),
      };
    }
    return withLedger(
      { verdict: 'FAIL', kind: 'missing', reason: 'the catalogue declares this boundary for this pass but the engine did not emit it', gapId: null },
      facts,
      'fail',
    );
  }
  const reference = facts.reference;
  if (reference === null) {
    // Present on both sides yet not compared: only a programming error gets here; fail closed.
    return { verdict: 'FAIL', kind: 'other', reason: 'present on both sides but not compared', gapId: null };
  }
  const referenceState = sideState(reference);
  const oracleState = facts.oracleSide === 'compared' && facts.oracle !== null ? sideState(facts.oracle) : null;

  let raw: Judgement;
  if (referenceState === 'fail') {
    raw =
      oracleState === 'pass'
        ? {
            verdict: 'REVIEW_REQUIRED',
            kind: failureKind(reference),
            reason: `the oracles disagree: native passes the fp64 oracle's contract but fails the reference's: ${describeFailure(reference, 'reference')}`,
            gapId: null,
          }
        : { verdict: 'FAIL', kind: failureKind(reference), reason: describeFailure(reference, 'reference'), gapId: null };
  } else if (referenceState === 'gap') {
    raw =
      oracleState === 'fail' && facts.oracle !== null
        ? { verdict: 'FAIL', kind: failureKind(facts.oracle), reason: describeFailure(facts.oracle, 'oracle'), gapId: null }
        : {
            verdict: 'GAP',
            kind: null,
            reason: `the reference contract cannot be evaluated: ${gapOf(reference)}`,
            gapId: gapIds.contractUnevaluable(caseId, boundary),
          };
  } else if (oracleState === 'fail' && facts.oracle !== null) {
    raw = {
      verdict: 'REVIEW_REQUIRED',
      kind: failureKind(facts.oracle),
      reason: `the oracles disagree: native passes the reference's contract but fails the fp64 oracle's: ${describeFailure(facts.oracle, 'oracle')}`,
      gapId: null,
    };
  } else if (oracleState === 'gap' && facts.oracle !== null) {
    raw = {
      verdict: 'GAP',
      kind: null,
      reason: `passes the reference; the oracle's contract cannot be evaluated: ${gapOf(facts.oracle)}`,
      gapId: gapIds.oracleContractUnevaluable(caseId, boundary),
    };
  } else if (facts.oracleSide === 'lacks') {
    raw = {
      verdict: 'GAP',
      kind: null,
      reason: 'passes the reference; the oracle bundle has no record of it in this pass: not compared against the oracle',
      gapId: gapIds.oracleLacks(caseId, boundary),
    };
  } else {
    const both = oracleState === 'pass';
    raw = {
      verdict: 'PASS',
      kind: null,
      reason: both ? 'inside its contract against the reference and the fp64 oracle' : 'inside its contract against the reference (the case has no oracle)',
      gapId: null,
    };
  }
  return withLedger(raw, facts, referenceState);
}

/** Severity for sorting rows worst first. */
export const VERDICT_SEVERITY: Readonly<Record<Verdict, number>> = {
  FAIL: 4,
  REVIEW_REQUIRED: 3,
  KNOWN_GAP: 2,
  GAP: 1,
  PASS: 0,
};

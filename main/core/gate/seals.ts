// The seals (docs/gate.md, /work/shared/design/gate.md): fail-closed, printed last, stored in the
// receipt.
//
//   FIDELITY: OK | INCOMPLETE | FAIL
//   OVERALL: PASSED | PASSED_WITH_GAPS | FAIL [reason=...]
//   GAP: <id>                                   one line per gap
//
// In order of precedence (one reason is named, the first that applies):
//   crash / timeout / engine error / abort  FIDELITY: FAIL        OVERALL: FAIL reason=engine_crashed|engine_timeout|engine_error|engine_aborted  exit 1
//   a case compared nothing (zero rows)     FIDELITY: FAIL        OVERALL: FAIL reason=nothing_compared
//   native evidence unreadable              FIDELITY: FAIL        OVERALL: FAIL reason=unreadable_evidence
//   any FAIL verdict                        FIDELITY: FAIL        OVERALL: FAIL reason=boundary_failures
//   any REVIEW_REQUIRED                     FIDELITY: INCOMPLETE  OVERALL: FAIL reason=review_required   exit 1
//   any gap (GAP, KNOWN_GAP, case gaps)     FIDELITY: INCOMPLETE  OVERALL: PASSED_WITH_GAPS            exit 0
//                                  --strict FIDELITY: INCOMPLETE  OVERALL: FAIL reason=strict_gaps        exit 1
//   otherwise                               FIDELITY: OK          OVERALL: PASSED                      exit 0
//
// REVIEW_REQUIRED is never green: no boundary was shown outside a contract (so fidelity is not
// FAIL), but fidelity cannot be claimed either until a human has decided which oracle is right.
import type { RunStatus } from '../bundle/manifest-schema.ts';
import type { FailReason, Seals, VerdictCounts } from './gate-types.ts';

export interface SealFacts {
  /** Rows where native was compared with the reference. */
  compared: number;
  counts: VerdictCounts;
  /** How each case's run ended. */
  runStatuses: readonly RunStatus[];
  /**
   * Cases that compared nothing (no row of native against the reference). Each fails the run
   * on its own, whatever the other cases did: a good case must not carry an empty one.
   */
  emptyCases: readonly string[];
  /** Some native evidence could not be read. */
  unreadable: boolean;
  gapIds: readonly string[];
  strict: boolean;
}

const RUN_FAILURE_REASON: Readonly<Record<Exclude<RunStatus, 'completed'>, FailReason>> = {
  crashed: 'engine_crashed',
  timeout: 'engine_timeout',
  engine_error: 'engine_error',
  aborted: 'engine_aborted',
};

export function sealLines(fidelity: Seals['fidelity'], overall: Seals['overall'], reason: FailReason | null, gapIds: readonly string[]): string[] {
  return [`FIDELITY: ${fidelity}`, `OVERALL: ${overall}${reason !== null ? ` reason=${reason}` : ''}`, ...gapIds.map((id) => `GAP: ${id}`)];
}

export function computeSeals(facts: SealFacts): Seals {
  const gapIds = [...facts.gapIds];
  const seal = (fidelity: Seals['fidelity'], overall: Seals['overall'], reason: FailReason | null): Seals => ({
    fidelity,
    overall,
    reason,
    gapIds,
    lines: sealLines(fidelity, overall, reason, gapIds),
    exitCode: overall === 'FAIL' ? 1 : 0,
  });
  // A run that died names its death first: it is why little or nothing was compared.
  const runFailure = facts.runStatuses.find((status): status is Exclude<RunStatus, 'completed'> => status !== 'completed');
  if (runFailure !== undefined) return seal('FAIL', 'FAIL', RUN_FAILURE_REASON[runFailure]);
  if (facts.compared === 0 || facts.emptyCases.length > 0) return seal('FAIL', 'FAIL', 'nothing_compared');
  if (facts.unreadable) return seal('FAIL', 'FAIL', 'unreadable_evidence');
  if (facts.counts.FAIL > 0) return seal('FAIL', 'FAIL', 'boundary_failures');
  if (facts.counts.REVIEW_REQUIRED > 0) return seal('INCOMPLETE', 'FAIL', 'review_required');
  if (gapIds.length > 0 || facts.counts.GAP > 0 || facts.counts.KNOWN_GAP > 0) {
    return facts.strict ? seal('INCOMPLETE', 'FAIL', 'strict_gaps') : seal('INCOMPLETE', 'PASSED_WITH_GAPS', null);
  }
  return seal('OK', 'PASSED', null);
}

// The verdict rules and the seals, on hand-made facts: each rule is fed the situation it exists
// for, and the verdict, kind, gap id and seal it must produce are checked.
import { describe, expect, it } from 'vitest';
import type { BoundaryComparison } from '../../main/core/compare/comparison-types.ts';
import { emptyCounts, type LedgerEntry, type VerdictCounts } from '../../main/core/gate/gate-types.ts';
import { computeSeals } from '../../main/core/gate/seals.ts';
import { judgeBoundary, type VerdictFacts } from '../../main/core/gate/verdicts.ts';
import { cleanComparison, noClasses as noClassCounts } from './comparison-fixture.ts';
import { bitExact } from './gate-fixtures.ts';

const noClasses = noClassCounts();

function comparison(over: Partial<BoundaryComparison> = {}): BoundaryComparison {
  return cleanComparison({ pass: 2, boundary: 'toy.mix', stage: 'toy', shape: [2, 4], contract: bitExact }, over);
}

const failing = (over: Partial<BoundaryComparison> = {}): BoundaryComparison =>
  comparison({
    mismatches: 2,
    mismatchShare: 0.25,
    classes: { ...noClasses, value: 2 },
    firstMismatch: {
      flatIndex: 5,
      index: [1, 1],
      native: 1.5,
      reference: 2.5,
      absError: 1,
      ulp: 4194304,
      class: 'value',
      mismatch: true,
      nativeBits: '0x0',
      referenceBits: '0x0',
    },
    worst: {
      flatIndex: 7,
      index: [1, 3],
      native: 9,
      reference: 4,
      absError: 5,
      ulp: 9e6,
      class: 'value',
      mismatch: true,
      nativeBits: '0x0',
      referenceBits: '0x0',
    },
    maxAbs: 5,
    maxRel: 1.25,
    maxUlp: 9e6,
    passed: false,
    outcome: 'fail',
    ...over,
  });

function facts(over: Partial<VerdictFacts> = {}): VerdictFacts {
  return {
    caseId: 'toy',
    pass: 2,
    boundary: 'toy.mix',
    inReference: true,
    inNative: true,
    catalogue: 'emitted',
    unreachedBecause: null,
    unreadable: null,
    reference: comparison(),
    oracleSide: 'compared',
    oracle: comparison(),
    ledger: null,
    ...over,
  };
}

const ledgerEntry: LedgerEntry = {
  id: 'KG-TOY-MIX',
  boundary: 'toy.mix',
  passes: [2],
  case: 'toy',
  reason: 'the toy mixes in the wrong order',
  reopen_evidence: 'a native run inside the contract',
  source: 'known-gaps.json',
  appliesTo: ['toy'],
};

describe('judgeBoundary', () => {
  it('PASS: compared in full, inside both contracts', () => {
    expect(judgeBoundary(facts())).toMatchObject({ verdict: 'PASS', kind: null, gapId: null });
  });

  it('PASS without an oracle bundle (the case-level gap oracle_absent is recorded by the gate)', () => {
    expect(judgeBoundary(facts({ oracleSide: 'absent', oracle: null }))).toMatchObject({ verdict: 'PASS', gapId: null });
  });

  it('FAIL keeps where, how much and what kind', () => {
    const judged = judgeBoundary(facts({ reference: failing(), oracle: failing() }));
    expect(judged.verdict).toBe('FAIL');
    expect(judged.kind).toBe('value');
    expect(judged.reason).toContain('2/8 elements');
    expect(judged.reason).toContain('first at [1, 1]');
    expect(judged.reason).toContain('worst at [1, 3]');
    expect(judged.reason).toContain('max abs 5');
  });

  it('FAIL of kind dtype / shape / layout for structural problems', () => {
    for (const problem of ['dtype', 'shape', 'layout'] as const) {
      const structural = comparison({ structural: { problem, detail: `${problem} differs` }, passed: false, outcome: 'fail' });
      expect(judgeBoundary(facts({ reference: structural, oracle: structural }))).toMatchObject({ verdict: 'FAIL', kind: problem });
    }
  });

  it('FAIL of kind NaN vs number when the first mismatch is one', () => {
    const nan = failing({
      classes: { ...noClasses, nan_vs_number: 1 },
      firstMismatch: {
        flatIndex: 0,
        index: [0, 0],
        native: 'NaN',
        reference: 1,
        absError: Number.NaN,
        ulp: Number.POSITIVE_INFINITY,
        class: 'nan_vs_number',
        mismatch: true,
        nativeBits: '0x7fc00000',
        referenceBits: '0x0',
      },
    });
    expect(judgeBoundary(facts({ reference: nan, oracle: nan }))).toMatchObject({ verdict: 'FAIL', kind: 'nan_vs_number' });
  });

  it('FAIL of kind value when only the error relative to the fp64 oracle is out of its oracle_rel bound', () => {
    const bound = comparison({ passed: false, outcome: 'fail', oracleRel: { bound: 1e-6, nativeRmse: 1e-3, oracleRms: 1, passed: false } });
    const judged = judgeBoundary(facts({ reference: bound, oracle: bound }));
    expect(judged).toMatchObject({ verdict: 'FAIL', kind: 'value' });
    expect(judged.reason).toContain('exceeds oracle_rel');
  });

  it('never softens failed values: mismatches fail the side even if the outcome field says pass', () => {
    const inconsistent = failing({ outcome: 'pass', passed: true });
    expect(judgeBoundary(facts({ reference: inconsistent, oracle: inconsistent })).verdict).toBe('FAIL');
  });

  it('FAIL missing: the catalogue promises it for this pass and native did not emit it', () => {
    expect(judgeBoundary(facts({ inNative: false, reference: null, oracle: null, oracleSide: 'not_compared' }))).toMatchObject({
      verdict: 'FAIL',
      kind: 'missing',
    });
  });

  it('FAIL missing, never GAP, when a crash kept the engine from reaching it — even if undeclared', () => {
    for (const catalogue of ['emitted', 'not_emitted', 'undeclared'] as const) {
      const judged = judgeBoundary(
        facts({
          inNative: false,
          catalogue,
          reference: null,
          oracle: null,
          oracleSide: 'not_compared',
          unreachedBecause: 'the engine crashed in pass 1 after boundary toy.mix (SIGSEGV)',
        }),
      );
      expect(judged).toMatchObject({ verdict: 'FAIL', kind: 'missing', gapId: null });
      expect(judged.reason).toContain('SIGSEGV');
    }
  });

  it('a crash is not absorbed by a ledger entry', () => {
    const judged = judgeBoundary(
      facts({ inNative: false, reference: null, oracle: null, oracleSide: 'not_compared', unreachedBecause: 'crashed', ledger: ledgerEntry }),
    );
    expect(judged.verdict).toBe('FAIL');
  });

  it('FAIL of kind unreadable when the evidence cannot be read', () => {
    expect(judgeBoundary(facts({ unreadable: 'E_DIGEST pass-002.safetensors' }))).toMatchObject({ verdict: 'FAIL', kind: 'unreadable' });
  });

  it('GAP not_in_catalogue:<boundary> when the engine does not declare it', () => {
    expect(judgeBoundary(facts({ inNative: false, catalogue: 'undeclared', reference: null, oracle: null }))).toMatchObject({
      verdict: 'GAP',
      gapId: 'not_in_catalogue:toy.mix',
    });
  });

  it('GAP catalogue_excludes:<boundary> when the catalogue says it is not emitted in such a pass', () => {
    expect(judgeBoundary(facts({ inNative: false, catalogue: 'not_emitted', reference: null, oracle: null }))).toMatchObject({
      verdict: 'GAP',
      gapId: 'catalogue_excludes:toy.mix',
    });
  });

  it('GAP not_in_reference:<case>:<boundary> for native records the reference lacks', () => {
    expect(judgeBoundary(facts({ inReference: false, reference: null, oracle: null }))).toMatchObject({
      verdict: 'GAP',
      gapId: 'not_in_reference:toy:toy.mix',
    });
  });

  it('GAP oracle_lacks:<case>:<boundary> when the oracle bundle has no record of it', () => {
    expect(judgeBoundary(facts({ oracleSide: 'lacks', oracle: null }))).toMatchObject({ verdict: 'GAP', gapId: 'oracle_lacks:toy:toy.mix' });
  });

  it('GAP contract_unevaluable when the reference contract cannot be evaluated', () => {
    const gap = comparison({ gap: 'oracle_rel needs the fp64 oracle', passed: false, outcome: 'gap' });
    const judged = judgeBoundary(facts({ reference: gap }));
    expect(judged).toMatchObject({ verdict: 'GAP', gapId: 'contract_unevaluable:toy:toy.mix' });
    expect(judged.reason).toContain('oracle_rel needs the fp64 oracle');
  });

  it('FAIL, not GAP, when elements are outside even though part of the contract was unevaluable', () => {
    const both = failing({ gap: 'oracle_rel needs the fp64 oracle' });
    expect(judgeBoundary(facts({ reference: both, oracle: failing() })).verdict).toBe('FAIL');
  });

  it('REVIEW_REQUIRED when native passes the reference and fails the fp64 oracle', () => {
    const judged = judgeBoundary(facts({ oracle: failing() }));
    expect(judged).toMatchObject({ verdict: 'REVIEW_REQUIRED', kind: 'value' });
    expect(judged.reason).toContain("fails the fp64 oracle's");
  });

  it('REVIEW_REQUIRED when native fails the reference and passes the fp64 oracle', () => {
    const judged = judgeBoundary(facts({ reference: failing() }));
    expect(judged).toMatchObject({ verdict: 'REVIEW_REQUIRED' });
    expect(judged.reason).toContain("fails the reference's");
  });

  it('KNOWN_GAP: declared in the ledger and still failing', () => {
    const judged = judgeBoundary(facts({ reference: failing(), oracle: failing(), ledger: ledgerEntry }));
    expect(judged).toMatchObject({ verdict: 'KNOWN_GAP', gapId: 'known_gap:KG-TOY-MIX', kind: 'value' });
  });

  it('KNOWN_GAP also when the declared boundary is missing from native', () => {
    expect(judgeBoundary(facts({ inNative: false, reference: null, oracle: null, ledger: ledgerEntry })).verdict).toBe('KNOWN_GAP');
  });

  it('REVIEW_REQUIRED when a ledger entry now passes', () => {
    const judged = judgeBoundary(facts({ ledger: ledgerEntry }));
    expect(judged.verdict).toBe('REVIEW_REQUIRED');
    expect(judged.reason).toContain('KG-TOY-MIX now passes');
  });
});

function counts(over: Partial<VerdictCounts>): VerdictCounts {
  return { ...emptyCounts(), ...over };
}

describe('computeSeals', () => {
  const base = {
    compared: 10,
    counts: counts({ PASS: 10 }),
    runStatuses: ['completed' as const],
    emptyCases: [],
    unreadable: false,
    gapIds: [],
    strict: false,
  };

  it('FIDELITY: OK / OVERALL: PASSED only with everything compared and passed (exit 0)', () => {
    expect(computeSeals(base)).toMatchObject({ lines: ['FIDELITY: OK', 'OVERALL: PASSED'], exitCode: 0 });
  });

  it('gaps: INCOMPLETE / PASSED_WITH_GAPS, exit 0, one GAP line each', () => {
    const seals = computeSeals({ ...base, gapIds: ['oracle_absent:toy', 'not_in_catalogue:toy.x'] });
    expect(seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: oracle_absent:toy', 'GAP: not_in_catalogue:toy.x']);
    expect(seals.exitCode).toBe(0);
  });

  it('--strict turns gaps into OVERALL: FAIL reason=strict_gaps (exit 1)', () => {
    const seals = computeSeals({ ...base, gapIds: ['oracle_absent:toy'], strict: true });
    expect(seals.lines.slice(0, 2)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=strict_gaps']);
    expect(seals.exitCode).toBe(1);
  });

  it('--strict with no gaps still passes', () => {
    expect(computeSeals({ ...base, strict: true }).lines).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
  });

  it('any FAIL: FIDELITY: FAIL reason=boundary_failures (exit 1)', () => {
    expect(computeSeals({ ...base, counts: counts({ PASS: 9, FAIL: 1 }) })).toMatchObject({
      lines: ['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures'],
      exitCode: 1,
    });
  });

  it('REVIEW_REQUIRED is never green: INCOMPLETE / FAIL reason=review_required (exit 1)', () => {
    expect(computeSeals({ ...base, counts: counts({ PASS: 9, REVIEW_REQUIRED: 1 }) })).toMatchObject({
      lines: ['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required'],
      exitCode: 1,
    });
  });

  it('a crash, a timeout, an engine error: FIDELITY: FAIL naming it', () => {
    expect(computeSeals({ ...base, runStatuses: ['completed', 'crashed'] }).lines[1]).toBe('OVERALL: FAIL reason=engine_crashed');
    expect(computeSeals({ ...base, runStatuses: ['timeout'] }).lines[1]).toBe('OVERALL: FAIL reason=engine_timeout');
    expect(computeSeals({ ...base, runStatuses: ['engine_error'] }).lines[1]).toBe('OVERALL: FAIL reason=engine_error');
    expect(computeSeals({ ...base, runStatuses: ['crashed'] }).fidelity).toBe('FAIL');
  });

  it('unreadable evidence: FIDELITY: FAIL reason=unreadable_evidence', () => {
    expect(computeSeals({ ...base, unreadable: true }).lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=unreadable_evidence']);
  });

  it('a run that compared nothing fails, even with nothing else wrong', () => {
    expect(computeSeals({ ...base, compared: 0, counts: counts({}) })).toMatchObject({
      lines: ['FIDELITY: FAIL', 'OVERALL: FAIL reason=nothing_compared'],
      exitCode: 1,
    });
    expect(computeSeals({ ...base, compared: 0, counts: counts({ GAP: 5 }), gapIds: ['not_in_catalogue:a'] }).reason).toBe('nothing_compared');
  });

  it('one case that compared nothing fails the run, whatever the other cases did (even with --strict off and no gaps)', () => {
    const seals = computeSeals({ ...base, runStatuses: ['completed', 'completed'], emptyCases: ['empty'] });
    expect(seals).toMatchObject({ lines: ['FIDELITY: FAIL', 'OVERALL: FAIL reason=nothing_compared'], exitCode: 1 });
    // It outranks boundary failures of the other case: an empty case is the graver finding.
    expect(computeSeals({ ...base, counts: counts({ PASS: 9, FAIL: 1 }), emptyCases: ['empty'] }).reason).toBe('nothing_compared');
  });

  it('KNOWN_GAP rows alone are gaps: INCOMPLETE / PASSED_WITH_GAPS', () => {
    expect(computeSeals({ ...base, counts: counts({ PASS: 9, KNOWN_GAP: 1 }), gapIds: ['known_gap:KG'] }).lines.slice(0, 2)).toEqual([
      'FIDELITY: INCOMPLETE',
      'OVERALL: PASSED_WITH_GAPS',
    ]);
  });
});

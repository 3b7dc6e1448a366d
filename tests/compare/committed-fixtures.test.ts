// The committed fixture bundles through the comparator: every reference bundle against itself
// passes with zero mismatches, and against its fp64 oracle bundle (under the oracle's contracts:
// the oracle is passed as the reference) passes too. The oracle bundles store the catalogue
// floats as F32 rounded from float64, and the sampler values as F64.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import { CASES, oracleBundle, referenceBundle } from '../helpers/paths.ts';

describe.each(CASES)('fixtures/bundles/%s', (caseId) => {
  let reference: TraceBundle;
  let oracle: TraceBundle;

  beforeAll(async () => {
    reference = await openBundle(referenceBundle(caseId));
    oracle = await openBundle(oracleBundle(caseId));
  });
  afterAll(async () => {
    await reference.close();
    await oracle.close();
  });

  it('reference against itself: every boundary of every pass passes, zero mismatches, zero error', async () => {
    let compared = 0;
    let withOracle = 0;
    for (const pass of reference.passes) {
      for (const entry of pass.boundaries) {
        const result = await compareBoundary({ native: reference, reference, oracle }, pass.index, entry.name);
        const where = `pass ${pass.index} ${entry.name}`;
        expect(result.structural, where).toBeNull();
        expect(result.outcome, where).toBe('pass');
        expect(result.mismatches, where).toBe(0);
        expect(result.maxAbs, where).toBe(0);
        expect(result.compared + result.padded, where).toBe(result.elements);
        if (result.oracle !== null) withOracle += 1;
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(100);
    expect(withOracle).toBe(compared);
  });

  it('reference against the fp64 oracle under the oracle contracts: passes', async () => {
    let compared = 0;
    let faithfulFloats = 0;
    let differing = 0;
    for (const pass of reference.passes) {
      for (const entry of pass.boundaries) {
        const result = await compareBoundary({ native: reference, reference: oracle }, pass.index, entry.name);
        const where = `pass ${pass.index} ${entry.name}: ${JSON.stringify(result.firstMismatch)}`;
        expect(result.outcome, where).toBe('pass');
        expect(result.contract).toEqual(oracle.boundary(pass.index, entry.name)?.contract);
        if (result.contract.kind === 'faithful' && entry.dtype === 'F32' && result.census.reference.finite >= 8) {
          faithfulFloats += 1;
          if (result.maxAbs > 0) differing += 1;
        }
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(100);
    // float32 against float64 differs almost everywhere there are finite values; a comparator
    // that saw no difference would be blind
    expect(differing).toBeGreaterThan(faithfulFloats / 2);
  });
});

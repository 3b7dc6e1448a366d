// The gate with the real reference engine on copies of the committed `greedy` case with one
// tensor changed (fixtures/ itself is never touched): the changed boundary, and only it, is
// caught — FAIL when both oracles carry the change, REVIEW_REQUIRED when only the reference does.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGate } from '../../main/core/gate/gate-run.ts';
import type { GateResult } from '../../main/core/gate/gate-types.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import { REFERENCE_ENGINE, oracleBundle, referenceBundle } from '../helpers/paths.ts';
import { copyBundle, gateOptions, removeTempDirs, tempDir, type TensorEdit } from './gate-fixtures.ts';

beforeAll(requireBuiltHost);
afterAll(removeTempDirs);

const PASS_INDEX = 3;
const BOUNDARY = 'backbone.l2.out';

/** Adds 0.5 to element 7 of pass 3's backbone.l2.out: far outside its faithful contract. */
const bump: TensorEdit = (pass, boundary, data) => {
  if (pass !== PASS_INDEX || boundary !== BOUNDARY) return null;
  const copy = data.slice();
  const view = new DataView(copy.buffer);
  view.setFloat32(7 * 4, view.getFloat32(7 * 4, true) + 0.5, true);
  return copy;
};

const notPassing = (result: GateResult): string[] =>
  result.cases.flatMap((item) =>
    item.verdicts.filter((row) => row.verdict !== 'PASS').map((row) => `${row.verdict} ${row.kind} pass ${row.pass} ${row.boundary}`),
  );

describe('greedy with one tensor changed', () => {
  it('changed in the reference and the oracle: FAIL at pass 3 / backbone.l2.out and nowhere else', async () => {
    const root = tempDir('greedy-fail');
    const referenceDir = await copyBundle(referenceBundle('greedy'), join(root, 'greedy', 'reference'), bump);
    const oracleDir = await copyBundle(oracleBundle('greedy'), join(root, 'greedy', 'oracle-f64'), bump);
    const result = await runGate(gateOptions({ library: REFERENCE_ENGINE, cases: [{ referenceDir, oracleDir }], workDir: join(root, 'work') }));
    expect(notPassing(result)).toEqual([`FAIL value pass ${PASS_INDEX} ${BOUNDARY}`]);
    const item = result.cases[0];
    const first = item?.verdicts[item.firstDivergence ?? -1];
    expect(first?.reference?.firstMismatch?.flatIndex).toBe(7);
    expect(first?.reference?.mismatches).toBe(1);
    expect(result.seals.lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
  });

  it('changed in the reference only: the oracles disagree there, REVIEW_REQUIRED', async () => {
    const root = tempDir('greedy-review');
    const referenceDir = await copyBundle(referenceBundle('greedy'), join(root, 'greedy', 'reference'), bump);
    const result = await runGate(
      gateOptions({ library: REFERENCE_ENGINE, cases: [{ referenceDir, oracleDir: oracleBundle('greedy') }], workDir: join(root, 'work') }),
    );
    expect(notPassing(result)).toEqual([`REVIEW_REQUIRED value pass ${PASS_INDEX} ${BOUNDARY}`]);
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required']);
  });
});

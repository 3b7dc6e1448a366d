// The views go through the session to the inspect modules with the right sides: the live native
// view (the capture in progress) against the reference — or against the fp64 oracle when that is
// the chosen oracle. Checked on the nan_inf case, whose rows carry NaN / infinity badges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { fromWire, type BoundaryRow } from '../../protocol/inspector-api.ts';
import { REFERENCE_ENGINE, oracleBundle, referenceBundle } from '../helpers/paths.ts';
import { openSession, removeTempDirs, type TestSession } from './session-fixtures.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';

let t: TestSession;
let rows: BoundaryRow[];
beforeAll(async () => {
  t = openSession('views');
  await t.call('openEngine', { library: REFERENCE_ENGINE });
  await t.call('openBundle', { dir: referenceBundle('nan_inf') });
  await t.call('prefill', {});
  rows = decodeRows(await t.call('getRows', {}));
});
afterAll(async () => {
  await t.session.close();
  removeTempDirs();
});

describe('session views', () => {
  it('rows of the NaN case carry badges, and the first NaN found is on a row that has the badge', async () => {
    expect(rows.some((row) => row.badges.nan)).toBe(true);
    const first = await t.call('findFirstSpecial', { kind: 'nan' });
    expect(first).not.toBeNull();
    const row = rows.find((candidate) => candidate.pass === first?.pass && candidate.boundary === first.boundary);
    expect(row?.badges.nan).toBe(true);
    // Nothing earlier in execution order has a NaN on either side.
    expect(rows.slice(0, row?.order ?? 0).some((candidate) => candidate.badges.nan)).toBe(false);
  });

  it('element bits compare native with the reference, or with the fp64 oracle when chosen', async () => {
    const row = rows.find((candidate) => candidate.dtype === 'F32' && candidate.elements > 0 && !candidate.badges.nan);
    expect(row).toBeDefined();
    const ref = { pass: row?.pass ?? 0, boundary: row?.boundary ?? '', flatIndex: 0 };
    const [reference, oracle] = await Promise.all([openBundle(referenceBundle('nan_inf')), openBundle(oracleBundle('nan_inf'))]);
    try {
      const referenceTensor = await reference.readBoundary(ref.pass, ref.boundary);
      const referenceValue = new DataView(referenceTensor.data.buffer, referenceTensor.data.byteOffset, referenceTensor.data.byteLength).getFloat32(0, true);
      const oracleTensor = await oracle.readBoundary(ref.pass, ref.boundary);
      const oracleView = new DataView(oracleTensor.data.buffer, oracleTensor.data.byteOffset, oracleTensor.data.byteLength);
      const oracleValue = oracleTensor.dtype === 'F64' ? oracleView.getFloat64(0, true) : oracleView.getFloat32(0, true);
      const againstReference = await t.call('getElement', ref);
      // float32 values print as the shortest text that round-trips to the same float32.
      expect(Math.fround(Number(againstReference.reference?.decimal))).toBe(referenceValue);
      expect(againstReference.native).not.toBeNull();
      await t.call('setOracle', { oracle: 'fp64' });
      const againstOracle = await t.call('getElement', ref);
      const oracleDecimal = Number(againstOracle.reference?.decimal);
      expect(oracleTensor.dtype === 'F64' ? oracleDecimal : Math.fround(oracleDecimal)).toBe(oracleValue);
      expect(oracleValue).not.toBe(referenceValue);
      expect(againstOracle.native?.decimal).toBe(againstReference.native?.decimal);
    } finally {
      await t.call('setOracle', { oracle: 'reference' });
      await Promise.all([reference.close(), oracle.close()]);
    }
  });

  it('the heatmap of a row reports its worst difference as the row does', async () => {
    const row = rows.find(
      (candidate) => candidate.dtype === 'F32' && candidate.maxAbs !== null && candidate.elements > 1 && !candidate.badges.nan && !candidate.badges.inf,
    );
    expect(row).toBeDefined();
    const view = await t.call('getTensorView', { pass: row?.pass ?? 0, boundary: row?.boundary ?? '', metric: 'abs_diff', maxRows: 4, maxCols: 4 });
    expect(fromWire(view.max)).toBe(fromWire(row?.maxAbs ?? 0));
  });

  it('provenance names the reference, the oracle and the live native run by role and kind; layer isolation has not run', async () => {
    const provenance = await t.call('getProvenance', {});
    expect(provenance.bundles.map((bundle) => [bundle.role, bundle.kind])).toEqual([
      ['reference', 'reference'],
      ['oracle', 'oracle-f64'],
      ['run', 'native'],
    ]);
    expect((await t.call('getLayerIsolation', {})).status).toBe('not_run');
  });
});

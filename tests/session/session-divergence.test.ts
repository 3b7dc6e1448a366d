// Run to first divergence: with a deliberate perturbation of the reference engine (the
// self-test's perturb.kv_position_off_by_one, which first shows at pass 1 backbone.l2.k_append
// on the greedy case), the session steps until a pass brings a FAIL or REVIEW_REQUIRED, stops
// right after that pass, and marks exactly that row as the first divergence.
import { afterAll, describe, expect, it } from 'vitest';
import { loadPerturbationTable } from '../../main/core/gate/perturbation-table.ts';
import { embeddedDefaults } from '../../main/core/tool/tool-info.ts';
import { REFERENCE_ENGINE, referenceBundle } from '../helpers/paths.ts';
import { failureOf, openSession, removeTempDirs } from './session-fixtures.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';

const OPTION = 'perturb.kv_position_off_by_one';

afterAll(() => removeTempDirs());

describe('run to first divergence', () => {
  it('stops after the pass where the perturbation first shows and marks the row', async () => {
    const { enginePerturbations } = await loadPerturbationTable(embeddedDefaults().perturbationTable);
    const expectation = enginePerturbations.find((entry) => entry.option === OPTION);
    expect(expectation).toMatchObject({ case: 'greedy', pass: 1, boundary: 'backbone.l2.k_append' });
    const t = openSession('divergence');
    try {
      await t.call('openEngine', { library: REFERENCE_ENGINE });
      await t.call('openBundle', { dir: referenceBundle('greedy') });
      const unknown = await failureOf(t.call('setEngineOptions', { options: { 'perturb.no_such_thing': '1' } }));
      expect(unknown.code).toBe('E_REQUEST');
      expect(unknown.message).toContain('perturb.no_such_thing');
      await t.call('setEngineOptions', { options: { [OPTION]: '1' } });

      const snapshot = await t.call('runToFirstDivergence', {});
      expect(snapshot.engineOptions).toEqual({ [OPTION]: '1' });
      expect(snapshot.timeline.map((pass) => pass.state).slice(0, 3)).toEqual(['done', 'done', 'pending']);
      expect(snapshot.nextPass).toBe(2);
      expect(snapshot.run.status).toBe('running');
      expect(snapshot.firstDivergence).toEqual({ pass: 1, boundary: 'backbone.l2.k_append' });
      expect(snapshot.timeline[0]?.counts.FAIL).toBe(0);
      expect(snapshot.timeline[0]?.counts.REVIEW_REQUIRED).toBe(0);

      const rows = decodeRows(await t.call('getRows', {}));
      const marked = rows.filter((row) => row.firstDivergence);
      expect(marked).toHaveLength(1);
      expect(marked[0]).toMatchObject({ pass: 1, boundary: 'backbone.l2.k_append', verdict: 'FAIL', kind: 'value' });
      // Everything before it in execution order passed.
      const at = rows.findIndex((row) => row.firstDivergence);
      expect(rows.slice(0, at).every((row) => row.verdict === 'PASS')).toBe(true);
      expect(rows.every((row) => row.pass <= 1)).toBe(true);

      // Options belong to a run: they cannot change under one in progress.
      const change = await failureOf(t.call('setEngineOptions', { options: {} }));
      expect(change.code).toBe('E_STATE');

      // Running on from there: the next divergent pass is the very next one, and it stops after it.
      const next = await t.call('runToFirstDivergence', {});
      expect(next.timeline.filter((pass) => pass.state === 'done')).toHaveLength(3);
      expect(next.firstDivergence).toEqual({ pass: 1, boundary: 'backbone.l2.k_append' });
    } finally {
      await t.session.close();
    }
  });
});

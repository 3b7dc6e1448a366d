// Stepping the embedded default (the reference engine on the interleaved case) through the
// session: each Step runs exactly one pass and the rows of that pass appear, judged as the gate
// judges them. Judging pass by pass must give exactly what the gate's judgement of the finished
// bundle gives; an opened run gives the same rows without an engine.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { loadLedger } from '../../main/core/gate/ledger.ts';
import type { BoundaryRow, SessionSnapshot } from '../../protocol/inspector-api.ts';
import { REFERENCE_ENGINE, oracleBundle, referenceBundle } from '../helpers/paths.ts';
import { failureOf, openSession, removeTempDirs, tempDir, type TestSession } from './session-fixtures.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';

let t: TestSession;
afterAll(async () => {
  await t?.session.close();
  removeTempDirs();
});

const referencePassSizes = async (caseId: string): Promise<number[]> => {
  const bundle = await openBundle(referenceBundle(caseId), { verify: 'none' });
  try {
    return bundle.passes.map((pass) => pass.boundaries.length);
  } finally {
    await bundle.close();
  }
};

describe('stepping the embedded default', () => {
  let sizes: number[];
  let finished: SessionSnapshot;
  let rowsAtEnd: BoundaryRow[];
  beforeAll(async () => {
    t = openSession('stepping');
    sizes = await referencePassSizes('interleaved');
  });

  it('open default: the reference engine and the interleaved case with its oracle, nothing run yet', async () => {
    const snapshot = await t.call('openDefault', {});
    expect(snapshot.engine?.library).toBe(REFERENCE_ENGINE);
    expect(snapshot.bundle?.caseId).toBe('interleaved');
    expect(snapshot.bundle?.oracleDir).toBe(oracleBundle('interleaved'));
    expect(snapshot.timeline).toHaveLength(sizes.length);
    expect(snapshot.timeline.every((pass) => pass.state === 'pending')).toBe(true);
    expect(snapshot.nextPass).toBe(0);
    expect(snapshot.run.status).toBe('idle');
    expect(snapshot.rowCount).toBe(0);
    expect(snapshot.recent.engines).toEqual([REFERENCE_ENGINE]);
  });

  it('prefill runs pass 0 only: its rows arrive, all PASS, with progress events on the way', async () => {
    t.events.length = 0;
    const snapshot = await t.call('prefill', {});
    expect(snapshot.run.status).toBe('running');
    expect(snapshot.timeline[0]?.state).toBe('done');
    expect(snapshot.timeline[1]?.state).toBe('pending');
    expect(snapshot.nextPass).toBe(1);
    expect(snapshot.rowCount).toBe(sizes[0]);
    expect(snapshot.counts.PASS).toBe(sizes[0]);
    const reply = await t.call('getRows', {});
    const rows = decodeRows(reply);
    const { rowsVersion } = reply;
    expect(rowsVersion).toBe(snapshot.rowsVersion);
    expect(rows.every((row) => row.pass === 0 && row.passKind === 'prefill' && row.verdict === 'PASS')).toBe(true);
    expect(rows.map((row) => row.order)).toEqual(rows.map((_, i) => i));
    const progress = t.events.filter((event) => event.type === 'progress');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((event) => event.type === 'progress' && event.pass === 0 && event.kind === 'prefill')).toBe(true);
    expect(t.events.filter((event) => event.type === 'snapshot').length).toBeGreaterThanOrEqual(2); // busy, then done
    // While the run goes on, the native bundle has no manifest yet: the rows came from the capture in progress.
    const runDirs = readdirSync(t.workDir);
    expect(runDirs).toHaveLength(1);
    const runDir = join(t.workDir, runDirs[0] ?? '');
    expect(existsSync(join(runDir, 'manifest.json'))).toBe(false);
    expect(existsSync(join(runDir, 'capture.journal.jsonl'))).toBe(true);
  });

  it('step runs exactly the next pass: rows of pass 1 follow those of pass 0', async () => {
    const before = await t.call('getSession', {});
    const snapshot = await t.call('step', {});
    expect(snapshot.rowsVersion).toBeGreaterThan(before.rowsVersion);
    expect(snapshot.timeline.map((pass) => pass.state).slice(0, 3)).toEqual(['done', 'done', 'pending']);
    expect(snapshot.nextPass).toBe(2);
    expect(snapshot.rowCount).toBe((sizes[0] ?? 0) + (sizes[1] ?? 0));
    const rows = decodeRows(await t.call('getRows', {}));
    expect(rows.filter((row) => row.pass === 1)).toHaveLength(sizes[1] ?? -1);
    expect(rows.every((row) => row.verdict === 'PASS')).toBe(true);
    expect(snapshot.timeline[1]?.counts.PASS).toBe(sizes[1]);
  });

  it('run to end on a clean case: every pass done, zero FAIL, no first divergence', async () => {
    finished = await t.call('runToEnd', {});
    expect(finished.run.status).toBe('completed');
    expect(finished.nextPass).toBeNull();
    expect(finished.timeline.every((pass) => pass.state === 'done')).toBe(true);
    expect(finished.counts.FAIL).toBe(0);
    expect(finished.counts.REVIEW_REQUIRED).toBe(0);
    expect(finished.firstDivergence).toBeNull();
    expect(finished.rowCount).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(finished.errors).toEqual([]);
    rowsAtEnd = decodeRows(await t.call('getRows', {}));
    expect(rowsAtEnd.some((row) => row.firstDivergence)).toBe(false);
    const stepAgain = await failureOf(t.call('step', {}));
    expect(stepAgain.code).toBe('E_STATE');
    expect(stepAgain.message).toMatch(/run is over/);
  });

  it('the per-pass judgement equals the gate judging the finished bundle as a whole', async () => {
    const nativeDir = finished.run.message.match(/captured into (\S+)$/)?.[1] ?? '';
    expect(existsSync(join(nativeDir, 'manifest.json'))).toBe(true);
    const [reference, oracle, native] = await Promise.all([
      openBundle(referenceBundle('interleaved')),
      openBundle(oracleBundle('interleaved')),
      openBundle(nativeDir),
    ]);
    const host = await EngineHost.start({ library: REFERENCE_ENGINE });
    const description = host.description;
    await host.close();
    try {
      const ledger = await loadLedger(
        [{ caseId: 'interleaved', referenceDir: referenceBundle('interleaved'), manifestPath: reference.manifestPath, manifest: reference.manifest }],
        null,
      );
      const whole = await judgeCase({
        caseId: 'interleaved',
        reference,
        native,
        oracle,
        description,
        ledger: ledger.entries,
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      expect(rowsAtEnd.map((row) => `${row.id} ${row.verdict} ${String(row.maxAbs)}`)).toEqual(
        whole.verdicts.map(
          (verdict) =>
            `${verdict.pass}:${verdict.boundary} ${verdict.verdict} ${String(verdict.reference?.structural === null ? verdict.reference.maxAbs : null)}`,
        ),
      );
    } finally {
      await Promise.all([reference.close(), oracle.close(), native.close()]);
    }
  });

  it('choosing the fp64 oracle changes the numbers shown, not the verdicts', async () => {
    const snapshot = await t.call('setOracle', { oracle: 'fp64' });
    expect(snapshot.oracle).toBe('fp64');
    const rows = decodeRows(await t.call('getRows', {}));
    expect(rows.map((row) => row.verdict)).toEqual(rowsAtEnd.map((row) => row.verdict));
    // Against float64 values a float32 engine is never exact on every float boundary.
    const differing = rows.filter((row, i) => row.maxAbs !== rowsAtEnd[i]?.maxAbs);
    expect(differing.length).toBeGreaterThan(0);
    await t.call('setOracle', { oracle: 'reference' });
  });

  it('open run: the finished bundle judged again without an engine gives the same rows; nothing can step it', async () => {
    const nativeDir = finished.run.message.match(/captured into (\S+)$/)?.[1] ?? '';
    const other = openSession('open-run');
    try {
      await other.call('openBundle', { dir: referenceBundle('interleaved') });
      const snapshot = await other.call('openRun', { dir: nativeDir });
      expect(snapshot.engine).toBeNull();
      expect(snapshot.openedRun).toBe(nativeDir);
      expect(snapshot.run.status).toBe('completed');
      const rows = decodeRows(await other.call('getRows', {}));
      expect(rows.map((row) => `${row.id} ${row.verdict}`)).toEqual(rowsAtEnd.map((row) => `${row.id} ${row.verdict}`));
      const step = await failureOf(other.call('step', {}));
      expect(step.code).toBe('E_STATE');
      const isolation = await failureOf(other.call('runLayerIsolation', {}));
      expect(isolation.code).toBe('E_STATE');
      expect(isolation.message).toMatch(/opened run has no engine/);
      // Its receipt is compare's, over the two bundles (session-two-bundles.test.ts checks the subjects).
      const receipt = await other.call('exportReceipt', { keyPath: keyFiles(tempDir('open-run-key')).privateKeyPath });
      expect(receipt.path).toMatch(/compare\.dsse\.json$/);
      // The clean run (zero FAIL above) is sealed so by compare too.
      expect(receipt.fidelity).toBe('OK');
    } finally {
      await other.session.close();
    }
  });

  it('reset clears the rows and the timeline; the next prefill starts a new run', async () => {
    const reset = await t.call('reset', {});
    expect(reset.run.status).toBe('idle');
    expect(reset.rowCount).toBe(0);
    expect(reset.timeline.every((pass) => pass.state === 'pending')).toBe(true);
    expect(decodeRows(await t.call('getRows', {}))).toEqual([]);
    const again = await t.call('prefill', {});
    expect(again.rowCount).toBe(sizes[0]);
  });
});

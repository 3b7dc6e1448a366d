// Judging off the thread that serves the app (judge-pool.ts, judge-worker.ts): an opened run's
// rows stream to the clients slice by slice while later slices are still being judged, the
// session keeps answering meanwhile, every slice is judged on a worker thread, the rows equal the
// gate's judgeCase on the same bundles, and a worker that fails or dies is an error naming what
// happened, never a crash. Sizes are KB: six passes of 300 small boundaries.
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { openersOffThread } from '../../main/session/bundle-openers.ts';
import type { SessionVerdict } from '../../main/session/judge-messages.ts';
import { JudgeFailure, JudgePool, type JudgedSlice } from '../../main/session/judge-pool.ts';
import { bundleRef, catalogueFromReference, passSlices, type JudgeContext } from '../../main/session/session-judge.ts';
import { judgePasses } from '../../main/session/session-judge.ts';
import type { BoundaryRow, SessionSnapshot } from '../../protocol/inspector-api.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';
import { mergeRows } from '../../protocol/rows-merge.ts';
import { faithful } from '../gate/gate-fixtures.ts';
import type { TensorSpec } from '../helpers/bundle-builder.ts';
import { f32Bytes, writePair, writeTablePair, type BundlePair } from '../helpers/synthetic-run.ts';
import { failureOf, openSession, removeTempDirs, tempDir } from './session-fixtures.ts';

const PASSES = 6;
const PER_PASS = 300;

let pair: BundlePair;
let reference: TraceBundle;
let native: TraceBundle;
const pool = new JudgePool({ workers: 2 });

beforeAll(async () => {
  pair = writeTablePair(tempDir('judging-worker'), 'judging', PASSES, PER_PASS);
  [reference, native] = await Promise.all([openBundle(pair.referenceDir), openBundle(pair.nativeDir)]);
});
afterAll(async () => {
  await Promise.all([reference?.close(), native?.close(), pool.close()]);
  removeTempDirs();
});

/** What the gate says about the whole run, as `pass:boundary verdict kind maxAbs reason` lines. */
async function gateLines(): Promise<string[]> {
  const whole = await judgeCase({
    caseId: 'judging',
    reference,
    native,
    oracle: null,
    description: catalogueFromReference(reference),
    ledger: [],
    stop: null,
    nativeUnreadable: null,
    contracts: {},
  });
  return whole.verdicts.map(
    (verdict) =>
      `${verdict.pass}:${verdict.boundary} ${verdict.verdict} ${String(verdict.kind)} ${String(verdict.reference?.structural === null ? verdict.reference.maxAbs : null)} ${verdict.reason}`,
  );
}

/** The session's own view of every bundle: the manifests' contracts, no map. */
const NO_VIEWS = { reference: null, oracle: null, map: null };

const rowLine = (row: BoundaryRow): string =>
  `${row.id} ${row.verdict} ${String(row.kind)} ${String(row.maxAbs === null ? null : Number(row.maxAbs))} ${row.reason}`;

describe('the judging pool', () => {
  const context = (): JudgeContext => ({
    caseId: 'judging',
    reference,
    oracle: null,
    description: catalogueFromReference(reference),
    ledger: [],
    contracts: {},
    referenceContracts: null,
    oracleContracts: null,
  });

  it("judges every slice on a worker thread and hands the slices over in pass order; the verdicts are the gate's", async () => {
    const slices: JudgedSlice[] = [];
    const passes = native.passes.map((pass) => pass.index);
    // The first pass alone (the first rows as early as possible), then slices of at most 500 rows.
    expect(passSlices(reference, native, passes)).toEqual(passes.map((pass) => ({ passes: [pass], range: null, completes: true })));
    const judged = await judgePasses(pool, context(), { bundle: native, kind: 'bundle' }, passes, null, null, [], (slice) => slices.push(slice));
    expect(slices.map((slice) => slice.passes)).toEqual(passes.map((pass) => [pass]));
    expect(new Set(slices.map((slice) => slice.threadId)).size).toBeGreaterThan(1);
    for (const slice of slices) expect(slice.threadId).not.toBe(threadId);
    const all: SessionVerdict[] = passes.flatMap((pass) => judged.byPass.get(pass) ?? []);
    expect(
      all.map(
        (verdict) =>
          `${verdict.pass}:${verdict.boundary} ${verdict.verdict} ${String(verdict.kind)} ${String(verdict.reference?.structural === null ? verdict.reference.maxAbs : null)} ${verdict.reason}`,
      ),
    ).toEqual(await gateLines());
    expect(judged.revised).toBe(false);
  });

  it('judges a long pass in parts; the parts are the pass judged whole, its pass-level finding once, first', async () => {
    // Two passes of 1,100 rows (each judged in 3 parts); the native's pass 1 says mode audio.
    const rows = (pass: number, moved: boolean): TensorSpec[] =>
      Array.from({ length: 1100 }, (_, i) => ({
        name: `b${String(i).padStart(4, '0')}`,
        stage: 's',
        dtype: 'F32' as const,
        shape: [2],
        data: f32Bytes(Float32Array.from([i + pass, moved && i % 400 === 9 ? 1 : 0])),
        ...(moved ? {} : { contract: faithful(1e-5, 1e-5) }),
      }));
    const long = writePair(
      tempDir('judging-parts'),
      'parts',
      [0, 1].map((pass) => ({ kind: pass === 0 ? ('prefill' as const) : ('decode' as const), mode: 'text' as const, boundaries: rows(pass, false) })),
      [
        { kind: 'prefill', mode: 'text', boundaries: rows(0, true) },
        { kind: 'decode', mode: 'audio', boundaries: rows(1, true) },
      ],
    );
    const [longReference, longNative] = await Promise.all([openBundle(long.referenceDir), openBundle(long.nativeDir)]);
    try {
      const description = catalogueFromReference(longReference);
      const slices = passSlices(longReference, longNative, [0, 1]);
      expect(slices.map((slice) => [slice.passes, slice.range, slice.completes])).toEqual([
        [[0], { from: 0, to: 366 }, false],
        [[0], { from: 366, to: 733 }, false],
        [[0], { from: 733, to: 1100 }, true],
        [[1], { from: 0, to: 366 }, false],
        [[1], { from: 366, to: 733 }, false],
        [[1], { from: 733, to: 1100 }, true],
      ]);
      const context: JudgeContext = {
        caseId: 'parts',
        reference: longReference,
        oracle: null,
        description,
        ledger: [],
        contracts: {},
        referenceContracts: null,
        oracleContracts: null,
      };
      const judged = await judgePasses(pool, context, { bundle: longNative, kind: 'bundle' }, [0, 1], null);
      const parts = [0, 1].flatMap((pass) => judged.byPass.get(pass) ?? []);
      const whole = await judgeCase({
        caseId: 'parts',
        reference: longReference,
        native: longNative,
        oracle: null,
        description,
        ledger: [],
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      const line = (verdict: { pass: number; boundary: string; verdict: string; kind: string | null; reason: string }): string =>
        `${verdict.pass}:${verdict.boundary} ${verdict.verdict} ${String(verdict.kind)} ${verdict.reason}`;
      expect(parts.map(line)).toEqual(whole.verdicts.map(line));
      expect(parts.filter((verdict) => verdict.kind === 'pass').map((verdict) => `${verdict.pass}:${verdict.boundary}`)).toEqual(['1:(pass)']);
      expect(parts.filter((verdict) => verdict.verdict === 'FAIL' && verdict.kind !== 'pass')).toHaveLength(6);
    } finally {
      await Promise.all([longReference.close(), longNative.close()]);
    }
  });

  it('a bundle whose files are not the ones the session verified is refused, naming the file; the pool judges on afterwards', async () => {
    const forged = bundleRef(native);
    const files = forged.files.map((file, i) => (i === 1 ? { ...file, sha256: '0'.repeat(64) } : file));
    const failure = await pool
      .judge({
        job: {
          caseId: 'judging',
          reference: bundleRef(reference),
          oracle: null,
          native: { ...forged, files },
          description: catalogueFromReference(reference),
          ledger: [],
          stop: null,
          nativeUnreadable: null,
          views: NO_VIEWS,
        },
        slices: [{ passes: [0], range: null, completes: true }],
        onSlice: () => undefined,
        audioRows: () => null,
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(JudgeFailure);
    expect((failure as Error).message).toMatch(/native\/manifest\.json: files\[1\] is now pass-0*\.safetensors .* the bundle changed since it was opened/);
    // The same pool still judges.
    const judged = await judgePasses(pool, context(), { bundle: native, kind: 'bundle' }, [0], null);
    expect(judged.byPass.get(0)).toHaveLength(PER_PASS);
  });

  it("a folder that holds no bundle fails the job with the reader's error naming the file", async () => {
    const missing = { ...bundleRef(native), dir: `${pair.nativeDir}-gone` };
    const failure = await pool
      .judge({
        job: {
          caseId: 'judging',
          reference: bundleRef(reference),
          oracle: null,
          native: missing,
          description: catalogueFromReference(reference),
          ledger: [],
          stop: null,
          nativeUnreadable: null,
          views: NO_VIEWS,
        },
        slices: [{ passes: [0], range: null, completes: true }],
        onSlice: () => undefined,
        audioRows: () => null,
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(JudgeFailure);
    expect((failure as Error).message).toContain(`${pair.nativeDir}-gone/manifest.json`);
  });
});

describe('manifests read on a worker', () => {
  it('open the same bundle as openBundle; a refused manifest is the same BundleError, code, file and field', async () => {
    const opened = await openersOffThread(pool).bundle(pair.nativeDir);
    try {
      expect(opened.manifest).toEqual(native.manifest);
      expect(opened.boundary(3, 'layer012.op7')).toEqual(native.boundary(3, 'layer012.op7'));
      expect(await opened.readBoundary(3, 'layer012.op7')).toEqual(await native.readBoundary(3, 'layer012.op7'));
    } finally {
      await opened.close();
    }
    const broken = join(tempDir('judging-broken'), 'native');
    cpSync(pair.nativeDir, broken, { recursive: true });
    const manifestPath = join(broken, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { passes: { boundaries: { dtype: string }[] }[] };
    const entry = manifest.passes[2]?.boundaries[5];
    if (entry !== undefined) entry.dtype = 'F33';
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const here = await openBundle(broken).then(
      () => null,
      (error: unknown) => error,
    );
    const there = await openersOffThread(pool)
      .bundle(broken)
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(here).toBeInstanceOf(BundleError);
    expect(there).toBeInstanceOf(BundleError);
    const fields = (error: unknown): unknown => {
      const bundleError = error as BundleError;
      return { code: bundleError.code, file: bundleError.file, field: bundleError.field, message: bundleError.message };
    };
    expect(fields(there)).toEqual(fields(here));
    expect((there as BundleError).field).toBe('passes[2].boundaries[5].dtype');
  });
});

describe('bundles kept open on the workers', () => {
  it('a folder written again since is read again, never answered from the bundle kept open', async () => {
    const root = tempDir('judging-rewritten');
    for (const side of ['a', 'b']) mkdirSync(join(root, side));
    const first = writeTablePair(join(root, 'a'), 'judging', 2, 10);
    const dir = join(root, 'run');
    renameSync(first.nativeDir, dir);
    const openers = openersOffThread(pool);
    const before = await openers.bundle(dir);
    await before.close();
    expect(before.passes).toHaveLength(2);
    // Captured again into the same folder: another run, three passes.
    rmSync(dir, { recursive: true });
    renameSync(writeTablePair(join(root, 'b'), 'judging', 3, 10).nativeDir, dir);
    const [after, here] = await Promise.all([openers.bundle(dir), openBundle(dir)]);
    try {
      expect(after.passes).toHaveLength(3);
      expect(after.manifest).toEqual(here.manifest);
    } finally {
      await Promise.all([after.close(), here.close()]);
    }
  });
});

describe('opening a run in the session', () => {
  it("streams the rows while judging: partial rows reach a client and the session answers before the open returns; the rows equal the gate's", async () => {
    const t = openSession('judging-stream');
    try {
      await t.call('openBundle', { dir: pair.referenceDir });
      let opened = false;
      const partial: { rowCount: number; fetched: number; pinged: boolean }[] = [];
      let client: BoundaryRow[] = [];
      let version: number | undefined;
      const pulls: Promise<void>[] = [];
      const unsubscribe = t.session.subscribe((event) => {
        if (event.type !== 'snapshot' || opened) return;
        const snapshot: SessionSnapshot = event.snapshot;
        if (snapshot.rowCount === 0 || snapshot.rowCount === PASSES * PER_PASS) return;
        // A client fetching what it lacks, and a ping, while the open is still judging.
        pulls.push(
          (async () => {
            const [reply, session] = await Promise.all([t.call('getRows', version === undefined ? {} : { since: version }), t.call('getSession', {})]);
            const merged = mergeRows(client, reply);
            if (merged === null) throw new Error('an append that does not continue the rows held');
            client = merged;
            version = reply.rowsVersion;
            partial.push({ rowCount: snapshot.rowCount, fetched: client.length, pinged: !opened && session.busy === 'open run' });
          })(),
        );
      });
      const snapshot = await t.call('openRun', { dir: pair.nativeDir });
      opened = true;
      unsubscribe();
      await Promise.all(pulls);
      // Rows arrived before the judging ended, in more than one hand-over, answered while busy.
      expect(partial.length).toBeGreaterThan(0);
      expect(partial.some((entry) => entry.pinged && entry.fetched > 0 && entry.fetched < PASSES * PER_PASS)).toBe(true);
      expect(snapshot.rowCount).toBe(PASSES * PER_PASS);
      expect(snapshot.run.status).toBe('completed');
      expect(snapshot.timeline.every((pass) => pass.state === 'done')).toBe(true);
      // The client's appends, merged, are the full list; and the full list is the gate's.
      const full = decodeRows(await t.call('getRows', {}));
      const rest = await t.call('getRows', version === undefined ? {} : { since: version });
      expect(mergeRows(client, rest)).toEqual(full);
      expect(full.map(rowLine)).toEqual(await gateLines());
      expect(full.filter((row) => row.firstDivergence)).toHaveLength(1);
    } finally {
      await t.session.close();
    }
  });

  it('a worker that dies (reading a manifest, judging) is an error saying so, never a crash; the session stays usable', async () => {
    // A heap far too small for the worker: it dies as it starts (ERR_WORKER_OUT_OF_MEMORY).
    const judge = { resourceLimits: { maxOldGenerationSizeMb: 2, maxYoungGenerationSizeMb: 1 } };
    const dying = new JudgePool(judge);
    try {
      const failure = await dying
        .judge({
          job: {
            caseId: 'judging',
            reference: bundleRef(reference),
            oracle: null,
            native: bundleRef(native),
            description: catalogueFromReference(reference),
            ledger: [],
            stop: null,
            nativeUnreadable: null,
            views: NO_VIEWS,
          },
          slices: [{ passes: [0], range: null, completes: true }],
          onSlice: () => undefined,
          audioRows: () => null,
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(JudgeFailure);
      expect((failure as Error).message).toMatch(/^the judging worker failed: .*memory/);
    } finally {
      await dying.close();
    }
    const t = openSession('judging-dies', { judge });
    try {
      const failure = await failureOf(t.call('openBundle', { dir: pair.referenceDir }));
      expect(failure.code).toBe('E_BUNDLE');
      expect(failure.message).toMatch(new RegExp(`^the worker reading ${pair.referenceDir} failed: .*memory`));
      const after = await t.call('getSession', {});
      expect(after.bundle).toBeNull();
      expect(after.busy).toBeNull();
      expect(after.errors.map((error) => error.message)).toContain(failure.message);
    } finally {
      await t.session.close();
    }
  });
});

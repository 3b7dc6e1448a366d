// Engine against engine in the app: the reference engine captured twice over the committed
// topk_ties case (same options, then a deliberate perturbation), the two bundles opened in one
// session with no engine — one as the reference side, the other with Open run — and judged by
// compare's own rules: identical captures pass bit for bit (the native reference declares no
// contracts, so the default bit_exact applies); the perturbation fails at the boundary its option
// names; a candidate that names its boundaries differently passes through a map file; a boundary
// the map declares unmapped is reported, with its reason; a contracts file is named in the
// snapshot with its digest; a bad contracts or map file is refused naming the file and the field
// and changes nothing; the receipt is compare's, over both bundles and the files in force; the
// tensor views, bit inspector, provenance and audio A/B read the two bundles.
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runCli } from '../../main/cli/run-cli.ts';
import type { BoundaryRow, SessionSnapshot } from '../../protocol/inspector-api.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';
import { keyFiles, recordingIO } from '../gate/gate-fixtures.ts';
import { REFERENCE_ENGINE, referenceBundle } from '../helpers/paths.ts';
import { failureOf, openSession, removeTempDirs, tempDir, type TestSession } from './session-fixtures.ts';

const CASE = 'topk_ties';
const root = tempDir('two-bundles');
const first = join(root, 'first');
const second = join(root, 'second');
const perturbed = join(root, 'perturbed');
const renamed = join(root, 'renamed');
/** A second implementation that stores the logits through bf16: every pass the same, only values differ. */
const truncating = join(root, 'truncating');
let key = { privateKeyPath: '', publicKeyPath: '' };

async function capture(out: string, options: string[] = [], caseId: string = CASE): Promise<void> {
  const io = recordingIO(root);
  const code = await runCli(['capture', '--bundle', referenceBundle(caseId), '--out', out, ...options.flatMap((option) => ['--option', option])], io);
  expect(code, io.err.join('')).toBe(0);
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

function writeJson(name: string, value: unknown): string {
  const path = join(root, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

async function rowsOf(t: TestSession): Promise<BoundaryRow[]> {
  return decodeRows(await t.call('getRows', {}));
}

/** Two bundles open in a fresh session: `reference` as the reference side, `candidate` with Open run. */
async function twoBundles(label: string, reference: string, candidate: string): Promise<{ t: TestSession; snapshot: SessionSnapshot }> {
  const t = openSession(label);
  await t.call('openBundle', { dir: reference });
  return { t, snapshot: await t.call('openRun', { dir: candidate }) };
}

const Statement = z
  .object({ subject: z.array(z.object({ name: z.string(), digest: z.object({ sha256: z.string() }) })), predicate: z.object({ mode: z.string() }).loose() })
  .loose();
function subjectsOf(envelope: string): Map<string, string> {
  const payload = z.object({ payload: z.string() }).loose().parse(JSON.parse(envelope)).payload;
  const statement = Statement.parse(JSON.parse(Buffer.from(payload, 'base64').toString('utf8')));
  expect(statement.predicate.mode).toBe('compare');
  return new Map(statement.subject.map((subject) => [subject.name, subject.digest.sha256]));
}

beforeAll(async () => {
  key = keyFiles(root);
  await capture(first);
  await capture(second);
  await capture(perturbed, ['perturb.kv_position_off_by_one=1']);
  await capture(truncating, ['perturb.logits_bf16_truncate=1']);
  // The port calls backbone.l<i>.out "layers.<i>.out" and backbone.l<i>.mixer_out "layers.<i>.mixer.out".
  cpSync(second, renamed, { recursive: true });
  const manifestPath = join(renamed, 'manifest.json');
  writeFileSync(
    manifestPath,
    readFileSync(manifestPath, 'utf8')
      .replace(/"name":\s*"backbone\.l(\d+)\.out"/g, '"name": "layers.$1.out"')
      .replace(/"name":\s*"backbone\.l(\d+)\.mixer_out"/g, '"name": "layers.$1.mixer.out"'),
  );
}, 180_000);
afterAll(() => removeTempDirs());

describe('two captures of the reference engine in one session, no engine', () => {
  it('identical captures: every row PASS bit for bit, the views and the bit inspector work, and the receipt is over both bundles', async () => {
    const { t, snapshot } = await twoBundles('identical', first, second);
    try {
      expect(snapshot.engine).toBeNull();
      expect(snapshot.bundle?.kind).toBe('native');
      expect(snapshot.openedRunKind).toBe('native');
      expect(snapshot.comparison.contracts?.kind).toBe('default');
      expect(snapshot.comparison.contracts?.description).toContain('bit_exact for every boundary the native reference declares no contract for');
      expect(snapshot.rowCount).toBeGreaterThan(500);
      expect(snapshot.counts.PASS).toBe(snapshot.rowCount);
      expect(snapshot.firstDivergence).toBeNull();
      const rows = await rowsOf(t);
      expect(new Set(rows.map((row) => row.contractKind))).toEqual(new Set(['bit_exact']));

      // The tensor views and the bit inspector read both bundles.
      const logits = rows.find((row) => row.boundary === 'backbone.logits' && row.pass === 1);
      if (logits === undefined) throw new Error('no backbone.logits row in pass 1');
      const view = await t.call('getTensorView', { pass: 1, boundary: 'backbone.logits', metric: 'abs_diff', maxRows: 8, maxCols: 8 });
      expect(view.max).toBe(0);
      const element = await t.call('getElement', { pass: 1, boundary: 'backbone.logits', flatIndex: 3 });
      expect(element.reference?.hex).toBe(element.native?.hex);
      expect(element.reference).not.toBeNull();
      expect(element.ulp).toBe(0);

      const provenance = await t.call('getProvenance', {});
      // Two captures: the reference side is what it is, a native capture, and says so.
      expect(provenance.bundles.map((bundle) => [bundle.role, bundle.kind, bundle.dir])).toEqual([
        ['reference', 'native', first],
        ['run', 'native', second],
      ]);

      const receipt = await t.call('exportReceipt', { keyPath: key.privateKeyPath });
      expect(receipt.seals).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
      const subjects = subjectsOf(receipt.envelope);
      expect(subjects.get('first/manifest.json')).toBe(sha256(join(first, 'manifest.json')));
      expect(subjects.get('second/manifest.json')).toBe(sha256(join(second, 'manifest.json')));
      expect(subjects.size).toBe(2);
      const verified = await t.call('verifyReceipt', { envelope: receipt.envelope, publicKeyPem: receipt.publicKeyPem });
      expect(verified.ok, verified.message).toBe(true);
    } finally {
      await t.session.close();
    }
  });

  it('a perturbed capture fails at the boundary its option names (pass 1, backbone.l2.k_append), pass 0 untouched', async () => {
    const { t, snapshot } = await twoBundles('perturbed', first, perturbed);
    try {
      expect(snapshot.firstDivergence).toEqual({ pass: 1, boundary: 'backbone.l2.k_append' });
      const rows = await rowsOf(t);
      const failing = rows.filter((row) => row.verdict === 'FAIL');
      expect(failing.length).toBeGreaterThan(0);
      expect(failing.every((row) => row.pass >= 1)).toBe(true);
      const divergence = rows.find((row) => row.firstDivergence);
      expect(divergence?.kind).toBe('value');
      const receipt = await t.call('exportReceipt', { keyPath: key.privateKeyPath });
      expect(receipt.seals.slice(0, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    } finally {
      await t.session.close();
    }
  });

  it('a renamed candidate fails without a map file and passes through one, and the map file is a receipt subject', async () => {
    const { t, snapshot: without } = await twoBundles('renamed', first, renamed);
    try {
      expect(without.counts.FAIL).toBeGreaterThan(0);
      const rowsWithout = await rowsOf(t);
      expect(rowsWithout.find((row) => row.pass === 0 && row.boundary === 'backbone.l0.mixer_out')?.kind).toBe('missing');
      expect(rowsWithout.some((row) => row.verdict === 'GAP' && row.boundary === 'layers.0.out')).toBe(true);

      const map = writeJson('rename.map.json', {
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        map: [
          { candidate: 'layers.{i}.out', reference: 'backbone.l{i}.out' },
          { candidate: 'layers.{i}.mixer.out', reference: 'backbone.l{i}.mixer_out' },
        ],
      });
      const mapped = await t.call('setMapFile', { file: map });
      expect(mapped.comparison.mapFile).toEqual({ path: map, name: 'rename.map.json', sha256: sha256(map), entries: 2 });
      expect(mapped.counts.PASS).toBe(mapped.rowCount);
      expect(mapped.rowCount).toBe(await twoBundlesRowCount(first, second));
      expect(mapped.comparison.map?.mapped.length).toBe(12);
      expect(mapped.comparison.map?.mapped).toContainEqual({
        candidate: 'layers.0.out',
        reference: 'backbone.l0.out',
        transform: null,
        passes: expect.any(Number),
      });
      expect(mapped.comparison.map?.unmapped).toEqual([]);
      // The views read the candidate's tensor under the reference's name.
      const element = await t.call('getElement', { pass: 0, boundary: 'backbone.l0.out', flatIndex: 0 });
      expect(element.native).not.toBeNull();
      expect(element.native?.hex).toBe(element.reference?.hex);

      const receipt = await t.call('exportReceipt', { keyPath: key.privateKeyPath });
      expect(receipt.seals).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
      const subjects = subjectsOf(receipt.envelope);
      expect(subjects.get('rename.map.json')).toBe(sha256(map));
      expect(subjects.get('renamed/manifest.json')).toBe(sha256(join(renamed, 'manifest.json')));

      // Cleared: back to the names as they are.
      const cleared = await t.call('setMapFile', { file: null });
      expect(cleared.comparison.mapFile).toBeNull();
      expect(cleared.comparison.map).toBeNull();
      expect(cleared.counts.FAIL).toBe(without.counts.FAIL);
    } finally {
      await t.session.close();
    }
  });

  it('a boundary the map declares unmapped is reported with its reason and passes, never silently dropped', async () => {
    const { t } = await twoBundles('unmapped', first, renamed);
    try {
      const map = writeJson('partial.map.json', {
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        map: [{ candidate: 'layers.{i}.out', reference: 'backbone.l{i}.out' }],
        unmapped: [{ candidate: 'layers.*.mixer.out', reason: 'the port fuses the mixer into the layer' }],
      });
      const snapshot = await t.call('setMapFile', { file: map });
      const unmapped = snapshot.comparison.map?.unmapped ?? [];
      expect(unmapped.map((row) => row.candidate).sort()).toEqual([
        'layers.0.mixer.out',
        'layers.1.mixer.out',
        'layers.2.mixer.out',
        'layers.3.mixer.out',
        'layers.4.mixer.out',
        'layers.5.mixer.out',
      ]);
      expect(unmapped.every((row) => row.reason === 'the port fuses the mixer into the layer' && row.passes > 0)).toBe(true);
      // The reference still expects its mixer outputs: they are missing on the candidate's side, not passed.
      const rows = await rowsOf(t);
      const mixer = rows.filter((row) => /^backbone\.l\d+\.mixer_out$/.test(row.boundary));
      expect(mixer.length).toBeGreaterThan(0);
      expect(mixer.every((row) => row.verdict === 'FAIL' && row.kind === 'missing')).toBe(true);
      expect(rows.filter((row) => row.boundary.startsWith('layers.'))).toEqual([]);
    } finally {
      await t.session.close();
    }
  });

  it('a contracts file is named with its sha256 and judges the rows; everyBoundary holds a faithful reference bit for bit', async () => {
    const { t, snapshot: faithful } = await twoBundles('contracts', referenceBundle(CASE), first);
    try {
      expect(faithful.bundle?.kind).toBe('reference');
      expect(faithful.comparison.contracts?.kind).toBe('manifest');
      expect(faithful.counts.FAIL).toBe(0);
      const contracts = writeJson('logits-exact.contracts.json', {
        schema: 'trace-inspector.contracts',
        schema_version: 1,
        rules: [{ boundaries: 'backbone.logits', contract: 'bit_exact' }],
      });
      const ruled = await t.call('setContractsFile', { file: contracts });
      expect(ruled.comparison.contractsFile).toEqual({ path: contracts, name: 'logits-exact.contracts.json', sha256: sha256(contracts), rules: 1 });
      expect(ruled.comparison.contracts).toMatchObject({ kind: 'file', file: contracts, sha256: sha256(contracts) });
      expect(ruled.firstDivergence).toEqual({ pass: 0, boundary: 'backbone.logits' });
      const rows = await rowsOf(t);
      expect(rows.filter((row) => row.verdict === 'FAIL').every((row) => row.boundary === 'backbone.logits')).toBe(true);
      const receipt = await t.call('exportReceipt', { keyPath: key.privateKeyPath });
      expect(subjectsOf(receipt.envelope).get('logits-exact.contracts.json')).toBe(sha256(contracts));

      // The file changed after it was set: the receipt refuses to sign what the session did not judge.
      writeFileSync(contracts, JSON.stringify({ schema: 'trace-inspector.contracts', schema_version: 1, rules: [{ boundaries: '*', contract: 'bit_exact' }] }));
      const changed = await failureOf(t.call('exportReceipt', { keyPath: key.privateKeyPath }));
      expect(changed.code).toBe('E_STATE');
      expect(changed.message).toContain(`${contracts}: the contracts file changed since it was set`);

      await t.call('setContractsFile', { file: null });
      const baseline = await t.call('setDefaultContract', { contract: 'bit_exact', everyBoundary: true });
      expect(baseline.comparison.contracts?.kind).toBe('all_bit_exact');
      expect(baseline.comparison.defaultContract).toEqual({ contract: 'bit_exact', everyBoundary: true });
      expect(baseline.counts.FAIL).toBeGreaterThan(0);
      expect(new Set((await rowsOf(t)).map((row) => row.contractKind))).toEqual(new Set(['bit_exact']));
      const back = await t.call('setDefaultContract', { contract: 'bit_exact', everyBoundary: false });
      expect(back.counts).toEqual(faithful.counts);
    } finally {
      await t.session.close();
    }
  });
});

async function twoBundlesRowCount(reference: string, candidate: string): Promise<number> {
  const { t, snapshot } = await twoBundles('count', reference, candidate);
  await t.session.close();
  return snapshot.rowCount;
}

describe('a second implementation as the oracle (compare --oracle)', () => {
  it('makes the rows where the run passes the reference and fails the oracle REVIEW_REQUIRED; the receipt names it; cleared, they pass', async () => {
    const { t, snapshot: alone } = await twoBundles('oracle', first, second);
    try {
      expect(alone.bundle?.oracleDir).toBeNull();
      const otherCase = await failureOf(t.call('setOracleBundle', { dir: referenceBundle('greedy') }));
      expect(otherCase.code).toBe('E_BUNDLE');
      expect(otherCase.message).toContain('case.id: is "greedy"');
      expect((await t.call('getSession', {})).rowsVersion).toBe(alone.rowsVersion);

      const judged = await t.call('setOracleBundle', { dir: truncating });
      expect(judged.bundle?.oracleDir).toBe(truncating);
      expect(judged.bundle?.oracleKind).toBe('native');
      expect(judged.firstDivergence).toEqual({ pass: 0, boundary: 'backbone.logits' });
      const rows = await rowsOf(t);
      const review = rows.filter((row) => row.verdict === 'REVIEW_REQUIRED');
      expect(review.length).toBeGreaterThan(0);
      // The logits and the text sampler's values computed from them; the tokens drawn agree.
      expect(review.every((row) => row.boundary === 'backbone.logits' || row.boundary.startsWith('sampler.text.'))).toBe(true);
      expect(review.some((row) => row.boundary === 'sampler.text.token')).toBe(false);
      expect(rows.filter((row) => row.verdict === 'FAIL')).toEqual([]);
      // The numbers against the oracle: the logits differ there, not against the reference.
      const view = { pass: 0, boundary: 'backbone.logits', metric: 'abs_diff', maxRows: 4, maxCols: 4 } as const;
      await t.call('setOracle', { oracle: 'fp64' });
      expect(await t.call('getTensorView', view).then((tensor) => tensor.max)).toBeGreaterThan(0);
      await t.call('setOracle', { oracle: 'reference' });
      expect(await t.call('getTensorView', view).then((tensor) => tensor.max)).toBe(0);

      const receipt = await t.call('exportReceipt', { keyPath: key.privateKeyPath });
      expect(receipt.seals.slice(0, 2)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required']);
      expect(subjectsOf(receipt.envelope).get('truncating/manifest.json')).toBe(sha256(join(truncating, 'manifest.json')));

      const cleared = await t.call('setOracleBundle', { dir: null });
      expect(cleared.bundle?.oracleDir).toBeNull();
      expect(cleared.counts).toEqual(alone.counts);
    } finally {
      await t.session.close();
    }
  });
});

describe('audio A/B on two captures of an audio case', () => {
  it('plays both sides of detok.pcm from the two bundles: the same samples, a silent null residual, WAV files of each', async () => {
    const tailFirst = join(root, 'tail-first');
    const tailSecond = join(root, 'tail-second');
    await capture(tailFirst, [], 'tail');
    await capture(tailSecond, [], 'tail');
    const { t, snapshot } = await twoBundles('audio', tailFirst, tailSecond);
    try {
      expect(snapshot.counts.PASS).toBe(snapshot.rowCount);
      const rows = await rowsOf(t);
      expect(rows.some((row) => row.pcm && row.boundary === 'detok.pcm')).toBe(true);
      const audio = await t.call('getAudio', { boundary: 'detok.pcm' });
      expect(audio.reference.length).toBeGreaterThan(1000);
      expect(audio.native).toBe(audio.reference);
      expect(audio.metrics?.nullOffset).toBe(0);
      expect(audio.metrics?.esr).toBe(0);
      expect(audio.metrics?.nullResidualDbfs).toBe('-Infinity');
      const wav = await t.call('exportWav', { boundary: 'detok.pcm', side: 'native' });
      expect(Buffer.from(wav.bytes, 'base64').subarray(0, 4).toString('latin1')).toBe('RIFF');
    } finally {
      await t.session.close();
    }
  });
});

describe('bad comparison files are refused, naming the file and the field, and change nothing', () => {
  const unchanged = async (t: TestSession, before: SessionSnapshot, rowsBefore: BoundaryRow[]): Promise<void> => {
    const after = await t.call('getSession', {});
    expect(after.comparison).toEqual(before.comparison);
    expect(after.counts).toEqual(before.counts);
    expect(after.rowsVersion).toBe(before.rowsVersion);
    expect(after.openedRun).toBe(before.openedRun);
    expect(await rowsOf(t)).toEqual(rowsBefore);
  };

  it('contracts files: a schema error, and a rule that cannot apply to these bundles', async () => {
    const { t, snapshot: before } = await twoBundles('bad-contracts', first, perturbed);
    try {
      const rowsBefore = await rowsOf(t);
      const schema = writeJson('bad-schema.contracts.json', {
        schema: 'trace-inspector.contracts',
        schema_version: 1,
        rules: [{ boundaries: '*', contract: 'almost_exact' }],
      });
      const refused = await failureOf(t.call('setContractsFile', { file: schema }));
      expect(refused.code).toBe('E_BUNDLE');
      expect(refused.message).toContain(`${schema}: rules[0].contract`);
      await unchanged(t, before, rowsBefore);

      // faithful_from_k on an integer boundary (the sampled tokens) cannot apply: found when applied, not when parsed.
      const integer = writeJson('integer.contracts.json', {
        schema: 'trace-inspector.contracts',
        schema_version: 1,
        rules: [{ boundaries: '*', contract: { faithful_from_k: 8 } }],
      });
      const notApplicable = await failureOf(t.call('setContractsFile', { file: integer }));
      expect(notApplicable.code).toBe('E_BUNDLE');
      expect(notApplicable.message).toContain(`${integer}: rules[0].contract`);
      expect(notApplicable.message).toContain('faithful_from_k applies to floating-point boundaries');
      await unchanged(t, before, rowsBefore);

      const missing = await failureOf(t.call('setContractsFile', { file: join(root, 'no-such.contracts.json') }));
      expect(missing.message).toContain(join(root, 'no-such.contracts.json'));
      await unchanged(t, before, rowsBefore);
      expect((await t.call('getSession', {})).errors.at(-1)?.action).toBe('set contracts file');
    } finally {
      await t.session.close();
    }
  });

  it('map files: a schema error, and two candidate boundaries mapped onto one', async () => {
    const { t, snapshot: before } = await twoBundles('bad-map', first, renamed);
    try {
      const rowsBefore = await rowsOf(t);
      const permute = writeJson('bad-permute.map.json', {
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        map: [{ candidate: 'layers.{i}.out', reference: 'backbone.l{i}.out', permute: [0, 0] }],
      });
      const refused = await failureOf(t.call('setMapFile', { file: permute }));
      expect(refused.code).toBe('E_BUNDLE');
      expect(refused.message).toContain(`${permute}: map[0].permute`);
      await unchanged(t, before, rowsBefore);

      const collide = writeJson('collide.map.json', {
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        map: [{ candidate: 'layers.*', reference: 'backbone.l0.out' }],
      });
      const collision = await failureOf(t.call('setMapFile', { file: collide }));
      expect(collision.code).toBe('E_BUNDLE');
      expect(collision.message).toContain(`${collide}: map[0].reference`);
      expect(collision.message).toContain('both become reference boundary backbone.l0.out');
      await unchanged(t, before, rowsBefore);
    } finally {
      await t.session.close();
    }
  });
});

describe('what the two-bundle session refuses', () => {
  it('a crashed capture as the reference side: the truth must be a completed run', async () => {
    const crashed = join(root, 'crashed');
    cpSync(first, crashed, { recursive: true });
    const manifestPath = join(crashed, 'manifest.json');
    writeFileSync(manifestPath, readFileSync(manifestPath, 'utf8').replace(/"status":\s*"completed"/, '"status": "crashed"'));
    const t = openSession('crashed-reference');
    try {
      const refused = await failureOf(t.call('openBundle', { dir: crashed }));
      expect(refused.code).toBe('E_BUNDLE');
      expect(refused.message).toContain(`${manifestPath}: run.status: is "crashed"; a reference must be a completed run`);
      expect((await t.call('getSession', {})).bundle).toBeNull();
      // As the run to compare, it is judged, not refused: its rows end where it crashed.
      await t.call('openBundle', { dir: first });
      const opened = await t.call('openRun', { dir: crashed });
      expect(opened.run.status).toBe('crashed');
    } finally {
      await t.session.close();
    }
  });

  it('a live run against a capture as the reference: the engine gets the weights the capture names, and every row passes bit for bit', async () => {
    const t = openSession('live-against-capture');
    try {
      await t.call('openEngine', { library: REFERENCE_ENGINE });
      await t.call('openBundle', { dir: first });
      const prefilled = await t.call('prefill', {});
      expect(prefilled.run.message).not.toMatch(/weights/);
      expect(prefilled.rowCount).toBeGreaterThan(0);
      expect(prefilled.counts.PASS).toBe(prefilled.rowCount);
    } finally {
      await t.session.close();
    }
  });

  it('the reference folder as its own run, a run of another case, a live run while a map file is set, settings changes mid-run', async () => {
    const t = openSession('refusals');
    try {
      await t.call('openEngine', { library: REFERENCE_ENGINE });
      await t.call('openBundle', { dir: first });
      const itself = await failureOf(t.call('openRun', { dir: first }));
      expect(itself.message).toContain(`dir: ${first} is the open reference bundle itself`);
      const otherCase = await failureOf(t.call('openRun', { dir: referenceBundle('greedy') }));
      expect(otherCase.code).toBe('E_BUNDLE');
      expect(otherCase.message).toContain('case.id: is "greedy"');
      const map = writeJson('live.map.json', {
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        unmapped: [{ candidate: 'debug.*', reason: 'probes' }],
      });
      await t.call('setMapFile', { file: map });
      const live = await failureOf(t.call('prefill', {}));
      expect(live.code).toBe('E_STATE');
      expect(live.message).toContain(`map file ${map} is set`);

      // Without a map, a live run against the case's reference: mid-run the settings are refused;
      // once it finished, its bundle is judged again under the new ones.
      await t.call('setMapFile', { file: null });
      await t.call('openBundle', { dir: referenceBundle(CASE) });
      const prefilled = await t.call('prefill', {});
      expect(prefilled.counts.FAIL).toBe(0);
      const midRun = await failureOf(t.call('setDefaultContract', { contract: 'bit_exact', everyBoundary: true }));
      expect(midRun.code).toBe('E_STATE');
      expect(midRun.message).toContain('Reset first');
      expect((await t.call('getSession', {})).comparison.defaultContract.everyBoundary).toBe(false);
      const finished = await t.call('runToEnd', {});
      expect(finished.counts.FAIL).toBe(0);
      const nativeDir = finished.run.message.match(/captured into (\S+)$/)?.[1] ?? '';
      const held = await t.call('setDefaultContract', { contract: 'bit_exact', everyBoundary: true });
      expect(held.openedRun).toBe(nativeDir);
      expect(held.rowCount).toBe(finished.rowCount);
      expect(held.counts.FAIL).toBeGreaterThan(0);
    } finally {
      await t.session.close();
    }
  });
});

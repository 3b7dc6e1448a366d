// What goes wrong must cost the run at most, never the session: an engine that segfaults
// mid-pass, a library that is not an engine, a corrupt bundle, a corrupt recent-items file, and
// a second operation while one runs. Each failure is specific (file and field, pass and
// boundary) and what was captured before it stays.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REFERENCE_ENGINE, TESTLIB_DIR, referenceBundle } from '../helpers/paths.ts';
import { SEGV_ENGINE, TOY_ENGINE, writeToyCase } from '../gate/gate-fixtures.ts';
import { failureOf, openSession, removeTempDirs, tempDir } from './session-fixtures.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';

afterAll(() => removeTempDirs());

describe('an engine that crashes mid-pass', () => {
  it('ends the run with an error naming the pass and the last boundary; earlier rows stay; Reset restarts the engine', async () => {
    const toy = writeToyCase(tempDir('toy-case'), { oracle: true });
    const t = openSession('segv');
    try {
      await t.call('openEngine', { library: SEGV_ENGINE });
      await t.call('openBundle', { dir: toy.referenceDir });
      const prefill = await t.call('prefill', {});
      expect(prefill.counts.PASS).toBe(3);

      const crashed = await t.call('step', {});
      expect(crashed.run.status).toBe('crashed');
      expect(crashed.nextPass).toBeNull();
      expect(crashed.timeline.map((pass) => pass.state)).toEqual(['done', 'crashed', 'pending']);
      const error = crashed.errors.at(-1);
      expect(error?.action).toBe('pass 1 (decode)');
      expect(error?.message).toMatch(/crashed in pass 1 \(decode\), after boundary toy\.mix/);
      expect(error?.message).toContain('SIGSEGV');
      expect(crashed.run.message).toBe(error?.message);

      const rows = decodeRows(await t.call('getRows', {}));
      expect(rows.filter((row) => row.pass === 0).map((row) => row.verdict)).toEqual(['PASS', 'PASS', 'PASS']);
      // The two records written before the crash were recovered and judged; the third is missing.
      expect(rows.filter((row) => row.pass === 1).map((row) => `${row.boundary} ${row.verdict}`)).toEqual(['toy.embed PASS', 'toy.mix PASS', 'toy.token FAIL']);
      expect(rows.find((row) => row.id === '1:toy.token')?.reason).toContain('toy.mix');
      expect(crashed.firstDivergence).toEqual({ pass: 1, boundary: 'toy.token' });

      // The session still answers, and refuses to step a dead run.
      const snapshot = await t.call('getSession', {});
      expect(snapshot.engine?.library).toBe(SEGV_ENGINE);
      expect((await failureOf(t.call('step', {}))).code).toBe('E_STATE');

      await t.call('dismissError', { id: error?.id ?? -1 });
      expect((await t.call('getSession', {})).errors).toEqual([]);

      const reset = await t.call('reset', {});
      expect(reset.run.status).toBe('idle');
      expect(reset.nextPass).toBe(0);
      const again = await t.call('prefill', {});
      expect(again.timeline[0]?.state).toBe('done');
      expect(again.counts.PASS).toBe(3);
    } finally {
      await t.session.close();
    }
  });
});

describe('bad inputs', () => {
  it('a library that is not an engine: a specific error, the engine and the rows already captured are kept', async () => {
    const toy = writeToyCase(tempDir('toy-case-2'));
    const t = openSession('not-an-engine');
    try {
      await t.call('openEngine', { library: TOY_ENGINE });
      await t.call('openBundle', { dir: toy.referenceDir });
      const before = await t.call('prefill', {});
      const library = join(TESTLIB_DIR, 'libnot_an_engine.so');
      const failure = await failureOf(t.call('openEngine', { library }));
      expect(failure.code).toBe('E_ENGINE');
      expect(failure.message).toContain(library);
      expect(failure.message).toMatch(/ti_abi_version|symbol/);
      const after = await t.call('getSession', {});
      expect(after.engine?.library).toBe(TOY_ENGINE);
      expect(after.rowCount).toBe(before.rowCount);
      expect(after.errors.at(-1)).toMatchObject({ action: 'open engine', message: failure.message });
    } finally {
      await t.session.close();
    }
  });

  it('a corrupt bundle: the file and the field are named, the open bundle and its rows are kept', async () => {
    const copy = join(tempDir('corrupt'), 'reference');
    cpSync(referenceBundle('greedy'), copy, { recursive: true });
    // The copy must find the weights where the original does.
    const manifestPath = join(copy, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { provenance: { model: { weights_file: string } } };
    manifest.provenance.model.weights_file = join(referenceBundle('greedy'), manifest.provenance.model.weights_file);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const pass = join(copy, 'pass-003.safetensors');
    const bytes = readFileSync(pass);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
    writeFileSync(pass, bytes);

    const t = openSession('corrupt-bundle');
    try {
      await t.call('openEngine', { library: REFERENCE_ENGINE });
      await t.call('openBundle', { dir: referenceBundle('greedy') });
      const before = await t.call('prefill', {});
      const failure = await failureOf(t.call('openBundle', { dir: copy }));
      expect(failure.code).toBe('E_BUNDLE');
      expect(failure.message).toContain(pass);
      expect(failure.message).toContain('files[4].sha256');
      const after = await t.call('getSession', {});
      expect(after.bundle?.dir).toBe(referenceBundle('greedy'));
      expect(after.rowCount).toBe(before.rowCount);
      expect(after.errors.at(-1)?.action).toBe('open bundle');
      // The open reference is not a run to compare with itself.
      const itself = await failureOf(t.call('openRun', { dir: referenceBundle('greedy') }));
      expect(itself.message).toContain(`dir: ${referenceBundle('greedy')} is the open reference bundle itself`);
    } finally {
      await t.session.close();
    }
  });

  it('an option the engine refuses at prefill: a specific error, the finished run and its rows are kept', async () => {
    const t = openSession('refused-option');
    try {
      await t.call('openEngine', { library: REFERENCE_ENGINE });
      await t.call('openBundle', { dir: referenceBundle('greedy') });
      const finished = await t.call('runToEnd', {});
      await t.call('setEngineOptions', { options: { 'perturb.kv_position_off_by_one': 'banana' } });
      const failure = await failureOf(t.call('prefill', {}));
      expect(failure.code).toBe('E_ENGINE');
      expect(failure.message).toContain('perturb.kv_position_off_by_one=banana');
      const after = await t.call('getSession', {});
      expect(after.run).toEqual(finished.run);
      expect(after.rowCount).toBe(finished.rowCount);
      expect(after.errors.at(-1)).toMatchObject({ action: 'prefill', message: failure.message });
    } finally {
      await t.session.close();
    }
  });

  it('a corrupt recent-items file is ignored with an error, never a crash, and rewritten valid', async () => {
    const dir = tempDir('recent');
    const recentFile = join(dir, 'recent.json');
    writeFileSync(recentFile, JSON.stringify({ schema: 'trace-inspector.recent', schema_version: 1, engines: [42], bundles: [] }));
    const t = openSession('recent', { recentFile });
    try {
      const snapshot = await t.call('getSession', {});
      expect(snapshot.recent).toEqual({ engines: [], bundles: [] });
      expect(snapshot.errors).toHaveLength(1);
      expect(snapshot.errors[0]?.message).toContain(`${recentFile}: engines.0`);
      await t.call('openBundle', { dir: referenceBundle('greedy') });
      const saved = JSON.parse(readFileSync(recentFile, 'utf8')) as { bundles: string[] };
      expect(saved.bundles).toEqual([referenceBundle('greedy')]);
    } finally {
      await t.session.close();
    }
    // A second session reads it back.
    const reopened = openSession('recent-2', { recentFile });
    try {
      expect((await reopened.call('getSession', {})).recent.bundles).toEqual([referenceBundle('greedy')]);
    } finally {
      await reopened.session.close();
    }
  });
});

describe('one engine operation at a time', () => {
  it('a second operation while one runs is refused with E_BUSY; getters keep answering', async () => {
    const t = openSession('busy');
    try {
      await t.call('openDefault', {});
      const running = t.call('runToEnd', {});
      const during = await t.call('getSession', {});
      expect(during.busy).toBe('run to end');
      const busy = await failureOf(t.call('step', {}));
      expect(busy.code).toBe('E_BUSY');
      expect(busy.message).toContain('"run to end" is still running');
      expect((await failureOf(t.call('openBundle', { dir: referenceBundle('greedy') }))).code).toBe('E_BUSY');
      await t.call('getRows', {});
      const done = await running;
      expect(done.busy).toBeNull();
      expect(done.run.status).toBe('completed');
      // Busy is not an error of the user's evidence: nothing was logged.
      expect(done.errors).toEqual([]);
    } finally {
      await t.session.close();
    }
  });
});

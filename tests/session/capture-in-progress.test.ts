// The read-only view of a capture in progress: built from the journal and the sealed pass files
// while the engine host still writes, it holds exactly the sealed passes, byte for byte what the
// finished bundle will hold, and reads are digest-checked like any bundle's. Opened again after
// every pass, it reads only what was sealed since, yet equals a fresh read, and still catches an
// earlier pass file changed between the opens.
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { CaptureInProgressReader, jsonDigestsInSlices, openCaptureInProgress } from '../../main/core/bundle/capture-in-progress.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { openersOffThread, type BundleOpeners } from '../../main/session/bundle-openers.ts';
import { JudgePool } from '../../main/session/judge-pool.ts';
import { captureHeader, setInputs, toyInputs } from '../engine-host/engine-host-fixtures.ts';
import { TOY_ENGINE } from '../gate/gate-fixtures.ts';
import { removeTempDirs, tempDir } from './session-fixtures.ts';
import { rejectionOf } from '../helpers/rejection.ts';

afterAll(() => removeTempDirs());

describe('openCaptureInProgress', () => {
  it('shows the sealed passes of a running capture, the same bytes as the finished bundle', async () => {
    const dir = join(tempDir('in-progress'), 'native');
    const host = await EngineHost.start({ library: TOY_ENGINE });
    try {
      const inputs = toyInputs();
      await host.open();
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs));
      await expect(openCaptureInProgress(dir)).resolves.toMatchObject({ passes: [] });
      await host.runPass('prefill');
      await host.runPass('decode');

      const view = await openCaptureInProgress(dir);
      expect(view.manifestPath).toBe(join(dir, 'capture.journal.jsonl'));
      expect(view.passes.map((pass) => [pass.index, pass.kind, pass.mode])).toEqual([
        [0, 'prefill', 'text'],
        [1, 'decode', 'text'],
      ]);
      expect(view.manifest.run?.status).toBe('aborted');
      expect(view.manifest.run?.message).toMatch(/capture in progress/);
      const during = await view.readBoundary(1, 'toy.mix');

      // Tampering with a sealed file is caught on read, as in any bundle.
      const passFile = join(dir, 'pass-001.safetensors');
      const original = readFileSync(passFile);
      const tampered = Buffer.from(original);
      tampered[tampered.length - 1] = (tampered[tampered.length - 1] ?? 0) ^ 1;
      writeFileSync(passFile, tampered);
      const checked = await openCaptureInProgress(dir);
      const failure = await checked.readBoundary(1, 'toy.token').then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(BundleError);
      expect((failure as BundleError).code).toBe('E_DIGEST');
      writeFileSync(passFile, original);
      await Promise.all([view.close(), checked.close()]);

      await host.runPass('decode');
      await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: 'toy.token' });
      const finished = await openBundle(dir);
      const after = await finished.readBoundary(1, 'toy.mix');
      expect(Buffer.compare(Buffer.from(after.data), Buffer.from(during.data))).toBe(0);
      expect(finished.passes).toHaveLength(3);
      await finished.close();
    } finally {
      await host.close();
    }
  });
});

/** The error `promise` rejects with, as a BundleError (fails the test when it resolves). */
const bundleErrorOf = (promise: Promise<unknown>): Promise<BundleError> => rejectionOf(promise, BundleError);

describe('a view of a capture in progress opened again after each pass', () => {
  it('reads on from the view before, and equals a fresh read of the journal at every pass', async () => {
    const dir = join(tempDir('in-progress-grows'), 'native');
    const host = await EngineHost.start({ library: TOY_ENGINE });
    try {
      const inputs = toyInputs();
      await host.open();
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs));
      const reader = new CaptureInProgressReader(dir);
      const views = [await reader.open()];
      for (const kind of ['prefill', 'decode', 'decode'] as const) {
        await host.runPass(kind);
        const grown = await reader.open();
        const fresh = await openCaptureInProgress(dir);
        expect(grown.manifest).toEqual(fresh.manifest);
        // The passes read before are the entries already validated, not parsed again.
        const before = views.at(-1)?.passes ?? [];
        before.forEach((pass, p) => expect(grown.passes[p]).toBe(pass));
        const last = grown.passes.at(-1);
        for (const entry of last?.boundaries ?? []) {
          const [a, b] = await Promise.all([grown.readBoundary(last?.index ?? -1, entry.name), fresh.readBoundary(last?.index ?? -1, entry.name)]);
          expect(Buffer.compare(Buffer.from(a.data), Buffer.from(b.data))).toBe(0);
        }
        views.push(grown);
        await fresh.close();
      }
      expect(views.at(-1)?.passes.map((pass) => pass.index)).toEqual([0, 1, 2]);
      // An earlier view still reads its own passes.
      await expect(views[1]?.readBoundary(0, 'toy.mix')).resolves.toMatchObject({ dtype: 'F32' });
      await Promise.all(views.map((view) => view.close()));
    } finally {
      await host.close();
    }
  });

  it('an earlier pass file changed between the opens fails the next open, naming the file and the field', async () => {
    const dir = join(tempDir('in-progress-changed'), 'native');
    const host = await EngineHost.start({ library: TOY_ENGINE });
    try {
      const inputs = toyInputs();
      await host.open();
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs));
      const reader = new CaptureInProgressReader(dir);
      await host.runPass('prefill');
      // A whole second as its modification time, so that setting it back below restores it exactly.
      const passFile = join(dir, 'pass-000.safetensors');
      const stamp = 1_700_000_000;
      utimesSync(passFile, stamp, stamp);
      const first = await reader.open();
      const mixAt = first.passes[0]?.boundaries.findIndex((entry) => entry.name === 'toy.mix') ?? -1;
      await host.runPass('decode');

      // The same size, its header saying another dtype: its header is read again and cross-checked.
      const original = readFileSync(passFile);
      const header = original.subarray(8, 8 + Number(original.readBigUInt64LE(0)));
      const at = header.indexOf('"toy.mix"');
      const dtypeAt = header.indexOf('"F32"', at);
      const edited = Buffer.from(original);
      edited.write('"I32"', 8 + dtypeAt, 'latin1');
      writeFileSync(passFile, edited);
      // Its modification time set back, as any process that owns the file can: the change time cannot be.
      utimesSync(passFile, stamp, stamp);
      const changed = await bundleErrorOf(reader.open());
      expect(changed.code).toBe('E_DTYPE_MISMATCH');
      expect(changed.file).toBe(passFile);
      expect(changed.issues.map((issue) => issue.field)).toContain(`passes[0].boundaries[${mixAt}].dtype`);
      // Still refused on the open after (nothing was taken on trust from the failed one).
      expect((await bundleErrorOf(reader.open())).code).toBe('E_DTYPE_MISMATCH');

      // One byte longer: E_FILE_SIZE naming the file and its files[] entry.
      writeFileSync(passFile, Buffer.concat([original, Buffer.from([0])]));
      const longer = await bundleErrorOf(reader.open());
      expect(longer.code).toBe('E_FILE_SIZE');
      expect(longer.file).toBe(passFile);
      expect(longer.issues[0]?.field).toBe('files[1].bytes');

      // Restored, the view opens again.
      writeFileSync(passFile, original);
      await expect(reader.open()).resolves.toMatchObject({ passes: [{ index: 0 }, { index: 1 }] });
      await first.close();

      // A line appended later is named by its own line number in the journal.
      await host.close();
      const journal = join(dir, 'capture.journal.jsonl');
      const lines = readFileSync(journal, 'utf8').split('\n').length - 1;
      appendFileSync(journal, '{"t":"pass_begin"}\n');
      const bad = await bundleErrorOf(reader.open());
      expect(bad.code).toBe('E_JOURNAL');
      expect(bad.issues[0]?.field).toBe(`line ${lines + 1}`);
    } finally {
      await host.close();
    }
  });
});

describe('the finished capture, opened from the last view of it in progress', () => {
  /** A toy capture stepped through prefill and a decode, each pass's view opened; the third pass runs in `last`. */
  async function steppedCapture(
    name: string,
  ): Promise<{ dir: string; host: EngineHost; reader: CaptureInProgressReader; view: Awaited<ReturnType<CaptureInProgressReader['open']>> }> {
    const dir = join(tempDir(name), 'native');
    const host = await EngineHost.start({ library: TOY_ENGINE });
    const inputs = toyInputs();
    await host.open();
    await setInputs(host, inputs);
    await host.beginCapture(dir, captureHeader(host, inputs));
    const reader = new CaptureInProgressReader(dir);
    await host.runPass('prefill');
    await reader.open();
    await host.runPass('decode');
    return { dir, host, reader, view: await reader.open() };
  }

  const finish = async (host: EngineHost): Promise<void> => {
    await host.runPass('decode');
    await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: 'toy.token' });
  };

  it('equals a fresh open of the finished capture, its earlier pass entries the ones validated before', async () => {
    const { dir, host, reader, view } = await steppedCapture('finished-grown');
    try {
      await finish(host);
      const grown = await reader.open();
      const fresh = await openBundle(dir, { verify: 'none' });
      expect(grown.manifestPath).toBe(join(dir, 'manifest.json'));
      expect(grown.manifest).toEqual(fresh.manifest);
      expect(grown.manifest.run?.status).toBe('completed');
      // Known again by their JSON's sha256: the passes of the view before are its very objects.
      view.passes.forEach((pass, p) => expect(grown.passes[p]).toBe(pass));
      for (const pass of fresh.passes) {
        for (const entry of pass.boundaries) {
          const [a, b] = await Promise.all([grown.readBoundary(pass.index, entry.name), fresh.readBoundary(pass.index, entry.name)]);
          expect(Buffer.compare(Buffer.from(a.data), Buffer.from(b.data))).toBe(0);
        }
      }
      // Opened again, the finished view is the same.
      const again = await reader.open();
      expect(again.manifest).toEqual(fresh.manifest);
      await Promise.all([view.close(), grown.close(), fresh.close(), again.close()]);
    } finally {
      await host.close();
    }
  });

  it('an earlier pass file changed before the last step fails the finished view as it fails a fresh open, naming the file and the field', async () => {
    const { dir, host, reader, view } = await steppedCapture('finished-file-changed');
    try {
      const passFile = join(dir, 'pass-000.safetensors');
      const stamp = 1_700_000_000;
      utimesSync(passFile, stamp, stamp);
      const original = readFileSync(passFile);
      const header = original.subarray(8, 8 + Number(original.readBigUInt64LE(0)));
      const edited = Buffer.from(original);
      edited.write('"I32"', 8 + header.indexOf('"F32"', header.indexOf('"toy.mix"')), 'latin1');
      writeFileSync(passFile, edited);
      // Its modification time set back, as any owner can: its change time moved all the same.
      utimesSync(passFile, stamp, stamp);
      await finish(host);
      const freshFailure = await bundleErrorOf(openBundle(dir, { verify: 'none' }));
      const grownFailure = await bundleErrorOf(reader.open());
      expect(grownFailure.code).toBe('E_DTYPE_MISMATCH');
      expect(grownFailure.file).toBe(passFile);
      expectSameFailure(grownFailure, freshFailure);
      await view.close();
    } finally {
      await host.close();
    }
  });

  /** Edits the finished manifest.json of a stepped capture: `change` returns the field its edit changes. */
  async function editedFinished(
    name: string,
    change: (manifest: EditableManifest) => string,
  ): Promise<{ dir: string; reader: CaptureInProgressReader; field: string; close: () => Promise<void> }> {
    const { dir, host, reader, view } = await steppedCapture(name);
    try {
      await finish(host);
    } finally {
      await host.close();
    }
    const manifestPath = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as EditableManifest;
    const field = change(manifest);
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    return { dir, reader, field, close: () => view.close() };
  }

  /** The finished view refuses an entry the view before validated (and the passes were judged from) that the finished manifest states otherwise. */
  async function expectRefused(name: string, change: (manifest: EditableManifest) => string): Promise<void> {
    const { dir, reader, field, close } = await editedFinished(name, change);
    const failure = await bundleErrorOf(reader.open());
    expect([failure.code, failure.file, failure.field]).toEqual(['E_JOURNAL', join(dir, 'manifest.json'), field]);
    expect(failure.message).toMatch(/judged/);
    await close();
  }

  const mixOfPass0 = (manifest: EditableManifest): { at: number; mix: { dtype: string } } => {
    const at = manifest.passes[0]?.boundaries.findIndex((entry) => entry.name === 'toy.mix') ?? -1;
    const mix = manifest.passes[0]?.boundaries[at];
    if (mix === undefined) throw new Error('pass 0 records no toy.mix');
    return { at, mix };
  };

  it('an earlier pass entry of manifest.json that differs from the one judged is refused, naming manifest.json and the field', async () => {
    // The finished manifest says pass 0's toy.mix is I32; the journal (and its file's header) F32.
    await expectRefused('finished-pass-changed', (manifest) => {
      const { at, mix } = mixOfPass0(manifest);
      mix.dtype = 'I32';
      return `passes[0].boundaries[${at}].dtype`;
    });
  });

  it('inputs of manifest.json that differ from the ones validated are refused, naming manifest.json and the field', async () => {
    await expectRefused('finished-inputs-changed', (manifest) => {
      // prompt_tokens is I32 in its file's header.
      const at = manifest.inputs.findIndex((entry) => entry.dtype === 'I32');
      const input = manifest.inputs[at];
      if (input === undefined) throw new Error('no I32 input');
      input.dtype = 'F32';
      return `inputs[${at}].dtype`;
    });
  });

  it('an earlier pass entry that a fresh open accepts (another mode) is refused all the same: the rows were judged from the journal', async () => {
    const { dir, reader, field, close } = await editedFinished('finished-mode-changed', (manifest) => {
      const pass = manifest.passes[0];
      if (pass === undefined) throw new Error('no pass 0');
      pass.mode = 'audio';
      return 'passes[0].mode';
    });
    const fresh = await openBundle(dir, { verify: 'none' });
    expect(fresh.passes[0]?.mode).toBe('audio');
    await fresh.close();
    const failure = await bundleErrorOf(reader.open());
    expect([failure.code, failure.file, failure.field]).toEqual(['E_JOURNAL', join(dir, 'manifest.json'), field]);
    await close();
  });
});

describe("the finished read on a judging worker (the session's serving thread)", () => {
  const pool = new JudgePool({ workers: 1 });
  afterAll(() => pool.close());

  /** A toy capture whose views after prefill and a decode were opened by `openers`, then finished; `edit` may change its manifest.json. */
  async function finishedThrough(name: string, openers: BundleOpeners, edit: (manifest: EditableManifest) => void = () => undefined) {
    const dir = join(tempDir(name), 'native');
    const host = await EngineHost.start({ library: TOY_ENGINE });
    const views: TraceBundle[] = [];
    try {
      const inputs = toyInputs();
      await host.open();
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs));
      await host.runPass('prefill');
      views.push(await openers.capture(dir));
      await host.runPass('decode');
      views.push(await openers.capture(dir));
      await host.runPass('decode');
      await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: 'toy.token' });
    } finally {
      await host.close();
    }
    const manifestPath = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as EditableManifest;
    edit(manifest);
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    return { dir, views };
  }

  it("equals a fresh open, the earlier entries the serving view's own objects and the last pass's sent across", async () => {
    const openers = openersOffThread(pool);
    const { dir, views } = await finishedThrough('off-thread-finished', openers);
    const grown = await openers.capture(dir);
    const fresh = await openBundle(dir, { verify: 'none' });
    expect(grown.manifestPath).toBe(join(dir, 'manifest.json'));
    expect(grown.manifest).toEqual(fresh.manifest);
    views[1]?.passes.forEach((pass, p) => expect(grown.passes[p]).toBe(pass));
    const last = await grown.readBoundary(2, 'toy.token');
    const lastFresh = await fresh.readBoundary(2, 'toy.token');
    expect(Buffer.compare(Buffer.from(last.data), Buffer.from(lastFresh.data))).toBe(0);
    await Promise.all([...views, grown, fresh].map((bundle) => bundle.close()));
  });

  it("an earlier entry that differs from the serving view's is refused naming manifest.json and the pass, though the worker (no view of its own) accepted it", async () => {
    const openers = openersOffThread(pool);
    const { dir, views } = await finishedThrough('off-thread-mode-changed', openers, (manifest) => {
      const pass = manifest.passes[1];
      if (pass === undefined) throw new Error('no pass 1');
      pass.mode = 'audio';
    });
    const failure = await bundleErrorOf(openers.capture(dir));
    expect([failure.code, failure.file, failure.field]).toEqual(['E_JOURNAL', join(dir, 'manifest.json'), 'passes[1]']);
    await Promise.all(views.map((bundle) => bundle.close()));
  });
});

interface EditableManifest {
  inputs: { file: string; dtype: string }[];
  passes: { file: string; mode: string | null; boundaries: { name: string; dtype: string }[] }[];
}

describe('the finished read on the serving thread', () => {
  it('hashes the entries in slices, the event loop running between them, the same digests in order', async () => {
    const values: unknown[] = Array.from({ length: 12 }, (_, i) => ({ index: i, name: `pass ${i}`, boundaries: [i, 'x'.repeat(40)] }));
    values.push(undefined, null, [1, 2]);
    const expected = values.map((v) =>
      createHash('sha256')
        .update(JSON.stringify(v) ?? 'undefined')
        .digest('hex'),
    );
    let turns = 0;
    let running = true;
    const tick = (): void => {
      if (!running) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    // A slice of about two entries' JSON: the loop gets a turn at least every few entries.
    const digests = await jsonDigestsInSlices(values, JSON.stringify(values[0]).length * 2);
    running = false;
    expect(digests).toEqual(expected);
    // The ticker ran while the digests were being made (not only before they started or after they ended).
    expect(turns).toBeGreaterThanOrEqual(Math.floor(values.length / 3));
  });
});

/** The grown view refuses as a fresh open does: the same code, file and fields. */
function expectSameFailure(grown: BundleError, fresh: BundleError): void {
  expect([grown.code, grown.file, grown.issues.map((issue) => issue.field)]).toEqual([fresh.code, fresh.file, fresh.issues.map((issue) => issue.field)]);
}

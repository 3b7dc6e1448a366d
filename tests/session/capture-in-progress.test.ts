// The read-only view of a capture in progress: built from the journal and the sealed pass files
// while the engine host still writes, it holds exactly the sealed passes, byte for byte what the
// finished bundle will hold, and reads are digest-checked like any bundle's. Opened again after
// every pass, it reads only what was sealed since, yet equals a fresh read, and still catches an
// earlier pass file changed between the opens.
import { appendFileSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { CaptureInProgressReader, openCaptureInProgress } from '../../main/core/bundle/capture-in-progress.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
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

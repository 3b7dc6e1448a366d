// The read-only view of a capture in progress: built from the journal and the sealed pass files
// while the engine host still writes, it holds exactly the sealed passes, byte for byte what the
// finished bundle will hold, and reads are digest-checked like any bundle's.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { openCaptureInProgress } from '../../main/core/bundle/capture-in-progress.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { captureHeader, setInputs, toyInputs } from '../engine-host/engine-host-fixtures.ts';
import { TOY_ENGINE } from '../gate/gate-fixtures.ts';
import { removeTempDirs, tempDir } from './session-fixtures.ts';

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

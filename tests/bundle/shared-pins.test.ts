// Pins handed to another thread (file-pins.ts pinsToShare / adoptPins: the session's judging
// workers read the files the session verified by their identity). Only the tensors asked for
// are shared; TRACE_INSPECTOR_REHASH=always adopts none; and an adopted pin guards a read exactly
// as the thread's own: a file changed after it was verified is caught at the tensor changed.
import { openSync, readSync, realpathSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { adoptPins, forgetPin, PIN_MARGIN_MS, pinOf, pinsToShare, REHASH_ENV } from '../../main/core/bundle/file-pins.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import { removeTempDirs, tempDir, writeToyCase } from '../gate/gate-fixtures.ts';

afterAll(removeTempDirs);

describe('pins shared with another thread', () => {
  it('shares the tensors asked for, adopts them unless every read is to re-hash, and an adopted pin still catches a changed file', async () => {
    const toy = writeToyCase(tempDir('shared-pins'));
    await sleep(PIN_MARGIN_MS + 50);
    const bundle = await openBundle(toy.referenceDir);
    try {
      const pass = bundle.passes[0];
      const entry = bundle.boundary(0, 'toy.embed');
      if (pass === undefined || entry === undefined) throw new Error('test: the toy case has no toy.embed in pass 0');
      const file = realpathSync(join(bundle.dir, pass.file));
      const own = pinOf(file);
      expect(own?.tensors.get(entry.key)).toBe(entry.sha256);

      const shared = pinsToShare([
        { realPath: file, tensors: new Set([entry.key, 'no-such-tensor']) },
        { realPath: join(bundle.dir, 'not-verified.safetensors'), tensors: new Set([entry.key]) },
        { realPath: file, tensors: new Set() },
      ]);
      expect(shared).toEqual([{ realPath: file, identity: own?.identity, sha256: own?.sha256, tensors: [[entry.key, entry.sha256]] }]);

      // As a worker thread that holds no pin of its own takes it:
      forgetPin(file);
      adoptPins(shared, { [REHASH_ENV]: 'always' });
      expect(pinOf(file)).toBeUndefined();
      adoptPins(shared, {});
      expect([...(pinOf(file)?.tensors ?? [])]).toEqual([[entry.key, entry.sha256]]);

      // The file changes after it was verified: the read by the adopted pin is refused, naming the tensor.
      const tensors = await SafetensorsFile.open(file);
      const at = tensors.dataStart + (tensors.tensor(entry.key)?.begin ?? 0);
      await tensors.close();
      const fd = openSync(file, 'r+');
      const byte = new Uint8Array(1);
      readSync(fd, byte, 0, 1, at);
      writeSync(fd, new Uint8Array([(byte[0] ?? 0) ^ 0xff]), 0, 1, at);
      closeSync(fd);
      const error = await bundle.readBoundary(0, 'toy.embed').then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(BundleError);
      expect((error as BundleError).code).toBe('E_DIGEST');
      expect((error as BundleError).message).toContain(entry.key);
    } finally {
      await bundle.close();
    }
  });
});

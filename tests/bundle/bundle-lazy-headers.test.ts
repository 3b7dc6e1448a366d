// A bundle opened with headers 'lazy' (bundle-reader.ts: the app's judging workers and its serving
// thread open a run this way, so its first pass is judged once that pass's header is checked, not
// every pass file's): each file's header is checked before the first read from that file, with the
// same checks and the same error as an eager open. A header that disagrees with the manifest in the
// LAST pass's file must still refuse every read from that file and fail checkHeaders() naming the
// file and the field, while the first pass, whose header agrees, reads at once.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, readManifest } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { writeLyingHeaderCopy, writeTablePair, type BundlePair } from '../helpers/synthetic-run.ts';
import { tempDirTracker } from '../helpers/paths.ts';
import { rejectionOf } from '../helpers/rejection.ts';

const { tempDir, removeTempDirs } = tempDirTracker('lazy-headers');
const PASSES = 3;
const PER_PASS = 10;
const LAST = PASSES - 1;

let pair: BundlePair;
let badDir: string;
let badFile: string;
let badField: string;

beforeAll(() => {
  pair = writeTablePair(tempDir('pair'), 'lazy-headers', PASSES, PER_PASS);
  // The last boundary of the last pass: [4, 8] in its file, [8, 4] in the manifest.
  ({ dir: badDir, file: badFile, field: badField } = writeLyingHeaderCopy(pair.nativeDir, join(tempDir('bad'), 'native'), LAST, PER_PASS));
});
afterAll(removeTempDirs);

describe("a bundle opened with headers 'lazy'", () => {
  it('opens although a later header lies; reads the first pass; refuses every read of the bad file and checkHeaders() with the eager error', async () => {
    const eager = await rejectionOf(openBundle(badDir, { verify: 'none' }), BundleError);
    expect(eager.code).toBe('E_SHAPE_MISMATCH');
    const bundle = await openBundle(badDir, { verify: 'none', headers: 'lazy' });
    try {
      const first = await bundle.readBoundary(0, 'layer000.op0');
      expect(first.shape).toEqual([4, 8]);
      // A boundary of the bad file whose own entry is right is refused too: the file's header as a whole disagrees.
      const failure = await rejectionOf(bundle.readBoundary(LAST, 'layer000.op0'), BundleError);
      expect(failure.code).toBe('E_SHAPE_MISMATCH');
      expect(failure.file).toBe(badFile);
      expect(failure.message).toContain(badField);
      expect(failure.message).toBe(eager.message);
      const chunks = async (): Promise<void> => {
        for await (const chunk of bundle.readBoundaryChunks(LAST, 'layer000.op9')) expect(chunk).toBeDefined();
      };
      await expect(chunks()).rejects.toBe(failure);
      await expect(bundle.readBoundaryRange(LAST, 'layer000.op1', 0, 4)).rejects.toBe(failure);
      const all = await rejectionOf(bundle.checkHeaders?.() ?? Promise.resolve(), BundleError);
      expect(all).toBe(failure);
    } finally {
      await bundle.close();
    }
  });

  it('an intact bundle reads every pass and its inputs as the eager open does, and checkHeaders() resolves', async () => {
    const manifest = await readManifest(pair.nativeDir);
    const lazy = await openBundle(pair.nativeDir, { verify: 'none', headers: 'lazy' });
    const eager = await openBundle(pair.nativeDir, { verify: 'none' });
    try {
      for (let pass = 0; pass < PASSES; pass++) {
        const name = manifest.passes[pass]?.boundaries[PER_PASS - 1]?.name ?? '';
        expect(await lazy.readBoundary(pass, name)).toEqual(await eager.readBoundary(pass, name));
      }
      expect(await lazy.readInput('prompt_tokens')).toEqual(await eager.readInput('prompt_tokens'));
      await expect(lazy.checkHeaders?.()).resolves.toBeUndefined();
    } finally {
      await Promise.all([lazy.close(), eager.close()]);
    }
  });
});

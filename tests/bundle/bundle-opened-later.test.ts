// The app opens a run from its validated manifest and checks its files' headers while the first
// passes are verified and judged (bundle-opened-later.ts, verify-in-pass-order.ts alsoAwaiting):
// a header that disagrees with the manifest, in the LAST pass's file, must still fail the open
// naming the file and the field — every wait, including one for a pass whose own file is
// intact, and every read — and never leave the run half opened.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { alsoAwaiting, verifyInPassOrder } from '../../main/core/bundle/verify-in-pass-order.ts';
import { openersHere } from '../../main/session/bundle-openers.ts';
import { writeLyingHeaderCopy, writeTablePair, type BundlePair } from '../helpers/synthetic-run.ts';
import { tempDirTracker } from '../helpers/paths.ts';
import { failureOf, openSession } from '../session/session-fixtures.ts';
import { rejectionOf } from '../helpers/rejection.ts';

const { tempDir, removeTempDirs } = tempDirTracker('opened-later');
const PASSES = 3;
const PER_PASS = 10;
const LAST = PASSES - 1;

let pair: BundlePair;
let badDir: string;
let badFile: string;
let badField: string;

beforeAll(() => {
  pair = writeTablePair(tempDir('pair'), 'opened-later', PASSES, PER_PASS);
  // The last boundary of the last pass: [4, 8] in its file, [8, 4] in the manifest.
  ({ dir: badDir, file: badFile, field: badField } = writeLyingHeaderCopy(pair.nativeDir, join(tempDir('bad'), 'native'), LAST, PER_PASS));
});
afterAll(removeTempDirs);

describe('a bundle opened from its manifest, its headers checked later', () => {
  it('is usable at once; a bad header in the last pass fails the opening, every read and every wait, naming the file and field', async () => {
    const { bundle, opened } = await openersHere.bundleLater(badDir);
    try {
      expect(bundle.passes).toHaveLength(PASSES);
      expect(bundle.boundary(0, 'layer000.op0')?.shape).toEqual([4, 8]);
      const failure = await rejectionOf(opened, BundleError);
      expect(failure.code).toBe('E_SHAPE_MISMATCH');
      expect(failure.file).toBe(badFile);
      expect(failure.message).toContain(badField);
      // A read of an intact pass fails with it too: nothing is read from a bundle that failed to open.
      await expect(bundle.readBoundary(0, 'layer000.op0')).rejects.toBe(failure);
      // Pass 0's file verifies, yet waiting for it fails with the header's error, and so does `done`.
      const verification = alsoAwaiting(verifyInPassOrder(bundle), opened);
      await expect(verification.whenVerified([0])).rejects.toBe(failure);
      await expect(verification.done).rejects.toBe(failure);
    } finally {
      await bundle.close();
    }
  });

  it('an intact bundle reads as the opened bundle does once its headers are checked', async () => {
    const { bundle, opened } = await openersHere.bundleLater(pair.nativeDir);
    try {
      const verification = alsoAwaiting(verifyInPassOrder(bundle), opened);
      await verification.whenVerified([LAST]);
      await verification.done;
      const data = await bundle.readBoundary(LAST, 'layer000.op9');
      expect(data.shape).toEqual([4, 8]);
      expect(data.data.byteLength).toBe(128);
    } finally {
      await bundle.close();
    }
  });

  it('openRun of the run fails naming the file and field and leaves no run or rows', async () => {
    const t = openSession('opened-later');
    try {
      await t.call('openBundle', { dir: pair.referenceDir });
      const failure = await failureOf(t.call('openRun', { dir: badDir }));
      expect(failure.code).toBe('E_BUNDLE');
      expect(failure.message).toContain(badFile);
      expect(failure.message).toContain(badField);
      const after = await t.call('getSession', {});
      expect(after.rowCount).toBe(0);
      expect(after.run.status).toBe('idle');
    } finally {
      await t.session.close();
    }
  });
});

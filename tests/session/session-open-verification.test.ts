// Opening a captured run verifies its files pass by pass while the passes already verified are
// judged (verify-in-pass-order.ts, run-controller.ts openRun): fail-closed. A file of a LATER pass
// whose digest does not match its manifest fails the open with E_DIGEST naming the file and the
// field, the rows judged from the earlier passes are withdrawn, and no snapshot ever presented
// them as a verified result. The planted error is a wrong files[].sha256 in the manifest (the
// file's bytes and every tensor digest are intact): only the file-level verification sees it.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { verifyInPassOrder, type PassOrderVerification } from '../../main/core/bundle/verify-in-pass-order.ts';
import { JudgePool, type JudgedSlice } from '../../main/session/judge-pool.ts';
import { catalogueFromReference, judgePasses } from '../../main/session/session-judge.ts';
import type { SessionSnapshot } from '../../protocol/inspector-api.ts';
import { writeTablePair, type BundlePair } from '../helpers/synthetic-run.ts';
import { failureOf, openSession, removeTempDirs, tempDir } from './session-fixtures.ts';

const PASSES = 4;
const PER_PASS = 20;
const BAD_PASS = PASSES - 1;

let pair: BundlePair;
/** The native run with a wrong files[].sha256 for the last pass's file. */
let badDir: string;
let badField: string;
let badFile: string;
const pool = new JudgePool({ workers: 1 });

beforeAll(() => {
  pair = writeTablePair(tempDir('open-verification'), 'verifying', PASSES, PER_PASS);
  badDir = join(tempDir('open-verification-bad'), 'native');
  cpSync(pair.nativeDir, badDir, { recursive: true });
  const manifestPath = join(badDir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { files: { path: string; sha256: string }[]; passes: { file: string }[] };
  const passFile = manifest.passes[BAD_PASS]?.file;
  const f = manifest.files.findIndex((file) => file.path === passFile);
  const entry = manifest.files[f];
  if (entry === undefined || passFile === undefined) throw new Error('the synthetic run has no file for its last pass');
  entry.sha256 = entry.sha256.replace(/^./, (c) => (c === '0' ? '1' : '0'));
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  badField = `files[${f}].sha256`;
  badFile = join(badDir, passFile);
});
afterAll(async () => {
  await pool.close();
  removeTempDirs();
});

describe('opening a run verifies it pass by pass, fail-closed', () => {
  it('judges the passes verified before a later file fails, then fails with E_DIGEST naming that file and field', async () => {
    const reference = await openBundle(pair.referenceDir);
    const native = await openBundle(badDir, { verify: 'none' });
    try {
      const verification = verifyInPassOrder(native);
      let firstDelivered: () => void = () => undefined;
      const delivered = new Promise<void>((resolve) => {
        firstDelivered = resolve;
      });
      // The bad pass's slice waits until the first pass's rows are handed over: rows exist
      // before the failure, whatever the threads' timing. (A small slice is judged before its
      // files are verified and handed over once they are: both waits are held.)
      const held: PassOrderVerification = {
        ...verification,
        done: delivered.then(() => verification.done),
        whenVerified: async (passes) => {
          if (passes.includes(BAD_PASS)) await delivered;
          return verification.whenVerified(passes);
        },
        whenFilesVerified: async (passes) => {
          if (passes.includes(BAD_PASS)) await delivered;
          return verification.whenFilesVerified(passes);
        },
      };
      const slices: JudgedSlice[] = [];
      const failure = await judgePasses(
        pool,
        {
          caseId: 'verifying',
          reference,
          oracle: null,
          description: catalogueFromReference(reference),
          ledger: [],
          contracts: {},
          referenceContracts: null,
          oracleContracts: null,
        },
        { bundle: native, kind: 'bundle', verification: held },
        native.passes.map((pass) => pass.index),
        null,
        null,
        [],
        (slice) => {
          slices.push(slice);
          firstDelivered();
        },
      ).then(
        () => null,
        (error: unknown) => error,
      );
      expect(slices.length).toBeGreaterThan(0);
      expect(slices[0]?.passes).toEqual([0]);
      // Nothing of the bad pass was ever handed over.
      expect(slices.flatMap((slice) => slice.verdicts).some((verdict) => verdict.pass === BAD_PASS)).toBe(false);
      expect(failure).toBeInstanceOf(BundleError);
      expect((failure as BundleError).code).toBe('E_DIGEST');
      expect((failure as BundleError).file).toBe(badFile);
      expect((failure as BundleError).message).toContain(badField);
    } finally {
      await Promise.all([reference.close(), native.close()]);
    }
  });

  it('openRun fails naming the file and field, withdraws every row, and never presented the rows as verified', async () => {
    const t = openSession('open-verification');
    try {
      await t.call('openBundle', { dir: pair.referenceDir });
      const during: SessionSnapshot[] = [];
      const unsubscribe = t.session.subscribe((event) => {
        if (event.type === 'snapshot') during.push(event.snapshot);
      });
      const failure = await failureOf(t.call('openRun', { dir: badDir }));
      unsubscribe();
      expect(failure.code).toBe('E_BUNDLE');
      // The reader's E_DIGEST, as the app shows a bundle's errors: the file, the field, the digests.
      expect(failure.message).toContain(`${badFile}: ${badField}: manifest.json lists sha256`);
      expect(failure.message).toContain('the file hashes to');
      // Whatever was shown while the files were verified was never a finished, verified result...
      for (const snapshot of during.filter((shown) => shown.rowCount > 0)) {
        expect(snapshot.run.status).toBe('running');
        expect(snapshot.run.message).toMatch(/verifying and judging .*: \d+ of \d+ passes judged, \d+ of \d+ files verified/);
      }
      // ...and is withdrawn: no run, no rows.
      const after = await t.call('getSession', {});
      expect(after.rowCount).toBe(0);
      expect(after.run.status).toBe('idle');
      // The intact run opens, judged and verified, in the same session.
      const good = await t.call('openRun', { dir: pair.nativeDir });
      expect(good.rowCount).toBe(PASSES * PER_PASS);
      expect(good.run.status).toBe('completed');
      expect(good.run.message).toContain('every file verified');
    } finally {
      await t.session.close();
    }
  });
});

// The first rows of an opened run come after the longer of its first pass's verification and its
// judging, not their sum: a small slice whose files are not verified yet is judged at once on a
// worker (its tensors hashed as they are read there) while its files are verified, and its
// verdicts are handed over only once they are (judge-pool.ts `verified`, session-judge.ts). What
// must hold whatever the threads' timing: no slice is handed over before its files are verified,
// slices are handed over in pass order (a later slice verified first waits), and a verification
// that fails fails the job with its own error with nothing handed over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import type { PassOrderVerification } from '../../main/core/bundle/verify-in-pass-order.ts';
import { JudgePool, type JudgeRequest } from '../../main/session/judge-pool.ts';
import { bundleRef, catalogueFromReference, judgePasses, type JudgeContext } from '../../main/session/session-judge.ts';
import { writeTablePair } from '../helpers/synthetic-run.ts';
import { removeTempDirs, tempDir } from './session-fixtures.ts';

const PASSES = 3;
const PER_PASS = 20;

let reference: TraceBundle;
let native: TraceBundle;
const pool = new JudgePool({ workers: 1 });

beforeAll(async () => {
  const pair = writeTablePair(tempDir('slice-gate'), 'slice-gate', PASSES, PER_PASS);
  [reference, native] = await Promise.all([openBundle(pair.referenceDir), openBundle(pair.nativeDir, { verify: 'none' })]);
});
afterAll(async () => {
  await Promise.all([reference?.close(), native?.close(), pool.close()]);
  removeTempDirs();
});

const job = (): JudgeRequest['job'] => ({
  caseId: 'slice-gate',
  reference: bundleRef(reference),
  oracle: null,
  native: bundleRef(native),
  description: catalogueFromReference(reference),
  ledger: [],
  stop: null,
  nativeUnreadable: null,
  views: { reference: null, oracle: null, map: null },
});
const oneSlicePerPass = Array.from({ length: PASSES }, (_, pass) => ({ passes: [pass], range: null, completes: true }));

describe('a slice judged before its files are verified', () => {
  it('is handed over only once they are, and a later slice verified first waits for it', async () => {
    const delivered: number[] = [];
    let release: () => void = () => undefined;
    const firstVerified = new Promise<void>((resolve) => {
      release = resolve;
    });
    // When each later slice's verdicts reach the pool (its gate is asked), how many slices were handed over.
    const handedOverWhenLaterJudged: number[] = [];
    await pool.judge({
      job: job(),
      slices: oneSlicePerPass,
      onSlice: (slice) => delivered.push(...slice.passes),
      audioRows: () => null,
      ready: async () => [],
      verified: (slice) => {
        if (slice.passes[0] === 0) return firstVerified;
        handedOverWhenLaterJudged.push(delivered.length);
        if (slice.passes[0] === PASSES - 1) release();
        return Promise.resolve();
      },
    });
    // The worker judged every later slice while the first one's files were still unverified: none was handed over.
    expect(handedOverWhenLaterJudged).toEqual([0, 0]);
    expect(delivered).toEqual([0, 1, 2]);
  });

  it('whose verification fails fails the job with that error, and nothing is handed over', async () => {
    const failure = new BundleError('E_DIGEST', '/run/pass-000.safetensors', 'files[1].sha256', 'the file hashes to something else');
    const delivered: number[] = [];
    const error = await pool
      .judge({
        job: job(),
        slices: oneSlicePerPass,
        onSlice: (slice) => delivered.push(...slice.passes),
        audioRows: () => null,
        ready: async () => [],
        verified: (slice) => (slice.passes[0] === 0 ? Promise.reject(failure) : Promise.resolve()),
      })
      .then(
        () => null,
        (reason: unknown) => reason,
      );
    expect(error).toBe(failure);
    expect(delivered).toEqual([]);
  });

  it('judgePasses judges a small first slice without waiting for its files, and hands it over only once they are verified', async () => {
    let release: () => void = () => undefined;
    const passZero = new Promise<void>((resolve) => {
      release = resolve;
    });
    let sent = false;
    let released = false;
    const asked: ('before its slice was sent' | 'after its slice was sent')[] = [];
    // Never hangs: the verification of pass 0 is released once the pool asks for it after the slice
    // went to the worker (its verdicts are in) or, failing that, after a while (only orders are asserted).
    const fallback = setTimeout(() => {
      released = true;
      release();
    }, 3000);
    const verification: PassOrderVerification = {
      whenVerified: () => Promise.reject(new Error('a small slice waits for its files only after it was judged (whenFilesVerified)')),
      whenFilesVerified: (passes) => {
        if (!passes.includes(0)) return Promise.resolve();
        asked.push(sent ? 'after its slice was sent' : 'before its slice was sent');
        if (sent)
          setImmediate(() => {
            released = true;
            release();
          });
        return passZero;
      },
      isVerified: () => false,
      done: passZero,
      verified: 0,
      total: PASSES + 1,
      stop: () => undefined,
    };
    const watched = Object.create(pool) as JudgePool;
    watched.judge = (request) =>
      pool.judge({
        ...request,
        ready: async (slice) => {
          const pins = (await request.ready?.(slice)) ?? [];
          if (slice.passes.includes(0)) sent = true;
          return pins;
        },
      });
    const context: JudgeContext = {
      caseId: 'slice-gate',
      reference,
      oracle: null,
      description: catalogueFromReference(reference),
      ledger: [],
      contracts: {},
      referenceContracts: null,
      oracleContracts: null,
    };
    const delivered: { pass: number; verified: boolean }[] = [];
    const passes = native.passes.map((pass) => pass.index);
    try {
      const judged = await judgePasses(watched, context, { bundle: native, kind: 'bundle', verification }, passes, null, null, [], (slice) =>
        delivered.push(...slice.passes.map((pass) => ({ pass, verified: released }))),
      );
      // Sent to the worker without waiting; its verdicts waited for the verification, asked for once they were in.
      expect(asked).toEqual(['after its slice was sent']);
      expect(delivered).toEqual(passes.map((pass) => ({ pass, verified: true })));
      expect(judged.byPass.get(0)).toHaveLength(PER_PASS);
    } finally {
      clearTimeout(fallback);
    }
  });
});

// The app judges pass by pass, yet a contract's audio bounds also hold over the whole PCM stream.
// On a case whose records each stay inside their bounds while the stream breaks them (a delay
// that changes between passes), judging pass 1 after pass 0 must fail the stream on pass 1's row
// exactly as the gate does for the whole run; judging pass 1 alone must not see it.
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { JudgePool } from '../../main/session/judge-pool.ts';
import { judgePasses, type JudgeContext } from '../../main/session/session-judge.ts';
import { PCM_DESCRIPTION, writeDriftingDelayCase } from '../gate/audio-fixtures.ts';
import { removeTempDirs, tempDir } from '../gate/gate-fixtures.ts';

const pool = new JudgePool({ workers: 1 });
afterAll(async () => {
  await pool.close();
  removeTempDirs();
});

describe('audio streams judged step by step', () => {
  it('fails the stream on the newest pass from the passes judged so far, as the gate does for the whole run', async () => {
    const { referenceDir, nativeDir } = writeDriftingDelayCase(tempDir('session-audio-stream'));
    const [reference, native] = await Promise.all([openBundle(referenceDir), openBundle(nativeDir)]);
    try {
      const context = (): JudgeContext => ({
        caseId: 'pcm',
        reference,
        oracle: null,
        description: PCM_DESCRIPTION,
        ledger: [],
        contracts: {},
        referenceContracts: null,
        oracleContracts: null,
      });

      const side = { bundle: native, kind: 'bundle' as const };
      const first = (await judgePasses(pool, context(), side, [0], null)).byPass.get(0) ?? [];
      expect(first.map((row) => row.verdict)).toEqual(['PASS']);

      // Pass 1 on its own: its record nulls at offset 2, so nothing is wrong with it alone.
      const alone = (await judgePasses(pool, context(), side, [1], null)).byPass.get(1) ?? [];
      expect(alone.map((row) => row.verdict)).toEqual(['PASS']);

      // Pass 1 after pass 0: the stream over 0-1 has no single offset that nulls it.
      const stepped = (await judgePasses(pool, context(), side, [1], null, null, first)).byPass.get(1) ?? [];
      expect(stepped[0]).toMatchObject({ verdict: 'FAIL', kind: 'audio', pass: 1, boundary: 'detok.pcm' });
      expect(stepped[0]?.reason).toMatch(/^audio stream of detok\.pcm over passes 0-1 /);

      // The same rows the gate gives the finished run.
      const whole = await judgeCase({
        caseId: 'pcm',
        reference,
        native,
        oracle: null,
        description: PCM_DESCRIPTION,
        ledger: [],
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      const byStep = [...first, ...stepped];
      expect(byStep.map((row) => [row.pass, row.verdict, row.kind, row.reason])).toEqual(
        whole.verdicts.map((row) => [row.pass, row.verdict, row.kind, row.reason]),
      );
    } finally {
      await Promise.all([reference.close(), native.close()]);
    }
  });
});

// The pass split and the judgement of one range (pass-split.ts, pass-range-judge.ts,
// pass-merge.ts) without an engine: ranges are contiguous, non-empty and byte-balanced; the
// plan digest covers the split; and a stream whose records each pass while the stream breaks its
// bound is still caught when its passes are judged by different shards, whichever shard holds the
// row the failure lands on.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { judgeCase, type CaseJudgeInput } from '../../main/core/gate/case-verdicts.ts';
import { shardPlanDigest, type PlanFacts } from '../../main/core/gate/gate-shard.ts';
import type { CaseResult } from '../../main/core/gate/gate-types.ts';
import { mergeCaseRanges } from '../../main/core/gate/pass-merge.ts';
import { judgeCaseRange } from '../../main/core/gate/pass-range-judge.ts';
import { passCoverageProblems, planPassRanges, splitPasses } from '../../main/core/gate/pass-split.ts';
import { writeBundle } from '../helpers/bundle-builder.ts';
import { FRAME, PCM_DESCRIPTION, pcmPasses, speechLike, STREAM_CONTRACT, writeDriftingDelayCase } from './audio-fixtures.ts';
import { bitExact, dummyWeights, removeTempDirs, tempDir } from './gate-fixtures.ts';

afterAll(removeTempDirs);

describe('splitPasses', () => {
  it('cuts contiguous non-empty ranges where the running bytes come nearest each share', () => {
    // A long prefill is worth many decode passes.
    expect(splitPasses([1000, 10, 10, 10, 10, 10, 10, 10, 10, 10], 2)).toEqual([
      [0, 1],
      [1, 10],
    ]);
    expect(splitPasses([10, 10, 10, 10, 10, 10], 3)).toEqual([
      [0, 2],
      [2, 4],
      [4, 6],
    ]);
    // Every range keeps a pass, however lopsided the bytes.
    expect(splitPasses([0, 0, 1_000_000], 3)).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
  });

  it('plans every case in id order, range j to shard j + 1, and refuses a shard that would judge nothing', () => {
    expect(
      planPassRanges(
        [
          { id: 'b', passBytes: [1, 1, 1] },
          { id: 'a', passBytes: [1] },
        ],
        2,
      ),
    ).toEqual([
      { case: 'a', shard: 1, from: 0, to: 1 },
      { case: 'b', shard: 1, from: 0, to: 2 },
      { case: 'b', shard: 2, from: 2, to: 3 },
    ]);
    expect(() => planPassRanges([{ id: 'a', passBytes: [1, 1] }], 3)).toThrow('shard(s) 3 would judge nothing');
  });

  it('names missing and overlapping passes per case', () => {
    const counts = new Map([['c', 10]]);
    expect(
      passCoverageProblems(counts, [
        { case: 'c', from: 0, to: 4, by: 'shard 1/3' },
        { case: 'c', from: 6, to: 10, by: 'shard 3/3' },
        { case: 'c', from: 8, to: 10, by: 'shard 2/2' },
      ]),
    ).toEqual(['missing range: case c: passes 4-5 judged by no shard given', 'overlapping ranges: case c: passes 8-9 judged by shard 3/3 and shard 2/2']);
  });
});

describe('the plan digest', () => {
  it('covers the split: the same run split otherwise, or by cases, is another plan', () => {
    const facts: PlanFacts = {
      cases: [{ id: 'c', referenceManifestSha256: 'a'.repeat(64), oracleManifestSha256: null, weightsSha256: null }],
      engineSha256: 'b'.repeat(64),
      engineOptions: {},
      strict: false,
      teacherForce: false,
      isolate: false,
      ledgerSha256: null,
      count: 2,
    };
    const split = (to: number): PlanFacts => ({
      ...facts,
      passRanges: [
        { case: 'c', shard: 1, from: 0, to },
        { case: 'c', shard: 2, from: to, to: 10 },
      ],
    });
    expect(shardPlanDigest(split(4))).not.toBe(shardPlanDigest(split(5)));
    expect(shardPlanDigest(split(4))).not.toBe(shardPlanDigest(facts));
    expect(shardPlanDigest(split(4))).toBe(shardPlanDigest(split(4)));
  });
});

/** The case judged whole, and as ranges merged, from the same bundles. */
async function wholeAndRanges(
  referenceDir: string,
  nativeDir: string,
  ranges: readonly [number, number][],
): Promise<{ whole: CaseResult; merged: CaseResult }> {
  const [reference, native]: TraceBundle[] = await Promise.all([openBundle(referenceDir), openBundle(nativeDir)]);
  try {
    const input: CaseJudgeInput = {
      caseId: 'pcm',
      reference: reference as TraceBundle,
      native: native as TraceBundle,
      oracle: null,
      description: PCM_DESCRIPTION,
      ledger: [],
      stop: null,
      nativeUnreadable: null,
      contracts: {},
    };
    const asCase = (judged: Awaited<ReturnType<typeof judgeCase>>, passRange?: { from: number; to: number }): CaseResult =>
      ({
        id: 'pcm',
        run: {
          outcome: { status: 'completed', message: '', last_pass: null, last_boundary: null },
          passesExpected: 0,
          passesCompleted: 0,
          signal: null,
          summary: '',
        },
        verdicts: judged.verdicts,
        counts: judged.counts,
        compared: judged.compared,
        firstDivergence: null,
        unreadable: judged.unreadable,
        gaps: [],
        audio: judged.audio,
        teacherForcing: null,
        ...(passRange !== undefined ? { passRange } : {}),
      }) as unknown as CaseResult;
    const whole = asCase(await judgeCase(input));
    const count = reference?.passes.length ?? 0;
    const parts: CaseResult[] = [];
    for (const [from, to] of ranges) parts.push(asCase(await judgeCaseRange(input, { from, to, last: to >= count }), { from, to }));
    return { whole, merged: mergeCaseRanges(parts) };
  } finally {
    await Promise.all([reference?.close(), native?.close()]);
  }
}

const strip = (item: CaseResult): unknown => item.verdicts.map(({ durationMs: _duration, ...row }) => row);

describe('audio streams judged by pass ranges', () => {
  it('a delay that drifts between passes, split at the drift: the last range catches the stream (every record passes on its own)', async () => {
    const { referenceDir, nativeDir } = writeDriftingDelayCase(tempDir('range-stream'));
    const { whole, merged } = await wholeAndRanges(referenceDir, nativeDir, [
      [0, 1],
      [1, 2],
    ]);
    expect(whole.verdicts.map((row) => `${row.pass} ${row.verdict} ${row.kind}`)).toEqual(['0 PASS null', '1 FAIL audio']);
    expect(strip(merged)).toEqual(strip(whole));
    expect(merged.audio).toEqual(whole.audio);
    expect(merged.counts).toEqual(whole.counts);
  });

  it('a stream that ends before the last range: merge puts its failure on the row of the earlier range', async () => {
    // Passes 0-1 bound the audio (0 exact, 1 delayed); pass 2 is bit-exact PCM with no audio bounds.
    const root = tempDir('range-stream-merge');
    const weights = dummyWeights(root);
    const signal = speechLike(3 * FRAME);
    const frames = [0, 1, 2].map((k) => signal.slice(k * FRAME, (k + 1) * FRAME));
    const delayed = new Float32Array(FRAME);
    delayed.set((frames[1] as Float32Array).subarray(0, FRAME - 2), 2);
    const referencePasses = pcmPasses(frames, STREAM_CONTRACT);
    const last = referencePasses[2]?.boundaries[0];
    if (last !== undefined) last.contract = bitExact;
    const common = { caseId: 'pcm', weightsFile: weights.file, weightsSha256: weights.sha256, inputs: [] };
    const referenceDir = writeBundle(join(root, 'reference'), { ...common, kind: 'reference', passes: referencePasses });
    const nativeDir = writeBundle(join(root, 'native'), {
      ...common,
      kind: 'native',
      passes: pcmPasses([frames[0], delayed, frames[2]] as Float32Array[], null),
    });
    const { whole, merged } = await wholeAndRanges(referenceDir, nativeDir, [
      [0, 2],
      [2, 3],
    ]);
    expect(whole.audio[0]).toMatchObject({ passRange: '0-1', passed: false, verdictPass: 1 });
    expect(whole.verdicts.map((row) => `${row.pass} ${row.verdict} ${row.kind}`)).toEqual(['0 PASS null', '1 FAIL audio', '2 PASS null']);
    expect(strip(merged)).toEqual(strip(whole));
    expect(merged.counts).toEqual(whole.counts);
    expect(merged.firstDivergence).toBe(1);
  });
});

describe('mergeCaseRanges', () => {
  it('a range whose run did not complete decides how the case ran, even when a later range completed (fail closed)', () => {
    const run = (status: 'completed' | 'crashed', summary: string): CaseResult['run'] => ({
      outcome: { status, message: summary, last_pass: 1, last_boundary: null },
      passesExpected: 3,
      passesCompleted: status === 'completed' ? 3 : 1,
      signal: null,
      summary,
    });
    const part = (from: number, to: number, status: 'completed' | 'crashed'): CaseResult =>
      ({
        id: 'c',
        run: run(status, status === 'crashed' ? 'the engine crashed in pass 1' : ''),
        verdicts: [],
        counts: { PASS: 0, FAIL: 0, GAP: 0, KNOWN_GAP: 0, REVIEW_REQUIRED: 0 },
        compared: 0,
        firstDivergence: null,
        unreadable: null,
        gaps: [],
        audio: [],
        teacherForcing: null,
        passRange: { from, to },
      }) as unknown as CaseResult;
    const merged = mergeCaseRanges([part(2, 3, 'completed'), part(1, 2, 'crashed'), part(0, 1, 'completed')]);
    expect(merged.run.outcome.status).toBe('crashed');
    expect(merged.run.summary).toBe('the engine crashed in pass 1');
    expect(merged.passRange).toBeUndefined();
  });
});

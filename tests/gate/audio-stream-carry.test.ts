// A live run's audio streams are judged after every step; the measurement of the passes judged
// before is carried to the next judgement (audio-stream-verdicts.ts StreamCarry) instead of
// reading and measuring every earlier record again. Carried, the judgements are exactly those of
// the stream measured afresh, and a carried measurement is used only for the records it was made
// of (the same passes, lengths and sha256 on both sides).
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { judgeAudioStreams, type StreamCarry, type StreamRow } from '../../main/core/gate/audio-stream-verdicts.ts';
import { writeBundle } from '../helpers/bundle-builder.ts';
import { FRAME, pcmPasses, speechLike, STREAM_CONTRACT } from './audio-fixtures.ts';
import { dummyWeights, removeTempDirs, tempDir } from './gate-fixtures.ts';

afterAll(() => removeTempDirs());

const PASSES = 5;

/** A reference of PASSES PCM passes and two natives: one drifts by a sample a pass from pass 2 on, the other also has a quieter pass 0. */
function writeCase(root: string): { referenceDir: string; driftingDir: string; otherStartDir: string } {
  const weights = dummyWeights(root);
  const signal = speechLike(PASSES * FRAME);
  const reference = Array.from({ length: PASSES }, (_, p) => signal.slice(p * FRAME, (p + 1) * FRAME));
  const drifting = reference.map((frame, p) => {
    const delay = Math.max(0, p - 1);
    const out = new Float32Array(FRAME);
    out.set(frame.subarray(0, FRAME - delay), delay);
    return out;
  });
  const otherStart = drifting.map((frame, p) => (p === 0 ? Float32Array.from(frame, (value) => value * 0.9) : frame));
  const common = { caseId: 'pcm', weightsFile: weights.file, weightsSha256: weights.sha256, inputs: [] };
  return {
    referenceDir: writeBundle(join(root, 'reference'), { ...common, kind: 'reference', passes: pcmPasses(reference, STREAM_CONTRACT) }),
    driftingDir: writeBundle(join(root, 'drifting'), { ...common, kind: 'native', passes: pcmPasses(drifting, null) }),
    otherStartDir: writeBundle(join(root, 'other-start'), { ...common, kind: 'native', passes: pcmPasses(otherStart, null) }),
  };
}

/** The stream rows of passes [0, upTo]: each a PASS row that compared a native record. */
const rowsUpTo = (upTo: number): StreamRow[] =>
  Array.from({ length: upTo + 1 }, (_, pass) => ({ pass, boundary: 'detok.pcm', inNative: true, verdict: 'PASS', kind: null, reference: {} }));

/** `bundle` with its boundary reads counted. */
function counted(bundle: TraceBundle): { bundle: TraceBundle; reads: () => number } {
  let reads = 0;
  const wrapped = new Proxy(bundle, {
    get(target, property, receiver) {
      if (property === 'readBoundary') {
        return (pass: number, name: string) => {
          reads++;
          return target.readBoundary(pass, name);
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { bundle: wrapped, reads: () => reads };
}

describe('audio streams judged with the measurement carried from the judgement before', () => {
  it('equal the streams measured afresh at every step, each step reading only its new record', async () => {
    const { referenceDir, driftingDir } = writeCase(tempDir('stream-carry'));
    const [reference, raw] = await Promise.all([openBundle(referenceDir), openBundle(driftingDir)]);
    const native = counted(raw);
    try {
      const carry: StreamCarry = new Map();
      for (let pass = 0; pass < PASSES; pass++) {
        const before = native.reads();
        const carried = await judgeAudioStreams(reference, native.bundle, rowsUpTo(pass), carry);
        expect(native.reads() - before, `native records read for pass ${pass}`).toBe(1);
        expect(carried).toEqual(await judgeAudioStreams(reference, raw, rowsUpTo(pass)));
      }
      // The drift breaks the stream's single offset once it reaches 3 samples.
      expect((await judgeAudioStreams(reference, raw, rowsUpTo(PASSES - 1)))[0]?.passed).toBe(false);
    } finally {
      await Promise.all([reference.close(), raw.close()]);
    }
  });

  it('is measured afresh when an earlier record is not the one the carried measurement was made of', async () => {
    const { referenceDir, driftingDir, otherStartDir } = writeCase(tempDir('stream-carry-other'));
    const [reference, drifting, otherStart] = await Promise.all([openBundle(referenceDir), openBundle(driftingDir), openBundle(otherStartDir)]);
    try {
      const carry: StreamCarry = new Map();
      await judgeAudioStreams(reference, drifting, rowsUpTo(1), carry);
      // Another run whose pass 0 differs (its sha256): the carried passes 0-1 are not its own.
      const afterOther = await judgeAudioStreams(reference, otherStart, rowsUpTo(2), carry);
      const fresh = await judgeAudioStreams(reference, otherStart, rowsUpTo(2));
      expect(afterOther).toEqual(fresh);
      expect(fresh).not.toEqual(await judgeAudioStreams(reference, drifting, rowsUpTo(2)));
      // A stream left out (no rows) is not carried either: judged again from pass 0.
      expect(await judgeAudioStreams(reference, drifting, [], carry)).toEqual([]);
      expect(carry.size).toBe(0);
    } finally {
      await Promise.all([reference.close(), drifting.close(), otherStart.close()]);
    }
  });
});

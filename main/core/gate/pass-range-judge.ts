// Judges one pass range of a case (a shard of `--gate --shard K/N --shard-by passes`,
// pass-split.ts). The rows of the range's passes are judged as the unsharded gate judges them:
// rows of different passes never depend on each other, so the ranges' rows, concatenated in
// order, are the case's rows. What belongs to the whole case is judged by the range that ends it:
//   - the pass-level findings past the reference's passes and the native run's pass count
//     (pass-structure.ts); the findings of a pass go with the range holding it;
//   - the audio streams (audio-stream-verdicts.ts): the last range's native bundle also holds the
//     records of the audio-bounded boundaries of every earlier pass, whose rows it judges again
//     (for the stream only: they are reported by the range that owns them), so each stream is
//     measured over every pass of the case, exactly as unsharded. A broken stream bound lands on
//     the row of the stream's last pass: here when that pass is in this range, else by `merge`
//     (gate-merge.ts), which applies it to the merged rows.
import { applyAudioStream, judgeAudioStreams } from './audio-stream-verdicts.ts';
import { judgeCase, type CaseJudgeInput, type CaseJudgement } from './case-verdicts.ts';
import type { AudioStreamJudgement, BoundaryVerdict } from './gate-types.ts';
import { audioBoundedNames, type CasePassRange } from './pass-split.ts';

const passesIn = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/** Whether the stream judgement `judgement` is put on a row by the range `range` (else merge puts it). */
export function rangeAppliesStream(range: { from: number; to: number }, judgement: AudioStreamJudgement): boolean {
  return judgement.verdictPass >= range.from && judgement.verdictPass < range.to;
}

export async function judgeCaseRange(input: CaseJudgeInput, range: CasePassRange): Promise<CaseJudgement> {
  const judged = await judgeCase({
    ...input,
    passes: passesIn(range.from, range.to),
    audioStreams: false,
    reportsFindingAt: (pass) => (pass >= range.from && pass < range.to) || (range.last && pass >= range.to),
    judgeNativeCount: range.last && input.stop === null,
  });
  const { native, reference } = input;
  if (!range.last || native === null || input.nativeUnreadable !== null || input.audioStreams === false) return judged;
  const names = audioBoundedNames(reference.manifest);
  if (names.length === 0) return judged;
  let earlier: BoundaryVerdict[] = [];
  if (range.from > 0) {
    // The stream's records of earlier passes, judged again only to know which of them make up the
    // stream (compared, not a known gap, readable), as the unsharded gate decides it.
    const { onCompared: _progress, ...rest } = input;
    const again = await judgeCase({
      ...rest,
      passes: passesIn(0, range.from),
      boundaries: new Set(names),
      audioStreams: false,
      reportsFindingAt: () => false,
      judgeNativeCount: false,
      contracts: {},
    });
    earlier = again.verdicts;
  }
  const audio = await judgeAudioStreams(reference, native, [...earlier, ...judged.verdicts]);
  for (const judgement of audio) if (rangeAppliesStream(range, judgement)) applyAudioStream(judged.verdicts, judged.counts, judgement);
  return { ...judged, audio };
}

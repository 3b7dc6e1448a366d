// `merge` of the shards of `--gate --shard K/N --shard-by passes` (pass-split.ts): the ranges of
// one case, each judged by its shard, become the case as the unsharded gate judges it. Rows are
// concatenated in pass order (a range's rows are exactly the rows of its passes); the stream
// judgements of the range that ends the case (pass-range-judge.ts) that it could not put on a row
// of its own are put on the merged rows; counts, the first divergence and the case's gaps are
// recomputed from the final rows, as gate-case.ts computes them.
import { applyAudioStream } from './audio-stream-verdicts.ts';
import { emptyCounts, type CaseResult, type GapRecord } from './gate-types.ts';
import { rangeAppliesStream } from './pass-range-judge.ts';
import { gapIds } from './verdicts.ts';

/** The result of one case from the results of its ranges (covering it exactly once: passCoverageProblems). */
export function mergeCaseRanges(parts: readonly CaseResult[]): CaseResult {
  const ordered = [...parts].sort((a, b) => (a.passRange?.from ?? 0) - (b.passRange?.from ?? 0));
  const last = ordered.at(-1) as CaseResult;
  const verdicts = ordered.flatMap((part) => part.verdicts.map((row) => ({ ...row })));
  const scratch = emptyCounts();
  for (const judgement of last.audio) {
    if (last.passRange === undefined || !rangeAppliesStream(last.passRange, judgement)) applyAudioStream(verdicts, scratch, judgement);
  }
  const counts = emptyCounts();
  for (const row of verdicts) counts[row.verdict] += 1;
  // The case's gaps as gate-case.ts lists them: the missing oracle first, then each row's gap once.
  const gaps: GapRecord[] = last.gaps.filter((gap) => gap.id === gapIds.oracleAbsent(last.id));
  const seen = new Set(gaps.map((gap) => gap.id));
  for (const row of verdicts) {
    if (row.gapId === null || seen.has(row.gapId)) continue;
    seen.add(row.gapId);
    gaps.push({ id: row.gapId, case: row.gapId.startsWith('not_in_catalogue:') ? null : last.id, reason: row.reason });
  }
  const firstDivergence = verdicts.findIndex((row) => row.verdict === 'FAIL' || row.verdict === 'REVIEW_REQUIRED');
  // A range whose run did not complete decides how the case's run ended (the earliest such range).
  const stopped = ordered.find((part) => part.run.outcome.status !== 'completed');
  const forced = ordered.map((part) => part.teacherForcing).filter((summary) => summary !== null);
  const lastForced = last.teacherForcing;
  const { passRange: _range, ...rest } = last;
  return {
    ...rest,
    run: (stopped ?? last).run,
    verdicts,
    counts,
    compared: ordered.reduce((sum, part) => sum + part.compared, 0),
    firstDivergence: firstDivergence === -1 ? null : firstDivergence,
    unreadable: ordered.find((part) => part.unreadable !== null)?.unreadable ?? null,
    gaps,
    // Every range's run injected from pass 0; its differences are those of its own passes.
    teacherForcing:
      lastForced === null
        ? null
        : {
            ...lastForced,
            differences: forced.flatMap((summary) => summary.differences),
            differingPasses: [...new Set(forced.flatMap((summary) => summary.differingPasses))].sort((a, b) => a - b),
          },
  };
}

// `trace-inspector merge`: combines the results of the shards of one gate run (`--gate --shard
// K/N --json <file>`, gate-shard.ts) into one result, one set of seals and one receipt. Fail
// closed: the set of shards must be exactly 1..N of one plan. A shard missing, given twice, or
// from another run (another plan: other cases, references, engine, options or N; or a shard
// whose cases are not the ones its index gets) makes the merge a FAIL naming each problem, and
// nothing is signed. Each shard result is read through a zod schema; the merged result pins the
// sha256 of every shard result it was made from. Shards of `--shard-by passes` (pass-split.ts)
// must moreover judge every pass of every case exactly once (passShardProblems), and each case is
// merged from its ranges (pass-merge.ts).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ShardInfoSchema, shardAssignment } from './gate-shard.ts';
import { passRanges } from './audio-stream-verdicts.ts';
import { mergeCaseRanges } from './pass-merge.ts';
import { passCoverageProblems, type JudgedRange } from './pass-split.ts';
import { computeSeals } from './seals.ts';
import { emptyCounts, VERDICTS, type CaseResult, type DivergenceRef, type GapRecord, type GateResult } from './gate-types.ts';
import { AUDIO_BOUND_NAMES, type Contract } from '../bundle/manifest-schema.ts';
import { InputError } from '../io/input-error.ts';

/** A shard result file is refused above this size before it is parsed. */
const MAX_SHARD_RESULT_BYTES = 1024 * 1024 * 1024;

const CountsSchema = z.strictObject(
  Object.fromEntries(VERDICTS.map((verdict) => [verdict, z.number().int().nonnegative()])) as Record<(typeof VERDICTS)[number], z.ZodNumber>,
);
/** Statistics may be NaN or infinite (written as strings, read back by restoreNonFinite). */
const AnyNumber = z.custom<number>((value) => typeof value === 'number', { error: 'expected a number' });
const SubjectSchema = z.looseObject({ subjectName: z.string().min(1), manifestSha256: z.string() });

// What merge computes with is checked field by field; the rest of each case (its verdict rows
// and summaries) is carried over as the shard wrote it, and must at least be objects.
const ShardResultSchema = z.looseObject({
  schema: z.literal('trace-inspector.gate-result'),
  schema_version: z.literal(1),
  tool: z.looseObject({ name: z.string(), version: z.string(), commit: z.string(), dirty: z.boolean() }),
  startedAt: z.string(),
  finishedAt: z.string(),
  strict: z.boolean(),
  options: z.looseObject({ engineOptions: z.record(z.string(), z.string()) }),
  engine: z.looseObject({ sha256: z.string(), subjectName: z.string() }),
  ledger: z.array(z.looseObject({ id: z.string() })),
  warnings: z.array(z.string()),
  cases: z.array(
    z.looseObject({
      id: z.string(),
      reference: SubjectSchema,
      oracle: SubjectSchema.nullable(),
      weights: z.looseObject({ subjectName: z.string(), sha256: z.string() }),
      run: z.looseObject({ outcome: z.looseObject({ status: z.enum(['completed', 'engine_error', 'crashed', 'timeout', 'aborted']) }) }),
      verdicts: z.array(z.looseObject({ verdict: z.enum(VERDICTS), case: z.string(), pass: z.number(), boundary: z.string() })),
      counts: CountsSchema,
      compared: z.number().int().nonnegative(),
      firstDivergence: z.number().int().nonnegative().nullable(),
      unreadable: z.string().nullable(),
      gaps: z.array(z.looseObject({ id: z.string() })),
      // A pass shard's range, and the stream judgements merge may put on the merged rows (pass-merge.ts).
      passRange: z.strictObject({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() }).optional(),
      audio: z.array(
        z.looseObject({
          boundary: z.string(),
          passRange: z.string(),
          samples: z.number(),
          passed: z.boolean(),
          verdictPass: z.number().int().nonnegative(),
          violations: z.array(z.looseObject({ bound: z.enum(AUDIO_BOUND_NAMES), value: AnyNumber, limit: AnyNumber })),
        }),
      ),
    }),
  ),
  contracts: z.record(z.string(), z.looseObject({ kind: z.string() })),
  gaps: z.array(z.looseObject({ id: z.string(), case: z.string().nullable(), reason: z.string() })),
  shard: ShardInfoSchema.optional(),
});

export interface LoadedShard {
  readonly file: string;
  readonly sha256: string;
  readonly result: GateResult;
  readonly shard: z.infer<typeof ShardInfoSchema>;
}

function restoreNonFinite(_key: string, value: unknown): unknown {
  if (value === 'NaN') return Number.NaN;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
  return value;
}

export async function loadShardResult(file: string): Promise<LoadedShard> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new InputError(`${file}: cannot be read (${(error as Error).message})`);
  }
  if (bytes.byteLength > MAX_SHARD_RESULT_BYTES) throw new InputError(`${file}: larger than ${MAX_SHARD_RESULT_BYTES} bytes; not a gate result`);
  let raw: unknown;
  try {
    // The JSON report writes NaN and the infinities as strings (json-report.ts): read them back.
    raw = JSON.parse(bytes.toString('utf8'), restoreNonFinite);
  } catch (error) {
    throw new InputError(`${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = ShardResultSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(
      `${file}: not a gate result (--gate --json): ${issue === undefined ? 'invalid' : `${issue.path.join('.') || '(root)'}: ${issue.message}`}`,
    );
  }
  if (parsed.data.shard === undefined)
    throw new InputError(`${file}: a gate result of an unsharded run (no "shard"); merge combines the results of --gate --shard K/N`);
  return { file, sha256: createHash('sha256').update(bytes).digest('hex'), result: parsed.data as unknown as GateResult, shard: parsed.data.shard };
}

/** Why the shards do not make one complete run, one line each (empty: they do). */
export function shardSetProblems(shards: readonly LoadedShard[]): string[] {
  const problems: string[] = [];
  if (shards.length === 0) return ['no shard results given'];
  // The plan most shards share is the run's; every other is foreign.
  const votes = new Map<string, number>();
  for (const item of shards) votes.set(`${item.shard.plan}/${item.shard.count}`, (votes.get(`${item.shard.plan}/${item.shard.count}`) ?? 0) + 1);
  const [runPlan] = [...votes.entries()].sort((a, b) => b[1] - a[1])[0] as [string, number];
  const [plan, countText] = runPlan.split('/') as [string, string];
  const count = Number(countText);
  const members = shards.filter((item) => item.shard.plan === plan && item.shard.count === count);
  const runSplit = splitText(members[0] as LoadedShard);
  for (const item of shards) {
    if (!members.includes(item)) {
      const split = splitText(item);
      problems.push(
        `foreign shard ${item.file}: shard ${item.shard.index}/${item.shard.count} of plan ${item.shard.plan.slice(0, 12)}, not of this run's plan ${plan.slice(0, 12)} ` +
          (split !== runSplit ? `(another split: ${split}; this run's: ${runSplit})` : '(other cases, references, engine, options or shard count)'),
      );
    }
  }
  const first = members[0] as LoadedShard;
  if (first.shard.by === 'passes') {
    problems.push(...passShardProblems(shards, members, count));
  }
  for (const item of members) {
    if (first.shard.by === 'passes') continue;
    const expected = shardAssignment(item.shard.cases, { index: item.shard.index, count: item.shard.count }).assigned;
    const ran = item.result.cases.map((entry) => entry.id);
    if (
      item.shard.cases.join('\0') !== first.shard.cases.join('\0') ||
      expected.join('\0') !== item.shard.assigned.join('\0') ||
      ran.join('\0') !== expected.join('\0')
    ) {
      problems.push(
        `foreign shard ${item.file}: its cases [${ran.join(', ')}] are not the ones shard ${item.shard.index}/${count} of this plan runs [${expected.join(', ')}]`,
      );
    }
    if (item.result.tool.commit !== first.result.tool.commit || item.result.tool.version !== first.result.tool.version) {
      problems.push(
        `foreign shard ${item.file}: made by trace-inspector ${item.result.tool.version} (${item.result.tool.commit}), the others by ${first.result.tool.version} (${first.result.tool.commit})`,
      );
    }
  }
  const byIndex = new Map<number, LoadedShard[]>();
  for (const item of members) byIndex.set(item.shard.index, [...(byIndex.get(item.shard.index) ?? []), item]);
  for (let index = 1; index <= count; index++) {
    const given = byIndex.get(index) ?? [];
    if (given.length === 0) problems.push(`missing shard ${index}/${count}: no result given for it`);
    if (given.length > 1) problems.push(`duplicated shard ${index}/${count}: given ${given.length} times (${given.map((item) => item.file).join(', ')})`);
  }
  return problems;
}

/** How a shard shares out the run, for a problem line ("cases over 3 shards", "passes over 3 shards: case greedy passes 0-6 | 7-8 | 9-10"). */
function splitText(item: LoadedShard): string {
  if (item.shard.by !== 'passes') return `cases over ${item.shard.count} shards`;
  const byCase = new Map<string, string[]>();
  for (const range of item.shard.ranges ?? []) byCase.set(range.case, [...(byCase.get(range.case) ?? []), `${range.from}-${range.to - 1}`]);
  return `passes over ${item.shard.count} shards: ${[...byCase].map(([id, ranges]) => `case ${id} passes ${ranges.join(' | ')}`).join(', ')}`;
}

const shardLabel = (item: LoadedShard): string => `shard ${item.shard.index}/${item.shard.count} (${item.file})`;

/**
 * The pass-sharded run's own checks: each member holds exactly the ranges the plan gives its
 * index, its rows lie inside them, and, over every shard given, each pass of each case was judged
 * exactly once (a pass no member judged is missing; one judged by two shards, members or not,
 * overlaps), each problem naming the case and the passes.
 */
function passShardProblems(shards: readonly LoadedShard[], members: readonly LoadedShard[], count: number): string[] {
  const problems: string[] = [];
  const first = members[0] as LoadedShard;
  const ranges = first.shard.ranges ?? [];
  const passCounts = new Map<string, number>();
  for (const range of ranges) passCounts.set(range.case, Math.max(passCounts.get(range.case) ?? 0, range.to));
  const held = (item: LoadedShard): JudgedRange[] =>
    item.result.cases.map((entry) => ({
      case: entry.id,
      from: entry.passRange?.from ?? 0,
      to: entry.passRange?.to ?? passCounts.get(entry.id) ?? 0,
      by: shardLabel(item),
    }));
  for (const item of members) {
    const expected = ranges.filter((range) => range.shard === item.shard.index).map((range) => `${range.case} ${range.from}-${range.to}`);
    const ran = item.result.cases.map(
      (entry) => `${entry.id} ${entry.passRange === undefined ? 'every pass' : `${entry.passRange.from}-${entry.passRange.to}`}`,
    );
    if (JSON.stringify(item.shard.ranges) !== JSON.stringify(ranges) || ran.join('\0') !== expected.join('\0')) {
      problems.push(
        `foreign shard ${item.file}: its ranges [${ran.join(', ')}] are not the ones shard ${item.shard.index}/${count} of this plan judges [${expected.join(', ')}]`,
      );
    }
    for (const entry of item.result.cases) {
      const range = entry.passRange;
      if (range === undefined) continue;
      const last = range.to >= (passCounts.get(entry.id) ?? 0);
      // Pass-level findings past the reference's passes go with the range that ends the case.
      const outside = entry.verdicts.filter((row) => row.pass < range.from || (row.pass >= range.to && !last));
      if (outside.length > 0) {
        problems.push(
          `${shardLabel(item)}: case ${entry.id} holds rows of passes ${passRanges([...new Set(outside.map((row) => row.pass))])} outside its range ${range.from}-${range.to - 1}`,
        );
      }
    }
  }
  const missing = passCoverageProblems(passCounts, members.flatMap(held)).filter((problem) => problem.startsWith('missing range'));
  const overlapping = passCoverageProblems(passCounts, shards.filter((item) => item.shard.by === 'passes').flatMap(held)).filter((problem) =>
    problem.startsWith('overlapping ranges'),
  );
  return [...problems, ...missing, ...overlapping];
}

/** The merged result of a complete shard set (shardSetProblems empty), cases in plan order. */
export function mergeShardResults(shards: readonly LoadedShard[]): GateResult {
  const ordered = [...shards].sort((a, b) => a.shard.index - b.shard.index);
  const first = ordered[0] as LoadedShard;
  if (first.shard.by === 'passes') return mergePassShards(ordered);
  const byCase = new Map<string, CaseResult>();
  for (const item of ordered) for (const entry of item.result.cases) byCase.set(entry.id, entry);
  const cases = first.shard.cases.map((id) => byCase.get(id) as CaseResult);
  const contracts: Record<string, Contract> = {};
  const gaps: GapRecord[] = [];
  const seenGaps = new Set<string>();
  const warnings: string[] = [];
  const byCaseGaps = new Map<string, GapRecord[]>();
  for (const item of ordered) {
    Object.assign(contracts, item.result.contracts);
    for (const warning of item.result.warnings) if (!warnings.includes(warning)) warnings.push(warning);
    for (const gap of item.result.gaps) byCaseGaps.set(gap.case ?? `\0${gap.id}`, [...(byCaseGaps.get(gap.case ?? `\0${gap.id}`) ?? []), gap]);
  }
  // Gaps in plan order: each case's, then those of no case, each id once.
  const addGap = (gap: GapRecord): void => {
    if (seenGaps.has(gap.id)) return;
    seenGaps.add(gap.id);
    gaps.push(gap);
  };
  for (const id of first.shard.cases) for (const gap of byCaseGaps.get(id) ?? []) addGap(gap);
  for (const [key, list] of byCaseGaps) if (key.startsWith('\0')) list.forEach(addGap);
  return sealMerged(ordered, cases, contracts, gaps, warnings);
}

/** A pass-sharded run: each case merged from its ranges (pass-merge.ts), gaps in case order as runGate lists them. */
function mergePassShards(ordered: readonly LoadedShard[]): GateResult {
  const first = ordered[0] as LoadedShard;
  const byCase = new Map<string, CaseResult[]>();
  const contracts: Record<string, Contract> = {};
  const warnings: string[] = [];
  for (const item of ordered) {
    Object.assign(contracts, item.result.contracts);
    for (const warning of item.result.warnings) if (!warnings.includes(warning)) warnings.push(warning);
    for (const entry of item.result.cases) byCase.set(entry.id, [...(byCase.get(entry.id) ?? []), entry]);
  }
  const cases = first.shard.cases.filter((id) => byCase.has(id)).map((id) => mergeCaseRanges(byCase.get(id) as CaseResult[]));
  const gaps: GapRecord[] = [];
  const seen = new Set<string>();
  for (const item of cases) {
    for (const gap of item.gaps) {
      if (seen.has(gap.id)) continue;
      seen.add(gap.id);
      gaps.push(gap);
    }
  }
  return sealMerged(ordered, cases, contracts, gaps, warnings);
}

function sealMerged(
  ordered: readonly LoadedShard[],
  cases: CaseResult[],
  contracts: Record<string, Contract>,
  gaps: GapRecord[],
  warnings: string[],
): GateResult {
  const first = ordered[0] as LoadedShard;
  const counts = emptyCounts();
  let compared = 0;
  let firstDivergence: DivergenceRef | null = null;
  for (const item of cases) {
    for (const verdict of VERDICTS) counts[verdict] += item.counts[verdict];
    compared += item.compared;
    if (firstDivergence === null && item.firstDivergence !== null) firstDivergence = { case: item.id, index: item.firstDivergence };
  }
  const seals = computeSeals({
    compared,
    counts,
    runStatuses: cases.map((item) => item.run.outcome.status),
    emptyCases: cases.filter((item) => item.compared === 0).map((item) => item.id),
    unreadable: cases.some((item) => item.unreadable !== null),
    gapIds: gaps.map((gap) => gap.id),
    strict: first.result.strict,
  });
  const times = ordered.map((item) => item.result);
  const { shard: _dropped, ...base } = first.result;
  return {
    ...base,
    startedAt: times.map((result) => result.startedAt).sort()[0] as string,
    finishedAt: times
      .map((result) => result.finishedAt)
      .sort()
      .at(-1) as string,
    warnings,
    cases,
    contracts,
    gaps,
    counts,
    compared,
    firstDivergence,
    seals,
    mergedFrom: ordered.map((item) => ({ file: item.file, sha256: item.sha256, shard: item.shard.index })),
  };
}

// `--gate --shard K/N --shard-by passes` and `merge` of its shards (pass-split.ts,
// pass-range-judge.ts, pass-merge.ts): the reference engine on the committed tail case (9 passes)
// split three ways judges exactly the rows of the unsharded gate, each shard capturing only its
// own passes; a perturbation that first shows in shard 2's passes is found there and is the merged
// first divergence; a missing range, overlapping ranges and a shard of another split are each a
// FAIL naming the case and the passes; a stream's audio bounds are still judged over every pass.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { loadShardResult, mergeShardResults, shardSetProblems } from '../../main/core/gate/gate-merge.ts';
import { runGate } from '../../main/core/gate/gate-run.ts';
import { formatAnnotations } from '../../main/core/report/github-actions.ts';
import type { BoundaryVerdict, GateResult } from '../../main/core/gate/gate-types.ts';
import { serializeGateResult } from '../../main/core/report/json-report.ts';
import { writeNewFileAtomically } from '../../main/core/report/new-file.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import { oracleBundle, REFERENCE_ENGINE, referenceBundle } from '../helpers/paths.ts';
import { boundedSpeechCopy } from './audio-fixtures.ts';
import {
  gateOptions,
  type GateCliRun,
  keyFiles,
  recordingIO,
  removeTempDirs,
  SEGV_ENGINE,
  setF32,
  tempDir,
  TOY_ENGINE,
  writeToyCase,
} from './gate-fixtures.ts';

beforeAll(requireBuiltHost);
afterAll(removeTempDirs);

let root = '';
let keys: { privateKeyPath: string; publicKeyPath: string };
let runs = 0;
const TAIL = referenceBundle('tail');

async function gate(extra: readonly string[]): Promise<GateCliRun> {
  const io = recordingIO(root);
  const work = join(root, `work-${++runs}`);
  const json = join(root, `result-${runs}.json`);
  const args = ['--gate', '--engine', REFERENCE_ENGINE, '--bundle', TAIL, '--work', work, '--key', keys.privateKeyPath, '--json', json];
  const code = await runCli([...args, ...extra], io);
  return { code, out: io.out.join(''), err: io.err.join(''), json, receipt: join(work, 'receipt.dsse.json') };
}

async function merge(given: readonly GateCliRun[], extra: readonly string[] = [], env: Record<string, string> = {}): Promise<GateCliRun> {
  const io = recordingIO(root, env);
  const receipt = join(root, `merged-${++runs}.dsse.json`);
  const json = join(root, `merged-${runs}.json`);
  const files = given.flatMap((run) => [run.json, run.receipt]);
  const code = await runCli(['merge', ...files, '--receipt', receipt, '--json', json, '--key', keys.privateKeyPath, ...extra], io);
  return { code, out: io.out.join(''), err: io.err.join(''), json, receipt };
}

const read = (file: string): GateResult => JSON.parse(readFileSync(file, 'utf8')) as GateResult;
/** Every field of every row but its duration, as JSON. */
const rowsOf = (result: GateResult): string[] =>
  result.cases.flatMap((item) =>
    item.verdicts.map((row) => {
      const { durationMs: _duration, ...rest } = row;
      // Key order aside (merge reads rows through a schema).
      return JSON.stringify(rest, (_key, value: unknown) =>
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
          : value,
      );
    }),
  );
/** The rows of `a` and `b` from the first that differs (a short diff when they do). */
function expectSameRows(a: GateResult, b: GateResult): void {
  const [left, right] = [rowsOf(a), rowsOf(b)];
  const at = left.findIndex((row, i) => row !== right[i]);
  expect(at === -1 ? null : { at, left: left[at], right: right[at] }).toBeNull();
  expect(left.length).toBe(right.length);
}
/** The first divergence's row, its duration aside. */
function divergence(result: GateResult): Omit<BoundaryVerdict, 'durationMs'> | undefined {
  const row =
    result.firstDivergence === null ? undefined : result.cases.find((item) => item.id === result.firstDivergence?.case)?.verdicts[result.firstDivergence.index];
  if (row === undefined) return undefined;
  const { durationMs: _duration, ...rest } = row;
  return rest;
}
const pass = (k: number): string[] => ['--shard', `${k}/3`, '--shard-by', 'passes'];

type GateOptions = Parameters<typeof runGate>[0];

/**
 * The gate over `over`'s cases in `dir`, run whole and as the three pass shards, each shard's
 * result written and loaded back as `merge` reads it.
 */
async function wholeAndThreeShards(
  dir: string,
  over: Omit<Parameters<typeof gateOptions>[0], 'workDir'>,
): Promise<{ unsharded: GateResult; loaded: Awaited<ReturnType<typeof loadShardResult>>[] }> {
  const options = (work: string, shard?: number): GateOptions =>
    gateOptions({ ...over, workDir: join(dir, work), ...(shard !== undefined ? { shard: { index: shard, count: 3, by: 'passes' } } : {}) });
  const unsharded = await runGate(options('whole'));
  const files: string[] = [];
  for (const k of [1, 2, 3]) {
    const file = join(dir, `shard-${k}.json`);
    await writeNewFileAtomically(file, serializeGateResult(await runGate(options(`shard-${k}`, k))));
    files.push(file);
  }
  return { unsharded, loaded: await Promise.all(files.map((file) => loadShardResult(file))) };
}

/** A result as its JSON file holds it (what merge compares). */
const asWritten = (result: GateResult): GateResult => JSON.parse(serializeGateResult(result)) as GateResult;

let whole: GateCliRun;
const shards: GateCliRun[] = [];
let twoWay: GateCliRun;

beforeAll(async () => {
  root = tempDir('pass-shard');
  keys = keyFiles(root);
  whole = await gate([]);
  for (const k of [1, 2, 3]) shards.push(await gate(pass(k)));
  twoWay = await gate(['--shard', '2/2', '--shard-by', 'passes']);
}, 180_000);

describe('--gate --shard K/N --shard-by passes', () => {
  it('each shard judges one contiguous range of the passes, and its engine captures only that range', async () => {
    const results = shards.map((run) => read(run.json));
    expect(shards.map((run) => run.code)).toEqual([0, 0, 0]);
    const ranges = results[0]?.shard?.ranges ?? [];
    expect(results.every((result) => result.shard?.plan === results[0]?.shard?.plan && result.shard?.by === 'passes')).toBe(true);
    // Contiguous, in shard order, covering the case's 9 passes.
    expect(ranges.map((range) => range.shard)).toEqual([1, 2, 3]);
    expect(ranges[0]?.from).toBe(0);
    expect(ranges[2]?.to).toBe(9);
    expect(ranges[1]?.from).toBe(ranges[0]?.to);
    expect(ranges[2]?.from).toBe(ranges[1]?.to);
    for (const [k, result] of results.entries()) {
      const range = ranges[k] as { from: number; to: number };
      const item = result.cases[0];
      expect(item?.passRange).toEqual({ from: range.from, to: range.to });
      expect(new Set(item?.verdicts.map((row) => row.pass))).toEqual(new Set(Array.from({ length: range.to - range.from }, (_, i) => range.from + i)));
      // The engine ran from pass 0 through the range (decode state), but the passes before it
      // hold no record: the host dropped them (the tail case bounds no audio, so nothing is kept).
      const native = await openBundle(item?.nativeDir as string);
      try {
        expect(native.passes.map((entry) => entry.index)).toEqual(Array.from({ length: range.to }, (_, i) => i));
        expect(native.passes.filter((entry) => entry.index < range.from).every((entry) => entry.boundaries.length === 0)).toBe(true);
        expect(native.passes.filter((entry) => entry.index >= range.from).every((entry) => entry.boundaries.length > 0)).toBe(true);
      } finally {
        await native.close();
      }
    }
  });

  it('merge gives the unsharded verdict rows (every field but durations), counts, gaps, seals and first divergence, with one signed receipt', async () => {
    const merged = await merge([shards[2], shards[0], shards[1]] as GateCliRun[]);
    expect(merged.code).toBe(0);
    const result = read(merged.json);
    const reference = read(whole.json);
    expectSameRows(result, reference);
    expect(rowsOf(result)).toHaveLength(1522);
    for (const field of ['counts', 'compared', 'gaps', 'contracts', 'firstDivergence'] as const) expect(result[field]).toEqual(reference[field]);
    expect(result.seals.lines).toEqual(reference.seals.lines);
    expect(result.cases[0]?.run).toEqual(reference.cases[0]?.run);
    expect(result.cases[0]?.passRange).toBeUndefined();
    expect(result.mergedFrom?.map((item) => item.shard)).toEqual([1, 2, 3]);
    expect(await runCli(['verify', merged.receipt, '--pubkey', keys.publicKeyPath], recordingIO(root))).toBe(0);
  });

  it('a missing range is a FAIL naming the case and the passes; nothing is signed', async () => {
    const merged = await merge([shards[0], shards[2]] as GateCliRun[]);
    const range = read(shards[1]?.json as string).cases[0]?.passRange as { from: number; to: number };
    expect(merged.code).toBe(1);
    expect(merged.out).toContain('SHARD: missing shard 2/3');
    expect(merged.out).toContain(`SHARD: missing range: case tail: passes ${range.from}-${range.to - 1} judged by no shard given`);
    expect(merged.out).toContain('OVERALL: FAIL reason=shard_set');
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard of another split is foreign, and the passes it judged again are an overlap naming both shards', async () => {
    const merged = await merge([...shards, twoWay]);
    expect(merged.code).toBe(1);
    expect(merged.out).toMatch(
      new RegExp(
        `SHARD: foreign shard ${twoWay.json}: shard 2/2 of plan \\w+, not of this run's plan \\w+ \\(another split: passes over 2 shards: case tail passes `,
      ),
    );
    const other = read(twoWay.json).cases[0]?.passRange as { from: number; to: number };
    const third = read(shards[2]?.json as string).cases[0]?.passRange as { from: number; to: number };
    // The two-way split's second half ends the case, as shard 3/3 does: their last passes overlap.
    expect(other.to).toBe(9);
    const from = Math.max(other.from, third.from);
    expect(merged.out).toContain(
      `SHARD: overlapping ranges: case tail: passes ${from}-8 judged by shard 3/3 (${shards[2]?.json}) and shard 2/2 (${twoWay.json})`,
    );
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard holding rows outside its range, or another range than its index gets, is named (before any receipt is read)', async () => {
    const loaded = await Promise.all(shards.map((run) => loadShardResult(run.json)));
    const second = loaded[1]?.result.cases[0];
    const range = second?.passRange as { from: number; to: number };
    // A row of the next pass slipped into shard 2's result.
    second?.verdicts.push({ ...(second.verdicts.at(-1) as BoundaryVerdict), pass: range.to });
    expect(shardSetProblems(loaded)).toEqual([
      `shard 2/3 (${shards[1]?.json}): case tail holds rows of passes ${range.to} outside its range ${range.from}-${range.to - 1}`,
    ]);
    // Shard 3's result claiming shard 2's range.
    const fresh = await Promise.all(shards.map((run) => loadShardResult(run.json)));
    const third = fresh[2]?.result.cases[0];
    if (third !== undefined) third.passRange = { ...range };
    expect(shardSetProblems(fresh)).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`foreign shard ${shards[2]?.json}: its ranges [tail ${range.from}-${range.to}] are not the ones shard 3/3 of this plan judges`),
        expect.stringMatching(new RegExp(`^missing range: case tail: passes ${range.to}-8 judged by no shard given$`)),
        expect.stringMatching(new RegExp(`^overlapping ranges: case tail: passes ${range.from}-${range.to - 1} judged by shard 2/3 .* and shard 3/3 `)),
      ]),
    );
  });

  it('refuses --shard-by without --shard, and more pass shards than the case has passes (exit 2, nothing run)', async () => {
    const alone = await gate(['--shard-by', 'passes']);
    expect(alone.code).toBe(2);
    expect(alone.err).toContain('--shard-by passes needs --shard K/N');
    const tooMany = await gate(['--shard', '10/10', '--shard-by', 'passes']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.err).toContain('the longest case has 9 pass(es), so shard(s) 10 would judge nothing');
  });
});

describe('a perturbation in the passes of shard 2', () => {
  it('is found by shard 2 and is the merged first divergence, as unsharded', async () => {
    // perturb.depth_kv_not_reset (engine/perturbations.json): the depth decoder's KV cache is not
    // reset between frames, so it first shows in the second frame's depth.cb0.l0.out (pass 1).
    const option = ['--option', 'perturb.depth_kv_not_reset=1'];
    const unsharded = await gate(option);
    const parts: GateCliRun[] = [];
    for (const k of [1, 2, 3]) parts.push(await gate([...option, ...pass(k)]));
    const expected = divergence(read(unsharded.json));
    expect(expected).toMatchObject({ pass: 1, boundary: 'depth.cb0.l0.out', verdict: 'FAIL', kind: 'value' });
    const [first, second] = parts.map((run) => read(run.json));
    const range = second?.cases[0]?.passRange as { from: number; to: number };
    expect(range.from).toBeLessThanOrEqual(1);
    expect(range.to).toBeGreaterThan(1);
    expect(first?.counts.FAIL).toBe(0);
    expect(divergence(second as GateResult)).toEqual(expected);
    const junit = join(root, 'perturbed.junit.xml');
    const merged = await merge(parts, ['--junit', junit], { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: root });
    expect(merged.code).toBe(1);
    const result = read(merged.json);
    // One run in every report: the JUnit suite counts the unsharded failures, the first
    // annotation is the first divergence.
    const unshardedResult = read(unsharded.json);
    expect(readFileSync(junit, 'utf8')).toMatch(
      new RegExp(
        `<testsuite name="tail" tests="${rowsOf(unshardedResult).length}" failures="${unshardedResult.counts.FAIL + unshardedResult.counts.REVIEW_REQUIRED}"`,
      ),
    );
    const annotations = merged.out.split('\n').filter((line) => line.startsWith('::'));
    expect(annotations[0]).toContain('title=FAIL pass 1 / depth.cb0.l0.out (case tail)');
    expect(annotations).toEqual(formatAnnotations(unshardedResult, { workspace: root }));
    expect(divergence(result)).toEqual(expected);
    expect(result.firstDivergence).toEqual(read(unsharded.json).firstDivergence);
    expectSameRows(result, read(unsharded.json));
    expect(result.seals.lines).toEqual(read(unsharded.json).seals.lines);
  }, 120_000);
});

describe('the evidence a pass shard verifies', () => {
  it('only its own passes: a damaged pass file outside its range is never read, the shard that owns it refuses it (exit 2)', async () => {
    const dir = tempDir('pass-shard-evidence');
    const layout = writeToyCase(dir, { passes: 6, oracle: true });
    // The last byte of pass 5's data, flipped: its file and tensor digests no longer hold.
    const damaged = join(layout.referenceDir, 'pass-005.safetensors');
    const bytes = readFileSync(damaged);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    writeFileSync(damaged, bytes);
    const shardGate = async (k: number): Promise<GateCliRun> => {
      const io = recordingIO(dir);
      const json = join(dir, `shard-${k}.json`);
      const args = ['--gate', '--engine', TOY_ENGINE, '--bundle', layout.referenceDir, '--work', join(dir, `work-${k}`), '--key', keys.privateKeyPath];
      const code = await runCli([...args, '--json', json, '--shard', `${k}/3`, '--shard-by', 'passes'], io);
      return { code, out: io.out.join(''), err: io.err.join(''), json, receipt: '' };
    };
    const first = await shardGate(1);
    expect(first.code, first.err).toBe(0);
    expect(read(first.json).cases[0]?.passRange?.to).toBeLessThanOrEqual(5);
    const last = await shardGate(3);
    expect(last.code).toBe(2);
    expect(last.err).toContain(`reference bundle ${layout.referenceDir} is not valid: `);
    expect(last.err).toContain('pass-005.safetensors');
  });
});

describe('pass-level checks across pass shards', () => {
  it('a pass-count disagreement past the last pass and a pass relabelled mid-case are each reported once, as unsharded', async () => {
    // The toy engine (fast): 6 passes; the reference says it has 8, and the oracle calls pass 2 an audio pass.
    const dir = tempDir('pass-shard-structure');
    const layout = writeToyCase(dir, {
      passes: 6,
      oracle: true,
      referencePassCount: 8,
      editOracle: (passes) => {
        const relabelled = passes[2];
        if (relabelled !== undefined) relabelled.mode = 'audio';
      },
    });
    const { unsharded, loaded } = await wholeAndThreeShards(dir, {
      library: TOY_ENGINE,
      cases: [{ referenceDir: layout.referenceDir, oracleDir: layout.oracleDir }],
    });
    const passRows = (result: GateResult): string[] =>
      result.cases.flatMap((item) => item.verdicts.filter((row) => row.boundary === '(pass)').map((row) => `${row.pass}: ${row.reason}`));
    expect(passRows(unsharded)).toEqual([
      expect.stringMatching(/^2: pass 2 is not the same pass on every side/),
      expect.stringMatching(/^6: pass counts disagree/),
    ]);
    expect(shardSetProblems(loaded)).toEqual([]);
    // The count finding goes with the range that ends the case; the relabelled pass with its own.
    expect(passRows(loaded[2]?.result as GateResult)).toEqual([expect.stringMatching(/^6: pass counts disagree/)]);
    const merged = mergeShardResults(loaded);
    expectSameRows(asWritten(merged), asWritten(unsharded));
    expect(merged.seals.lines).toEqual(unsharded.seals.lines);
    expect(merged.firstDivergence).toEqual(unsharded.firstDivergence);
  });
});

describe('several cases split by passes', () => {
  it('each case is split on its own (a 2-pass case over 2 of the 3 shards) and the merge equals the unsharded run', async () => {
    const dir = tempDir('pass-shard-cases');
    const long = writeToyCase(dir, { caseId: 'long', passes: 6, oracle: true });
    const short = writeToyCase(dir, { caseId: 'short', passes: 2, oracle: true, editReference: (passes) => setF32(passes, 1, 'toy.embed', 0, 0.25) });
    const { unsharded, loaded } = await wholeAndThreeShards(dir, {
      library: TOY_ENGINE,
      cases: [
        { referenceDir: short.referenceDir, oracleDir: short.oracleDir },
        { referenceDir: long.referenceDir, oracleDir: long.oracleDir },
      ],
    });
    expect(loaded.map((item) => item.result.cases.map((entry) => `${entry.id} ${entry.passRange?.from}-${entry.passRange?.to}`))).toEqual([
      ['long 0-1', 'short 0-1'],
      ['long 1-3', 'short 1-2'],
      ['long 3-6'],
    ]);
    expect(shardSetProblems(loaded)).toEqual([]);
    const merged = mergeShardResults(loaded);
    // The merged run lists its cases in plan order (by id), as the unsharded one does for ids given in that order.
    expect(merged.cases.map((item) => item.id)).toEqual(['long', 'short']);
    const byId = (result: GateResult): GateResult => ({ ...result, cases: [...result.cases].sort((a, b) => a.id.localeCompare(b.id)) });
    expectSameRows(asWritten(merged), byId(asWritten(unsharded)));
    expect(merged.counts).toEqual(unsharded.counts);
    expect(merged.seals.lines.slice(0, 2)).toEqual(unsharded.seals.lines.slice(0, 2));
    expect(divergence(merged)).toEqual(divergence(unsharded));
  });
});

describe('an engine crash across pass shards', () => {
  it('a crash in pass 1 fails the shard that owns it and every later one, and merges into the unsharded run (reason engine_crashed)', async () => {
    // The segv test engine dereferences NULL in decode pass 1; the toy case has 6 passes.
    const dir = tempDir('pass-shard-crash');
    const layout = writeToyCase(dir, { passes: 6, oracle: true });
    const { unsharded, loaded } = await wholeAndThreeShards(dir, {
      library: SEGV_ENGINE,
      cases: [{ referenceDir: layout.referenceDir, oracleDir: layout.oracleDir }],
    });
    expect(unsharded.seals.reason).toBe('engine_crashed');
    const ranges = loaded[0]?.shard.ranges ?? [];
    // Shard 1 ends before the crash; every shard whose range reaches pass 1 crashed there.
    expect(ranges[0]?.to).toBe(1);
    expect(loaded.map((item) => item.result.cases[0]?.run.outcome.status)).toEqual(['completed', 'crashed', 'crashed']);
    const merged = mergeShardResults(loaded);
    expectSameRows(asWritten(merged), asWritten(unsharded));
    expect(merged.cases[0]?.run.outcome).toEqual(unsharded.cases[0]?.run.outcome);
    expect(merged.cases[0]?.run.summary).toBe(unsharded.cases[0]?.run.summary);
    expect(merged.seals.lines).toEqual(unsharded.seals.lines);
  });
});

describe('audio streams across pass shards', () => {
  it('a broken stream bound is judged over every pass of the case, as unsharded, when the passes are split three ways', async () => {
    const dir = tempDir('pass-shard-audio');
    const referenceDir = await boundedSpeechCopy(dir, 'tail');
    const { unsharded, loaded } = await wholeAndThreeShards(dir, {
      library: REFERENCE_ENGINE,
      cases: [{ referenceDir, oracleDir: oracleBundle('tail') }],
      engineOptions: { 'perturb.skip_envelope_division': '1' },
    });
    const stream = unsharded.cases[0]?.audio[0];
    expect(stream).toMatchObject({ boundary: 'detok.pcm', passed: false });
    const ranges = loaded[0]?.shard.ranges ?? [];
    // The stream spans the shards: it starts before shard 3's range and ends in it.
    expect(stream?.passes[0]).toBeLessThan(ranges[2]?.from as number);
    expect(stream?.verdictPass).toBeGreaterThanOrEqual(ranges[2]?.from as number);
    // Shard 3 kept the PCM records of every earlier pass (and only them) to measure the stream.
    const last = loaded[2]?.result.cases[0];
    const native = await openBundle(last?.nativeDir as string);
    try {
      const earlier = native.passes.filter((entry) => entry.index < (ranges[2]?.from as number));
      expect(earlier.flatMap((entry) => entry.boundaries.map((boundary) => boundary.name)).every((name) => name === 'detok.pcm')).toBe(true);
      expect(earlier.some((entry) => entry.boundaries.length > 0)).toBe(true);
    } finally {
      await native.close();
    }
    expect(last?.audio).toEqual(unsharded.cases[0]?.audio);
    const merged = mergeShardResults(loaded);
    expect(merged.cases[0]?.audio).toEqual(unsharded.cases[0]?.audio);
    // The earlier passes' PCM rows shard 3 judged again for the stream are not counted twice.
    expect(merged.compared).toBe(unsharded.compared);
    expect(merged.counts).toEqual(unsharded.counts);
    expectSameRows(asWritten(merged), asWritten(unsharded));
    const row = merged.cases[0]?.verdicts.find((candidate) => candidate.pass === stream?.verdictPass && candidate.boundary === 'detok.pcm');
    expect(row?.reason).toContain(`; and the audio stream of detok.pcm over passes ${stream?.passRange}`);
    expect(merged.seals.lines).toEqual(unsharded.seals.lines);
  }, 120_000);
});

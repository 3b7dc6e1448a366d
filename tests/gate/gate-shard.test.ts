// `--gate --shard K/N` and `trace-inspector merge` (gate-shard.ts, gate-merge.ts): the shards of
// a run together judge exactly what the unsharded run judges, merge into the same verdicts and
// seals with one signed receipt, and a missing, duplicated or foreign shard is a FAIL naming it,
// with nothing signed.
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import type { GateResult } from '../../main/core/gate/gate-types.ts';
import { keyFiles, recordingIO, removeTempDirs, tempDir, TOY_ENGINE, writeToyCase } from './gate-fixtures.ts';
import type { PassSpec } from '../helpers/bundle-builder.ts';

afterAll(removeTempDirs);

interface Run {
  code: number;
  out: string;
  err: string;
  json: string;
}

let root = '';
let keys: { privateKeyPath: string; publicKeyPath: string };
const bundles: string[] = [];
let runs = 0;

async function gate(extra: readonly string[], json: string | null = join(root, `result-${++runs}.json`)): Promise<Run> {
  const io = recordingIO(root);
  const args = ['--gate', '--engine', TOY_ENGINE, ...bundles.flatMap((dir) => ['--bundle', dir]), '--work', join(root, `work-${++runs}`), '--key', keys.privateKeyPath];
  const code = await runCli([...args, ...(json === null ? [] : ['--json', json]), ...extra], io);
  return { code, out: io.out.join(''), err: io.err.join(''), json: json ?? '' };
}

async function merge(files: readonly string[]): Promise<Run & { receipt: string }> {
  const io = recordingIO(root);
  const receipt = join(root, `merged-${++runs}.dsse.json`);
  const json = join(root, `merged-${runs}.json`);
  const code = await runCli(['merge', ...files, '--receipt', receipt, '--json', json, '--key', keys.privateKeyPath], io);
  return { code, out: io.out.join(''), err: io.err.join(''), json, receipt };
}

const read = (file: string): GateResult => JSON.parse(readFileSync(file, 'utf8')) as GateResult;
const rowsOf = (result: GateResult): string[] => result.cases.flatMap((item) => item.verdicts.map((row) => `${row.case} ${row.pass} ${row.boundary} ${row.verdict}`));

let whole: Run;
let shard1: Run;
let shard2: Run;

beforeAll(async () => {
  root = tempDir('shard');
  keys = keyFiles(root);
  // Three cases; case "c" has one reference value changed, so the run fails there.
  for (const caseId of ['b', 'a', 'c']) {
    const editReference = (passes: PassSpec[]): void => {
      const data = passes[1]?.boundaries[0]?.data as Uint8Array;
      data[0] = (data[0] ?? 0) ^ 1;
    };
    const layout = writeToyCase(root, { caseId, oracle: true, ...(caseId === 'c' ? { editReference } : {}) });
    bundles.push(layout.referenceDir);
  }
  whole = await gate([]);
  shard1 = await gate(['--shard', '1/2']);
  shard2 = await gate(['--shard', '2/2']);
}, 120_000);

describe('--gate --shard K/N', () => {
  it('each shard runs its deterministic share of the cases (sorted by id, i mod N) and records the plan', () => {
    const first = read(shard1.json);
    const second = read(shard2.json);
    expect(first.cases.map((item) => item.id)).toEqual(['a', 'c']);
    expect(second.cases.map((item) => item.id)).toEqual(['b']);
    expect(first.shard).toMatchObject({ index: 1, count: 2, cases: ['a', 'b', 'c'], assigned: ['a', 'c'] });
    expect(second.shard?.plan).toBe(first.shard?.plan);
    expect(shard1.code).toBe(1); // case c fails in shard 1
    expect(shard2.code).toBe(0);
    expect(existsSync(join(root, 'work-2', 'receipt.dsse.json'))).toBe(true); // each shard signs its partial result
  });

  it('refuses a malformed shard, more shards than cases, and a shard without --json (exit 2, nothing run)', async () => {
    for (const [extra, message] of [
      [['--shard', '3/2'], 'K must be between 1 and N'],
      [['--shard', 'x'], 'expected K/N'],
      [['--shard', '1/4'], 'the run has 3 case(s), so at most 3 shard(s)'],
    ] as const) {
      const run = await gate(extra);
      expect(run.code).toBe(2);
      expect(run.err).toContain(message);
    }
    const noJson = await gate(['--shard', '1/2'], null);
    expect(noJson.code).toBe(2);
    expect(noJson.err).toContain('needs --json');
  });
});

describe('trace-inspector merge', () => {
  it('merges the shards into the verdicts and seals of the unsharded run, with one signed receipt naming its shards', async () => {
    const merged = await merge([shard2.json, shard1.json]);
    expect(merged.code).toBe(1);
    const result = read(merged.json);
    const reference = read(whole.json);
    expect(result.cases.map((item) => item.id)).toEqual(['a', 'b', 'c']);
    // The merged run lists its cases in plan order (by id); the unsharded one in the order given.
    expect(rowsOf(result)).toEqual(rowsOf(reference).sort((x, y) => (x.split(' ')[0] as string).localeCompare(y.split(' ')[0] as string)));
    expect(result.counts).toEqual(reference.counts);
    expect(result.seals.lines).toEqual(reference.seals.lines);
    expect(result.firstDivergence).toEqual(reference.firstDivergence);
    expect(result.mergedFrom?.map((item) => item.shard)).toEqual([1, 2]);
    expect(merged.out.trimEnd().split('\n').slice(-reference.seals.lines.length)).toEqual(reference.seals.lines);
    const io = recordingIO(root);
    expect(await runCli(['verify', merged.receipt, '--pubkey', keys.publicKeyPath], io)).toBe(0);
    const statement = JSON.parse(Buffer.from((JSON.parse(readFileSync(merged.receipt, 'utf8')) as { payload: string }).payload, 'base64').toString('utf8')) as {
      predicate: { mergedFrom: { file: string; shard: number }[]; seals: string[] };
    };
    expect(statement.predicate.mergedFrom.map((item) => item.file)).toEqual([shard1.json, shard2.json]);
    expect(statement.predicate.seals).toEqual(reference.seals.lines);
  });

  it('a missing shard is a FAIL naming it; nothing is signed', async () => {
    const merged = await merge([shard1.json]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain('SHARD: missing shard 2/2');
    expect(merged.out).toContain('OVERALL: FAIL reason=shard_set');
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard given twice is a FAIL naming both files', async () => {
    const copy = join(root, 'shard1-copy.json');
    copyFileSync(shard1.json, copy);
    const merged = await merge([shard1.json, copy, shard2.json]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(`SHARD: duplicated shard 1/2: given 2 times (${shard1.json}, ${copy})`);
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard of another run (another plan: here --strict) is a FAIL naming it as foreign, and its own index then counts as missing', async () => {
    const strict = await gate(['--shard', '2/2', '--strict']);
    const merged = await merge([shard1.json, strict.json]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(`SHARD: foreign shard ${strict.json}: shard 2/2 of plan`);
    expect(merged.out).toContain('SHARD: missing shard 2/2');
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('an unsharded result or a file that is not a gate result is bad input (exit 2)', async () => {
    const unsharded = await merge([whole.json]);
    expect(unsharded.code).toBe(2);
    expect(unsharded.err).toContain('a gate result of an unsharded run');
    const notJson = await merge([join(root, 'weights.bin')]);
    expect(notJson.code).toBe(2);
    expect(notJson.err).toContain('not JSON');
  });
});

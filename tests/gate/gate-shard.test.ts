// `--gate --shard K/N` and `trace-inspector merge` (gate-shard.ts, gate-merge.ts): the shards of
// a run together judge exactly what the unsharded run judges, merge into the same verdicts and
// seals with one signed receipt, and a missing, duplicated or foreign shard is a FAIL naming it,
// with nothing signed.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import type { GateResult } from '../../main/core/gate/gate-types.ts';
import { type GateCliRun, keyFiles, recordingIO, removeTempDirs, tempDir, TOY_ENGINE, writeToyCase } from './gate-fixtures.ts';
import type { PassSpec } from '../helpers/bundle-builder.ts';

afterAll(removeTempDirs);

let root = '';
let keys: { privateKeyPath: string; publicKeyPath: string };
const bundles: string[] = [];
let runs = 0;

async function gate(extra: readonly string[], json: string | null = join(root, `result-${++runs}.json`)): Promise<GateCliRun> {
  const io = recordingIO(root);
  const work = join(root, `work-${++runs}`);
  const args = ['--gate', '--engine', TOY_ENGINE, ...bundles.flatMap((dir) => ['--bundle', dir]), '--work', work, '--key', keys.privateKeyPath];
  const code = await runCli([...args, ...(json === null ? [] : ['--json', json]), ...extra], io);
  return { code, out: io.out.join(''), err: io.err.join(''), json: json ?? '', receipt: join(work, 'receipt.dsse.json') };
}

async function merge(
  files: readonly string[],
  extra: readonly string[] = ['--key', keys.privateKeyPath],
  env: Record<string, string> = {},
): Promise<GateCliRun> {
  const io = recordingIO(root, env);
  const receipt = join(root, `merged-${++runs}.dsse.json`);
  const json = join(root, `merged-${runs}.json`);
  const code = await runCli(['merge', ...files, '--receipt', receipt, '--json', json, ...extra], io);
  return { code, out: io.out.join(''), err: io.err.join(''), json, receipt };
}

/** A shard's result and its receipt, as merge is given them. */
const signed = (run: GateCliRun): string[] => [run.json, run.receipt];

const read = (file: string): GateResult => JSON.parse(readFileSync(file, 'utf8')) as GateResult;
const rowsOf = (result: GateResult): string[] =>
  result.cases.flatMap((item) => item.verdicts.map((row) => `${row.case} ${row.pass} ${row.boundary} ${row.verdict}`));

let whole: GateCliRun;
let shard1: GateCliRun;
let shard2: GateCliRun;

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
    const merged = await merge([...signed(shard2), ...signed(shard1)]);
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
    const merged = await merge(signed(shard1));
    expect(merged.code).toBe(1);
    expect(merged.out).toContain('SHARD: missing shard 2/2');
    expect(merged.out).toContain('OVERALL: FAIL reason=shard_set');
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard given twice is a FAIL naming both files', async () => {
    const copy = join(root, 'shard1-copy.json');
    copyFileSync(shard1.json, copy);
    const merged = await merge([...signed(shard1), copy, ...signed(shard2)]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(`SHARD: duplicated shard 1/2: given 2 times (${shard1.json}, ${copy})`);
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard of another run (another plan: here --strict) is a FAIL naming it as foreign, and its own index then counts as missing', async () => {
    const strict = await gate(['--shard', '2/2', '--strict']);
    const merged = await merge([...signed(shard1), ...signed(strict)]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(`SHARD: foreign shard ${strict.json}: shard 2/2 of plan`);
    expect(merged.out).toContain('SHARD: missing shard 2/2');
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard without its receipt is a FAIL naming it as unsigned; nothing is signed', async () => {
    const merged = await merge([...signed(shard1), shard2.json]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(`SHARD: unsigned shard 2/2 (${shard2.json}): no receipt of this shard was given`);
    expect(merged.out).toContain('OVERALL: FAIL reason=shard_set');
    expect(existsSync(merged.receipt)).toBe(false);
  });

  it('a shard receipt that does not verify with the key merge is given is a FAIL naming the shard', async () => {
    mkdirSync(join(root, 'other-key'), { recursive: true });
    const other = keyFiles(join(root, 'other-key'));
    const merged = await merge([...signed(shard1), ...signed(shard2)], ['--key', keys.privateKeyPath, '--pubkey', other.publicKeyPath]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(`SHARD: bad signature on shard 1/2 (${shard1.json}): its receipt ${shard1.receipt} does not verify`);
    expect(merged.out).toContain(`SHARD: bad signature on shard 2/2 (${shard2.json})`);
    expect(existsSync(merged.receipt)).toBe(false);
    // A signature byte changed: the same, with the right key.
    const forged = join(root, 'forged.dsse.json');
    const envelope = JSON.parse(readFileSync(shard2.receipt, 'utf8')) as { signatures: { sig: string }[] };
    const sig = Buffer.from(envelope.signatures[0]?.sig ?? '', 'base64');
    sig[0] = (sig[0] ?? 0) ^ 1;
    (envelope.signatures[0] as { sig: string }).sig = sig.toString('base64');
    writeFileSync(forged, `${JSON.stringify(envelope)}\n`);
    const tampered = await merge([...signed(shard1), shard2.json, forged]);
    expect(tampered.code).toBe(1);
    expect(tampered.out).toContain(`SHARD: bad signature on shard 2/2 (${shard2.json}): its receipt ${forged} does not verify`);
    expect(existsSync(tampered.receipt)).toBe(false);
    // No key given: the per-user default key, which did not sign these shards.
    const config = join(root, 'config-of-another-user');
    const byDefault = await merge([...signed(shard1), ...signed(shard2)], [], { TRACE_INSPECTOR_CONFIG_DIR: config });
    expect(byDefault.code).toBe(1);
    expect(byDefault.out).toContain(`SHARD: bad signature on shard 1/2 (${shard1.json})`);
    expect(existsSync(byDefault.receipt)).toBe(false);
  });

  it('a receipt that signs other evidence, or a result edited after it was signed, is a FAIL naming the shard', async () => {
    const result = JSON.parse(readFileSync(shard2.json, 'utf8')) as { cases: { reference: { manifestSha256: string }; verdicts: { verdict: string }[] }[] };
    const otherEvidence = join(root, 'shard2-other-evidence.json');
    (result.cases[0] as { reference: { manifestSha256: string } }).reference.manifestSha256 = '0'.repeat(64);
    writeFileSync(otherEvidence, JSON.stringify(result));
    const merged = await merge([...signed(shard1), otherEvidence, shard2.receipt]);
    expect(merged.code).toBe(1);
    expect(merged.out).toContain(
      `SHARD: shard 2/2 (${otherEvidence}): its receipt ${shard2.receipt} signs other evidence than the result judged (subjects differ:`,
    );
    expect(existsSync(merged.receipt)).toBe(false);

    const edited = JSON.parse(readFileSync(shard1.json, 'utf8')) as { cases: { verdicts: { verdict: string }[] }[] };
    // The one failing row of case c relabelled as passing.
    const failing = edited.cases.flatMap((item) => item.verdicts).find((row) => row.verdict !== 'PASS');
    expect(failing).toBeDefined();
    (failing as { verdict: string }).verdict = 'PASS';
    const editedFile = join(root, 'shard1-edited.json');
    writeFileSync(editedFile, JSON.stringify(edited));
    const relabelled = await merge([editedFile, shard1.receipt, ...signed(shard2)]);
    expect(relabelled.code).toBe(1);
    expect(relabelled.out).toContain(`SHARD: shard 1/2 (${editedFile}): its receipt ${shard1.receipt} signs another result`);
    expect(existsSync(relabelled.receipt)).toBe(false);
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

// Pass sharding (issue 14 item 5, docs/ci.md "Sharding the passes of one long case"): one case of
// the scale engine (a 1,024-token prefill and decode passes with KV-cache records, the real
// LFM2.5-Audio 1.5B shapes) gated whole, then as a 2-way and a 4-way `--shard-by passes` split,
// each shard run on its own here one after the other (in CI they run at once, one per job), and
// merged. Printed: each shard's wall time and the slowest shard's as a ratio of the unsharded
// gate's in the same run (the CI wall time of a sharded gate is about its slowest shard plus the
// merge), and that the merged seals equal the unsharded ones. Never asserted: timings are evidence.
// Size: TRACE_INSPECTOR_PASS_SHARD_GIB (default 1); TRACE_INSPECTOR_SCALE_DIR (default the OS temp folder).
//   npm run bench -- "pass shards"      TRACE_INSPECTOR_PASS_SHARD_GIB=0.3 npm run bench -- "pass shards"
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_CHUNK_DIGEST_BYTES } from '../../main/core/bundle/chunk-digests.ts';
import { CLI, TESTLIB_DIR } from '../helpers/paths.ts';
import { writeScaleReference } from '../scale/scale-reference.ts';
import { runOfSize } from './scale.bench.ts';

const GIB = 2 ** 30;
const fmt = (value: number, digits = 2): string => value.toFixed(digits);

interface Timed {
  seconds: number;
  code: number | null;
  tail: string;
}

async function timedCli(args: readonly string[]): Promise<Timed> {
  const start = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolveExit) => child.on('exit', (exitCode) => resolveExit(exitCode)));
  return { seconds: (performance.now() - start) / 1000, code, tail: output.trim().split('\n').slice(-2).join(' | ') };
}

const sealsOf = (file: string): string => (JSON.parse(readFileSync(file, 'utf8')) as { seals: { lines: string[] } }).seals.lines.join(' / ');

export async function benchPassShard(): Promise<string[]> {
  const gib = Number(process.env['TRACE_INSPECTOR_PASS_SHARD_GIB'] ?? '1');
  const root = mkdtempSync(join(process.env['TRACE_INSPECTOR_SCALE_DIR'] ?? tmpdir(), 'ti-bench-pass-shard-'));
  const lines = [`node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}); size TRACE_INSPECTOR_PASS_SHARD_GIB=${gib}`];
  try {
    const spec = runOfSize(gib * GIB);
    const reference = writeScaleReference(join(root, 'reference'), { ...spec, caseId: 'scale', chunkBytes: DEFAULT_CHUNK_DIGEST_BYTES });
    lines.push(`trace: one case, 1,024 prompt tokens, ${spec.passes} passes with KV-cache records, ${fmt(reference.bytes / GIB)} GiB of tensors per bundle`);
    const { privateKey } = generateKeyPairSync('ed25519');
    const key = join(root, 'gate.key');
    writeFileSync(key, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    let runs = 0;
    const gate = (extra: readonly string[]): Promise<Timed & { json: string; receipt: string }> => {
      const work = join(root, `work-${++runs}`);
      const json = join(root, `result-${runs}.json`);
      const receipt = join(root, `result-${runs}.dsse.json`);
      const args = ['--gate', '--engine', join(TESTLIB_DIR, 'libscale_engine.so'), '--bundle', reference.dir, '--work', work, '--key', key];
      const options = ['--option', 'scale.kv_cache=1', '--timeout', '600', '--json', json, '--receipt', receipt];
      return timedCli([...args, ...options, ...extra]).then((timed) => {
        // Each run's evidence goes once its figures are taken: the disk holds one native bundle at a time.
        rmSync(work, { recursive: true, force: true });
        return { ...timed, json, receipt };
      });
    };
    const whole = await gate([]);
    if (whole.code !== 0 && whole.code !== 1) {
      lines.push(`unsharded gate failed (exit ${String(whole.code)}): ${whole.tail}`);
      return lines;
    }
    lines.push(`unsharded gate: ${fmt(whole.seconds, 1)} s (${sealsOf(whole.json)})`);
    for (const count of [2, 4]) {
      const shards = [];
      for (let k = 1; k <= count; k++) shards.push(await gate(['--shard', `${k}/${count}`, '--shard-by', 'passes']));
      const failed = shards.find((shard) => shard.code !== 0 && shard.code !== 1);
      if (failed !== undefined) {
        lines.push(`${count}-way pass split: a shard failed (exit ${String(failed.code)}): ${failed.tail}`);
        continue;
      }
      const ranges = (JSON.parse(readFileSync(shards[0]?.json as string, 'utf8')) as { shard: { ranges: { from: number; to: number }[] } }).shard.ranges;
      const mergedJson = join(root, `merged-${count}.json`);
      const merge = await timedCli([
        'merge',
        ...shards.flatMap((shard) => [shard.json, shard.receipt]),
        '--key',
        key,
        '--json',
        mergedJson,
        '--receipt',
        join(root, `merged-${count}.dsse.json`),
      ]);
      const slowest = Math.max(...shards.map((shard) => shard.seconds));
      lines.push(
        `${count}-way pass split: shards ${shards.map((shard, i) => `${i + 1}/${count} passes ${ranges[i]?.from}-${(ranges[i]?.to ?? 0) - 1} ${fmt(shard.seconds, 1)} s`).join(', ')}; ` +
          `merge ${fmt(merge.seconds, 1)} s; slowest shard ${fmt(slowest / whole.seconds)}x the unsharded gate, slowest + merge ${fmt((slowest + merge.seconds) / whole.seconds)}x; ` +
          `merged seals ${merge.code === 0 || merge.code === 1 ? (sealsOf(mergedJson) === sealsOf(whole.json) ? 'equal the unsharded ones' : `DIFFER: ${sealsOf(mergedJson)}`) : `merge failed (exit ${String(merge.code)}): ${merge.tail}`}`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchPassShard()) process.stdout.write(`${line}\n`);
}

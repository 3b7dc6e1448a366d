// Scale (issue 14), on a trace of the scale engine (engine/testlibs/scale_engine.c: the real
// LFM2.5-Audio 1.5B shapes) and its reference (tests/scale/scale-reference.ts), every figure a
// ratio against a baseline measured in the same run (never asserted: timings are evidence):
//   gate      `trace-inspector --gate` over the trace (child process, its wall time and the peak
//             RSS of every process of its tree, sampled from /proc) against `sha256sum` of both
//             bundles' files run in parallel on all cores (the floor: every byte read and hashed
//             once per side); target <= 2x, every process <= 300 MB;
//   compare   what `trace-inspector compare <reference> <native>` does (runCompare: both bundles
//             opened with every digest verified, every boundary judged) against a numpy script on
//             the same files (np.fromfile at each tensor's offset, abs-max and isclose, no
//             digests); target >= 1x. Printed for the tree-sha256 bundles the writers now write,
//             and for the same bytes with plain sha256 digests (bundles written before the scheme).
// Size: TRACE_INSPECTOR_SCALE_GIB (default 4: a 1,024-token prefill and as many decode passes
// with KV-cache records as fill it); TRACE_INSPECTOR_SCALE_DIR (default the OS temp folder).
//   npm run bench -- scale          TRACE_INSPECTOR_SCALE_GIB=0.3 npm run bench -- scale
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import type { BundleManifest } from '../../main/core/bundle/manifest-schema.ts';
import { runCompare } from '../../main/core/compare/compare-run.ts';
import { plainCompareOptions } from '../helpers/compare-options.ts';
import { readOnceTally } from '../../main/core/bundle/leaf-feed.ts';
import { CLI, TESTLIB_DIR } from '../helpers/paths.ts';
import { scaleRunBytes, type ScaleRunSpec } from '../scale/scale-model.ts';
import { writeScaleReference } from '../scale/scale-reference.ts';
import { DEFAULT_CHUNK_DIGEST_BYTES } from '../../main/core/bundle/chunk-digests.ts';

export const TARGETS = { gateVsSha256: 2, rssBytes: 300 * 1e6, compareVsNumpy: 1 } as const;

const GIB = 2 ** 30;
const fmt = (value: number, digits = 2): string => value.toFixed(digits);
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
const met = (ok: boolean): string => (ok ? 'met' : 'MISSED');

/** The run that fills about `bytes`: a 1,024-token prefill, then decodes with KV-cache records. */
export function runOfSize(bytes: number): ScaleRunSpec {
  const prompt = Array.from({ length: 1024 }, (_, i) => (i * 7919) % 65_536);
  let passes = 1;
  const base = { prompt, pcmSamples: 240_000, kvCache: true };
  let size = scaleRunBytes({ ...base, passes });
  // Each decode adds ~2 x 6 caches of (K x 2 KiB) plus ~0.8 MB: grow in steps, then settle.
  while (size < bytes) {
    const step = Math.max(1, Math.floor((bytes - size) / (size / passes + 30e6)));
    passes += step;
    size = scaleRunBytes({ ...base, passes });
  }
  return { ...base, passes };
}

function filesOf(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.safetensors'))
    .map((name) => join(dir, name));
}

/** Wall time of sha256sum over `files`, one process per core pulling files from a shared list. */
function parallelSha256(files: readonly string[]): number {
  const list = join(tmpdir(), `ti-bench-scale-files-${process.pid}`);
  writeFileSync(list, `${files.join('\0')}\0`);
  const start = performance.now();
  execFileSync('sh', ['-c', `xargs -0 -n 1 -P ${availableParallelism()} sha256sum < "${list}" > /dev/null`]);
  const seconds = (performance.now() - start) / 1000;
  rmSync(list, { force: true });
  return seconds;
}

/**
 * write() of `bytes` into the page cache, in 4 MiB writes to a new file: the first time, then at
 * once again (the first file's pages just freed). The gate writes the native bundle into the page
 * cache while the sha256sum floor only reads cached files, so the machine's cost of new page-cache
 * memory belongs beside the gate's ratio: on a virtual machine whose freed memory goes back to the
 * host (a balloon's free page reporting) the first write pays for every page it touches and the
 * second, reusing pages freed a moment before, does not.
 */
function pageCacheWrites(dir: string, bytes: number): { first: number; again: number } {
  const block = Buffer.alloc(4 * 1024 * 1024, 0x5a);
  const once = (name: string): number => {
    const path = join(dir, name);
    const fd = openSync(path, 'w');
    const start = performance.now();
    for (let done = 0; done < bytes; done += block.length) writeSync(fd, block);
    closeSync(fd);
    const seconds = (performance.now() - start) / 1000;
    rmSync(path, { force: true });
    return bytes / 1e9 / seconds;
  };
  const first = once('page-cache-first');
  return { first, again: once('page-cache-again') };
}

/** Peak RSS (VmHWM) of every process in the tree of `root`, sampled until it exits. */
function treeWatcher(root: number): { stop: () => Map<number, { name: string; hwm: number }> } {
  const seen = new Map<number, { name: string; hwm: number }>();
  const children = (pid: number): number[] => {
    try {
      return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
        readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      return [];
    }
  };
  const sample = (): void => {
    const queue = [root];
    while (queue.length > 0) {
      const pid = queue.pop() as number;
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
        const name = /Name:\s+(.*)/.exec(status)?.[1] ?? '?';
        const before = seen.get(pid);
        if (before === undefined || hwm > before.hwm) seen.set(pid, { name, hwm });
      } catch {
        // exited between the listing and the read
      }
      queue.push(...children(pid));
    }
  };
  const timer = setInterval(sample, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}

async function runGateChild(
  args: readonly string[],
): Promise<{ seconds: number; code: number | null; rss: Map<number, { name: string; hwm: number }>; tail: string }> {
  const start = performance.now();
  const child = spawn(process.execPath, [CLI, '--gate', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const watcher = treeWatcher(child.pid as number);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolveExit) => child.on('exit', (exitCode) => resolveExit(exitCode)));
  const seconds = (performance.now() - start) / 1000;
  return { seconds, code, rss: watcher.stop(), tail: output.trim().split('\n').slice(-3).join(' | ') };
}

export const NUMPY_SCRIPT = String.raw`
import json, struct, sys, time, numpy as np
def tensors(d):
    m = json.load(open(d + '/manifest.json'))
    out = {}
    for p in m['passes']:
        f = d + '/' + p['file']
        with open(f, 'rb') as h:
            n = struct.unpack('<Q', h.read(8))[0]
            header = json.loads(h.read(n))
        for b in p['boundaries']:
            info = header[b['key']]
            out[(p['index'], b['name'])] = (f, 8 + n + info['data_offsets'][0], b['dtype'], info['data_offsets'][1] - info['data_offsets'][0])
    return out
ref, nat = tensors(sys.argv[1]), tensors(sys.argv[2])
dt = {'F32': np.float32, 'I32': np.int32, 'BF16': np.uint16}
start = time.perf_counter(); worst = 0.0; close = True; total = 0
for key, (f, off, dtype, nbytes) in ref.items():
    g, off2, _, _ = nat[key]
    a = np.fromfile(f, dtype=dt[dtype], count=nbytes // np.dtype(dt[dtype]).itemsize, offset=off)
    b = np.fromfile(g, dtype=dt[dtype], count=nbytes // np.dtype(dt[dtype]).itemsize, offset=off2)
    if dtype == 'F32':
        worst = max(worst, float(np.abs(a - b).max()) if a.size else 0.0)
        close = close and bool(np.isclose(a, b).all())
    else:
        close = close and bool((a == b).all())
    total += nbytes
print(json.dumps({'seconds': time.perf_counter() - start, 'bytes': total, 'max_abs': worst, 'close': close}))
`;

/** `trace-inspector compare <reference> <native>` as the CLI runs it (runCompare), timed. */
async function ourCompare(referenceDir: string, nativeDir: string): Promise<{ seconds: number; passed: number; boundaries: number; overall: string }> {
  const start = performance.now();
  const result = await runCompare(plainCompareOptions(referenceDir, nativeDir));
  return { seconds: (performance.now() - start) / 1000, passed: result.counts.PASS, boundaries: result.compared, overall: result.seals.overall };
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * The bundle at `dir` as it would have been written before the tree scheme: its files hard-linked
 * into `out`, its manifest restating every digest in plain sha256 (no `digests` declaration).
 */
async function plainDigestCopy(dir: string, out: string): Promise<void> {
  mkdirSync(out, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BundleManifest;
  const tensorDigests = new Map<string, Map<string, string>>();
  for (const file of manifest.files) {
    linkSync(join(dir, file.path), join(out, file.path));
    file.sha256 = sha256(readFileSync(join(dir, file.path)));
    const tensors = await SafetensorsFile.open(join(dir, file.path));
    const digests = new Map<string, string>();
    for (const tensor of tensors.tensors) digests.set(tensor.key, sha256(await tensors.readTensor(tensor.key)));
    await tensors.close();
    tensorDigests.set(file.path, digests);
  }
  for (const input of manifest.inputs) input.sha256 = tensorDigests.get(input.file)?.get(input.key) ?? '';
  for (const pass of manifest.passes) {
    for (const boundary of pass.boundaries) {
      boundary.sha256 = tensorDigests.get(pass.file)?.get(boundary.key) ?? '';
      delete boundary.chunks;
    }
  }
  delete manifest.digests;
  writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest));
}

export async function benchScale(): Promise<string[]> {
  const gib = Number(process.env['TRACE_INSPECTOR_SCALE_GIB'] ?? '4');
  const root = mkdtempSync(join(process.env['TRACE_INSPECTOR_SCALE_DIR'] ?? tmpdir(), 'ti-bench-scale-'));
  const lines = [
    `node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), ${fmt(totalmem() / GIB, 1)} GiB RAM; size TRACE_INSPECTOR_SCALE_GIB=${gib}`,
  ];
  try {
    const spec = runOfSize(gib * GIB);
    let start = performance.now();
    const reference = writeScaleReference(join(root, 'reference'), { ...spec, caseId: 'scale', chunkBytes: DEFAULT_CHUNK_DIGEST_BYTES });
    lines.push(
      `trace: 1,024 prompt tokens + 10 s of audio in, ${spec.passes} passes with KV-cache records: ${fmt(reference.bytes / GIB)} GiB of tensors per bundle ` +
        `(reference written in ${fmt((performance.now() - start) / 1000, 1)} s by tests/scale/scale-reference.ts)`,
    );

    const { privateKey } = generateKeyPairSync('ed25519');
    const key = join(root, 'gate.key');
    writeFileSync(key, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const work = join(root, 'work');
    const gate = await runGateChild([
      '--engine',
      join(TESTLIB_DIR, 'libscale_engine.so'),
      '--bundle',
      reference.dir,
      '--work',
      work,
      '--key',
      key,
      '--option',
      'scale.kv_cache=1',
      '--timeout',
      '600',
    ]);
    const nativeDir = join(work, 'scale', 'native');
    if (gate.code !== 0 && gate.code !== 1) {
      lines.push(`gate failed (exit ${String(gate.code)}): ${gate.tail}`);
      return lines;
    }
    const floor = parallelSha256([...filesOf(reference.dir), ...filesOf(nativeDir)]);
    const worst = Math.max(...[...gate.rss.values()].map((entry) => entry.hwm));
    const perProcess = [...gate.rss.entries()].map(([pid, entry]) => `${entry.name}[${pid}] ${mb(entry.hwm)}`).join(', ');
    lines.push(
      `gate: ${fmt(gate.seconds, 1)} s (exit ${String(gate.code)}: ${gate.tail}); parallel sha256sum of both bundles ${fmt(floor, 1)} s; ` +
        `ratio ${fmt(gate.seconds / floor)}x [target <= ${TARGETS.gateVsSha256}x: ${met(gate.seconds / floor <= TARGETS.gateVsSha256)}]`,
    );
    lines.push(`gate peak RSS per process: ${perProcess} [target every process <= ${mb(TARGETS.rssBytes)}: ${met(worst <= TARGETS.rssBytes)}]`);
    const writes = pageCacheWrites(root, GIB);
    lines.push(
      `machine: write() of 1 GiB into new page cache ${fmt(writes.first)} GB/s, at once again ${fmt(writes.again)} GB/s ` +
        `(the gate writes the native run's ${fmt(reference.bytes / GIB)} GiB into the page cache; the sha256sum floor reads cached files)`,
    );

    // Old-scheme bundles of the same bytes: the reference written with plain sha256 digests, the
    // native run's files linked under a manifest restating its digests in plain sha256.
    const plainReference = writeScaleReference(join(root, 'reference-sha256'), {
      ...spec,
      caseId: 'scale',
      chunkBytes: DEFAULT_CHUNK_DIGEST_BYTES,
      digests: 'sha256',
    });
    const plainNative = join(root, 'native-sha256');
    await plainDigestCopy(nativeDir, plainNative);

    start = performance.now();
    const numpyRun = spawnSync('/usr/bin/python3', ['-c', NUMPY_SCRIPT, reference.dir, nativeDir], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const numpyWall = (performance.now() - start) / 1000;
    const tally = { ...readOnceTally };
    const ours = await ourCompare(reference.dir, nativeDir);
    const readOnce = { fed: readOnceTally.fedBytes - tally.fedBytes, again: readOnceTally.rereadBytes - tally.rereadBytes };
    const old = await ourCompare(plainReference.dir, plainNative);
    if (numpyRun.status !== 0) {
      lines.push(
        `compare: ours ${fmt(ours.seconds, 1)} s (${ours.passed}/${ours.boundaries} passed); numpy baseline failed: ${numpyRun.stderr.trim().split('\n').pop() ?? ''}`,
      );
    } else {
      const numpy = JSON.parse(numpyRun.stdout.trim()) as { seconds: number; bytes: number; close: boolean };
      const bytes = 2 * numpy.bytes;
      lines.push(
        `numpy (fromfile + abs-max + isclose, no digests): ${fmt(numpy.seconds, 2)} s in-script, ${fmt(numpyWall, 1)} s with start-up = ${fmt(bytes / 1e9 / numpy.seconds)} GB/s of both bundles`,
      );
      lines.push(
        `read once (tree-sha256): ${fmt(readOnce.fed / GIB)} GiB of tensors hashed from the windows compared, ${fmt(readOnce.again / GIB)} GiB read again by the verification`,
      );
      for (const [label, run] of [
        ['tree-sha256 bundles', ours],
        ['plain-sha256 bundles (written before the scheme)', old],
      ] as const) {
        lines.push(
          `compare end to end, ${label} (runCompare: every digest verified, every boundary judged, ${run.passed}/${run.boundaries} PASS, ${run.overall}): ` +
            `${fmt(run.seconds, 2)} s = ${fmt(bytes / 1e9 / run.seconds)} GB/s; ratio ${fmt(numpy.seconds / run.seconds)}x numpy ` +
            `[target >= ${TARGETS.compareVsNumpy}x: ${met(numpy.seconds / run.seconds >= TARGETS.compareVsNumpy)}]`,
        );
      }
    }
  } finally {
    // TRACE_INSPECTOR_SCALE_KEEP=1 leaves the bundles for timing compare alone (scale-compare.bench.ts).
    if (process.env['TRACE_INSPECTOR_SCALE_KEEP'] === '1') lines.push(`kept: ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchScale()) process.stdout.write(`${line}\n`);
}

// Comparator throughput and memory, measured in one run against baselines measured in the same
// run (never asserted: timings are evidence, not tests):
//   - 256 MiB of f32 and of bf16 (synthetic, generated once per run), bit_exact on identical data
//     and faithful with full classification on data moved by about one ULP;
//   - the kernels alone (data resident in the kernel memory), the kernels with the copy from JS
//     arrays, and end to end through temp bundles (file reads and the per-tensor sha256 included);
//   - baselines: Buffer.equals over the same bytes, and numpy (`np.abs(a-b).max()` plus
//     `np.isclose(a,b).all()` on the same arrays, only the computation timed; bf16 has no numpy
//     dtype, so its widening to float32 is part of numpy's timed work);
//   - the peak RSS of comparing a >= 1 GiB pair of bundles (streaming), in a child process.
// GB/s are 1e9 bytes of ONE side per second. Targets are printed beside the results.
//   node --import tsx tests/bench/comparator.bench.ts
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import { compareValues, KernelState, KernelWorkspace, unitBytes } from '../../main/core/compare/compare-kernels.ts';
import { BIT_EXACT, faithfulContract, makeArray, writeStreamedBundle, type Variant } from './comparator-data.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const BENCH_BYTES = 256 * 1024 * 1024;
const RSS_BYTES = 1024 * 1024 * 1024;
const WINDOW_BYTES = 8 * 1024 * 1024;
const REPEAT = 5;

export const TARGETS = {
  faithfulGBps: 1,
  faithfulVsNumpy: 1,
  bitExactVsBufferEquals: 0.5,
  peakRssBytes: 300 * 1024 * 1024,
} as const;

const gbps = (bytes: number, seconds: number): number => bytes / seconds / 1e9;
const fmt = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : String(value));
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/**
 * Best of `repeat` runs of each measurement, in seconds, the measurements interleaved round by
 * round so a baseline and the thing measured against it see the same machine (other processes
 * come and go on a shared box).
 */
async function bestOf<K extends string>(runs: Record<K, () => unknown>, repeat = REPEAT): Promise<Record<K, number>> {
  const keys = Object.keys(runs) as K[];
  const fastest = Object.fromEntries(keys.map((key) => [key, Infinity])) as Record<K, number>;
  for (let round = 0; round < repeat; round++) {
    for (const key of keys) {
      const started = performance.now();
      await runs[key]();
      fastest[key] = Math.min(fastest[key], (performance.now() - started) / 1000);
    }
  }
  return fastest;
}

type Dtype = 'F32' | 'BF16';

/** The kernels over resident data, in 8 MiB windows as the streaming driver calls them. */
function kernelPass(
  ws: KernelWorkspace,
  dtype: Dtype,
  contract: Contract,
  bytes: number,
  copyFrom: { native: Uint8Array; reference: Uint8Array } | null,
): KernelState {
  const st = new KernelState(ws, { dtype, shape: [bytes / unitBytes(dtype)], contract });
  const perUnit = unitBytes(dtype);
  for (let at = 0; at < bytes; at += WINDOW_BYTES) {
    const size = Math.min(WINDOW_BYTES, bytes - at);
    if (copyFrom !== null) {
      ws.native.set(copyFrom.native.subarray(at, at + size));
      ws.reference.set(copyFrom.reference.subarray(at, at + size));
      compareValues(st, ws.native.subarray(0, size), ws.reference.subarray(0, size), 0, size / perUnit, at / perUnit);
    } else {
      compareValues(st, ws.native.subarray(at, at + size), ws.reference.subarray(at, at + size), 0, size / perUnit, at / perUnit);
    }
  }
  return st;
}

interface NumpyResult {
  seconds: number;
  maxAbs: number;
  allClose: boolean;
}

function numpyBaseline(dtype: Dtype, nativePath: string, referencePath: string): NumpyResult | string {
  const script = `
import json, sys, time
try:
    import numpy as np
except Exception as error:
    print(json.dumps({"missing": str(error)})); sys.exit(0)
def load(path):
    if sys.argv[1] == "BF16":
        return np.fromfile(path, dtype=np.uint16)
    return np.fromfile(path, dtype=np.float32)
a, b = load(sys.argv[2]), load(sys.argv[3])
best = None
for _ in range(${REPEAT}):
    t = time.perf_counter()
    if sys.argv[1] == "BF16":
        x = (a.astype(np.uint32) << 16).view(np.float32)
        y = (b.astype(np.uint32) << 16).view(np.float32)
    else:
        x, y = a, b
    m = np.abs(x - y).max()
    c = bool(np.isclose(x, y).all())
    dt = time.perf_counter() - t
    best = dt if best is None else min(best, dt)
print(json.dumps({"seconds": best, "maxAbs": float(m), "allClose": c}))
`;
  const run = spawnSync('/usr/bin/python3', ['-c', script, dtype, nativePath, referencePath], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.error !== undefined || run.status !== 0)
    return `numpy baseline missing: ${run.error?.message ?? run.stderr.trim().split('\n').pop() ?? 'python failed'}`;
  const parsed = JSON.parse(run.stdout.trim()) as NumpyResult | { missing: string };
  if ('missing' in parsed) return `numpy baseline missing: ${parsed.missing}`;
  return parsed;
}

async function benchDtype(dtype: Dtype, dir: string, lines: string[]): Promise<void> {
  const faithful = faithfulContract(dtype === 'F32' ? 2 ** -20 : 2 ** -6);
  const arrays: Record<Variant, Uint8Array> = {
    reference: makeArray(dtype, 'reference', BENCH_BYTES),
    same: makeArray(dtype, 'same', BENCH_BYTES),
    noisy: makeArray(dtype, 'noisy', BENCH_BYTES),
  };
  const label = `${dtype.padEnd(4)} ${mb(BENCH_BYTES)}`;

  // Baseline 2: numpy on the faithful pair (its own best of REPEAT, computation only).
  const nativeRaw = join(dir, `${dtype}.native.bin`);
  const referenceRaw = join(dir, `${dtype}.reference.bin`);
  writeFileSync(nativeRaw, arrays.noisy);
  writeFileSync(referenceRaw, arrays.reference);
  const numpy = numpyBaseline(dtype, nativeRaw, referenceRaw);
  rmSync(nativeRaw);
  rmSync(referenceRaw);
  const numpyGBps = typeof numpy === 'string' ? null : gbps(BENCH_BYTES, numpy.seconds);

  // Baseline 1, Buffer.equals over the same bytes (two distinct, equal buffers: a full scan),
  // interleaved with the kernels: on data resident in the kernel memory, and with the copy from
  // JS arrays into the kernel windows.
  const left = Buffer.from(arrays.reference.buffer, arrays.reference.byteOffset, BENCH_BYTES);
  const right = Buffer.from(arrays.same.buffer, arrays.same.byteOffset, BENCH_BYTES);
  const resident = { same: KernelWorkspace.create(BENCH_BYTES), noisy: KernelWorkspace.create(BENCH_BYTES) };
  const simd = resident.same.wasm !== null;
  for (const ws of [resident.same, resident.noisy]) ws.reference.set(arrays.reference);
  resident.same.native.set(arrays.same);
  resident.noisy.native.set(arrays.noisy);
  const windowed = KernelWorkspace.create(WINDOW_BYTES);
  let exactState = kernelPass(resident.same, dtype, BIT_EXACT, BENCH_BYTES, null);
  let faithfulState = kernelPass(resident.noisy, dtype, faithful, BENCH_BYTES, null);
  const timed = await bestOf({
    equals: () => left.equals(right),
    exact: () => (exactState = kernelPass(resident.same, dtype, BIT_EXACT, BENCH_BYTES, null)),
    faithful: () => (faithfulState = kernelPass(resident.noisy, dtype, faithful, BENCH_BYTES, null)),
    exactCopy: () => kernelPass(windowed, dtype, BIT_EXACT, BENCH_BYTES, { native: arrays.same, reference: arrays.reference }),
    faithfulCopy: () => kernelPass(windowed, dtype, faithful, BENCH_BYTES, { native: arrays.noisy, reference: arrays.reference }),
  });
  const equalsGBps = gbps(BENCH_BYTES, timed.equals);
  const exactSeconds = timed.exact;
  const faithfulSeconds = timed.faithful;
  const exactCopySeconds = timed.exactCopy;
  const faithfulCopySeconds = timed.faithfulCopy;

  // Pure JS kernels, for scale (one run each).
  const jsOnly = KernelWorkspace.create(WINDOW_BYTES, 'js');
  const jsTimed = await bestOf(
    {
      exact: () => kernelPass(jsOnly, dtype, BIT_EXACT, BENCH_BYTES, { native: arrays.same, reference: arrays.reference }),
      faithful: () => kernelPass(jsOnly, dtype, faithful, BENCH_BYTES, { native: arrays.noisy, reference: arrays.reference }),
    },
    1,
  );
  const exactJsSeconds = jsTimed.exact;
  const faithfulJsSeconds = jsTimed.faithful;

  // End to end through bundles.
  const shape = [BENCH_BYTES / unitBytes(dtype)];
  const tensor = (variant: Variant) => [{ name: 'bench.x', dtype, shape, variant, contract: BIT_EXACT }] as const;
  writeStreamedBundle(join(dir, `${dtype}-reference`), 'reference', tensor('reference'));
  writeStreamedBundle(join(dir, `${dtype}-same`), 'native', tensor('same'));
  writeStreamedBundle(join(dir, `${dtype}-noisy`), 'native', tensor('noisy'));
  const reference = await openBundle(join(dir, `${dtype}-reference`), { verify: 'none' });
  const same = await openBundle(join(dir, `${dtype}-same`), { verify: 'none' });
  const noisy = await openBundle(join(dir, `${dtype}-noisy`), { verify: 'none' });
  const e2e = await bestOf(
    {
      exact: () => compareBoundary({ native: same, reference }, 0, 'bench.x', { contract: BIT_EXACT }),
      faithful: () => compareBoundary({ native: noisy, reference }, 0, 'bench.x', { contract: faithful }),
    },
    3,
  );
  const shaSeconds = (await bestOf({ sha: () => createHash('sha256').update(arrays.reference).digest() }, 3)).sha;
  const e2eExact = e2e.exact;
  const e2eFaithful = e2e.faithful;
  const e2eResult = await compareBoundary({ native: noisy, reference }, 0, 'bench.x', { contract: faithful });
  await Promise.all([reference.close(), same.close(), noisy.close()]);

  const exactGBps = gbps(BENCH_BYTES, exactSeconds);
  const faithfulGBps = gbps(BENCH_BYTES, faithfulSeconds);
  const vsNumpy = (value: number): string => (numpyGBps === null ? 'numpy n/a' : `${fmt(value / numpyGBps)}x numpy`);
  const vsEquals = (value: number): string => `${fmt(value / equalsGBps)}x Buffer.equals`;

  lines.push(
    `${label}  baselines: Buffer.equals ${fmt(equalsGBps)} GB/s; ${typeof numpy === 'string' ? numpy : `numpy abs-max + isclose ${fmt(numpyGBps ?? 0)} GB/s`}`,
  );
  lines.push(
    `${label}  bit_exact, identical   kernel ${fmt(exactGBps)} GB/s = ${vsEquals(exactGBps)}  [target >= ${TARGETS.bitExactVsBufferEquals}x Buffer.equals: ${exactGBps / equalsGBps >= TARGETS.bitExactVsBufferEquals ? 'met' : 'MISSED'}]`,
  );
  lines.push(
    `${label}  faithful, ~1 ULP noise kernel ${fmt(faithfulGBps)} GB/s = ${vsNumpy(faithfulGBps)}, ${vsEquals(faithfulGBps)}  [target >= ${TARGETS.faithfulGBps} GB/s and >= numpy: ${
      faithfulGBps >= TARGETS.faithfulGBps && (numpyGBps === null || faithfulGBps >= numpyGBps) ? 'met' : 'MISSED'
    }]`,
  );
  lines.push(
    `${label}  with copy-in from JS arrays: bit_exact ${fmt(gbps(BENCH_BYTES, exactCopySeconds))} GB/s, faithful ${fmt(gbps(BENCH_BYTES, faithfulCopySeconds))} GB/s;` +
      ` pure-JS kernels: bit_exact ${fmt(gbps(BENCH_BYTES, exactJsSeconds))} GB/s, faithful ${fmt(gbps(BENCH_BYTES, faithfulJsSeconds))} GB/s${simd ? '' : ' (no wasm SIMD on this runtime)'}`,
  );
  lines.push(
    `${label}  end to end (bundles, reads + per-tensor sha256 of both sides): bit_exact ${fmt(gbps(BENCH_BYTES, e2eExact))} GB/s = ${vsEquals(gbps(BENCH_BYTES, e2eExact))},` +
      ` faithful ${fmt(gbps(BENCH_BYTES, e2eFaithful))} GB/s = ${vsNumpy(gbps(BENCH_BYTES, e2eFaithful))}` +
      ` (the reader's sha256 runs on this thread for both sides; sha256 alone: ${fmt(gbps(BENCH_BYTES, shaSeconds))} GB/s, so <= ${fmt(gbps(BENCH_BYTES, 2 * shaSeconds))} GB/s end to end)`,
  );
  lines.push(
    `${label}  check: bit_exact ${exactState.mismatches} mismatches; faithful ${faithfulState.mismatches} mismatches, max ULP ${faithfulState.maxUlpSeen}, RMSE ${Math.sqrt(faithfulState.sumSq / faithfulState.pairs).toExponential(3)}` +
      `${typeof numpy === 'string' ? '' : `; numpy max abs ${numpy.maxAbs.toExponential(3)} vs ours ${faithfulState.maxAbs.toExponential(3)}`}; end-to-end passed=${e2eResult.passed}`,
  );
}

function peakRss(dir: string, lines: string[]): void {
  const elements = RSS_BYTES / 4;
  const tensor = (variant: Variant) => [
    { name: 'bench.big', dtype: 'F32' as const, shape: [elements / 4096, 4096], variant, contract: faithfulContract(2 ** -20) },
  ];
  const nativeDir = join(dir, 'rss-native');
  const referenceDir = join(dir, 'rss-reference');
  writeStreamedBundle(referenceDir, 'reference', tensor('reference'));
  writeStreamedBundle(nativeDir, 'native', tensor('noisy'));
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(HERE, 'comparator-rss-child.ts'), nativeDir, referenceDir, 'bench.big'], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  rmSync(nativeDir, { recursive: true, force: true });
  rmSync(referenceDir, { recursive: true, force: true });
  if (child.status !== 0) {
    lines.push(`peak RSS: the child failed: ${child.error?.message ?? child.stderr.trim()}`);
    return;
  }
  const result = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as {
    maxRssBytes: number;
    source: string;
    seconds: number;
    passed: boolean;
    mismatches: number;
  };
  lines.push(
    `F32  ${mb(RSS_BYTES)} pair, faithful, streamed in 8 MiB windows: peak RSS ${mb(result.maxRssBytes)} (whole child process, ${result.source}) [target <= ${mb(TARGETS.peakRssBytes)}: ${
      result.maxRssBytes <= TARGETS.peakRssBytes ? 'met' : 'MISSED'
    }], ${fmt(gbps(RSS_BYTES, result.seconds))} GB/s end to end, passed=${result.passed}`,
  );
}

export async function benchComparator(): Promise<string[]> {
  const lines: string[] = [`node ${process.version}, ${availableParallelism()} cores; GB/s = 1e9 bytes of one side per second; best of ${REPEAT}`];
  const dir = mkdtempSync(join(tmpdir(), 'ti-bench-comparator-'));
  try {
    await benchDtype('F32', dir, lines);
    await benchDtype('BF16', dir, lines);
    peakRss(dir, lines);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchComparator()) process.stdout.write(`${line}\n`);
}

// Times `trace-inspector compare` (runCompare) alone on bundles a kept scale bench left behind
// (TRACE_INSPECTOR_SCALE_KEEP=1 npm run bench -- 'scale:' prints `kept: DIR`), against the same
// numpy script, for iterating on the comparison without writing and gating the trace again:
//   node --import tsx tests/bench/scale-compare.bench.ts DIR [runs]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { runCompare } from '../../main/core/compare/compare-run.ts';
import { plainCompareOptions } from '../helpers/compare-options.ts';
import { NUMPY_SCRIPT } from './scale.bench.ts';

const root = process.argv[2];
if (root === undefined) throw new Error('usage: scale-compare.bench.ts DIR [runs]');
const runs = Number(process.argv[3] ?? '2');
const reference = join(root, 'reference');
const native = join(root, 'work', 'scale', 'native');
const numpyRun = spawnSync('/usr/bin/python3', ['-c', NUMPY_SCRIPT, reference, native], { encoding: 'utf8', maxBuffer: 1 << 20 });
const numpy = numpyRun.status === 0 ? (JSON.parse(numpyRun.stdout.trim()) as { seconds: number }).seconds : Number.NaN;
process.stdout.write(`numpy ${numpy.toFixed(2)} s\n`);
for (let run = 0; run < runs; run++) {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const result = await runCompare(plainCompareOptions(reference, native));
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  process.stdout.write(
    `compare ${seconds.toFixed(2)} s (${result.counts.PASS}/${result.compared} PASS, ${result.seals.overall}), CPU ${cpuSeconds.toFixed(2)} s (all threads): ${(numpy / seconds).toFixed(2)}x numpy\n`,
  );
}

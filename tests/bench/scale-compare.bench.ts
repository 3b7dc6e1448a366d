// Times `trace-inspector compare` (runCompare) alone on bundles a kept scale bench left behind
// (TRACE_INSPECTOR_SCALE_KEEP=1 npm run bench -- 'scale:' prints `kept: DIR`), against the same
// numpy script, for iterating on the comparison without writing and gating the trace again:
//   node --import tsx tests/bench/scale-compare.bench.ts DIR [runs]
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { leafHashPool } from '../../main/core/bundle/leaf-hash-pool.ts';
import { runCompare } from '../../main/core/compare/compare-run.ts';
import { plainCompareOptions } from '../helpers/compare-options.ts';
import { NUMPY_SCRIPT } from './scale.bench.ts';

/** CPU seconds of each thread of this process by its name (Linux /proc), for where the time went. */
function threadCpu(): Map<string, number> {
  const byThread = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byThread.set(`${tid === String(process.pid) ? 'main' : name}[${tid}]`, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byThread;
}

const root = process.argv[2];
if (root === undefined) throw new Error('usage: scale-compare.bench.ts DIR [runs]');
const runs = Number(process.argv[3] ?? '2');
const reference = join(root, 'reference');
const native = join(root, 'work', 'scale', 'native');
const numpyRun = spawnSync('/usr/bin/python3', ['-c', NUMPY_SCRIPT, reference, native], { encoding: 'utf8', maxBuffer: 1 << 20 });
const numpy = numpyRun.status === 0 ? (JSON.parse(numpyRun.stdout.trim()) as { seconds: number }).seconds : Number.NaN;
process.stdout.write(`numpy ${numpy.toFixed(2)} s\n`);
for (let run = 0; run < runs; run++) {
  const counts = { ...leafHashPool().counts };
  const threadsBefore = threadCpu();
  const start = performance.now();
  const cpu = process.cpuUsage();
  const result = await runCompare(plainCompareOptions(reference, native));
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const threads = [...threadCpu()]
    .map(([name, seconds]) => [name, seconds - (threadsBefore.get(name) ?? 0)] as const)
    .filter(([, seconds]) => seconds >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([name, seconds]) => `${name} ${seconds.toFixed(2)}`)
    .join(', ');
  process.stdout.write(
    `compare ${seconds.toFixed(2)} s (${result.counts.PASS}/${result.compared} PASS, ${result.seals.overall}), CPU ${cpuSeconds.toFixed(2)} s (all threads), windows hashed on the workers ${leafHashPool().counts.onWorkers - counts.onWorkers}, on the comparing thread ${leafHashPool().counts.onThisThread - counts.onThisThread}: ${(numpy / seconds).toFixed(2)}x numpy\n  threads still running (CPU s): ${threads}\n`,
  );
}

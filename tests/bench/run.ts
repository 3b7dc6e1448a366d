// `npm run bench`: every benchmark, each printing its figures as ratios against a baseline
// measured in the same run (never asserted: timings are evidence, not tests).
import { benchAppPerformance } from './app-performance.bench.ts';
import { benchAppScale } from './app-scale.bench.ts';
import { benchCaptureOverhead } from './capture-overhead.bench.ts';
import { benchComparator } from './comparator.bench.ts';
import { benchPassShard } from './pass-shard.bench.ts';
import { benchRealTimeFactor } from './real-time-factor.bench.ts';
import { benchScale } from './scale.bench.ts';

interface Bench {
  title: string;
  run: () => Promise<string[]>;
}

const benches: Bench[] = [
  {
    title: 'capture: engine-thread time per recorded byte and engine-host memory (reference, bulk, small-records and scale engines)',
    run: benchCaptureOverhead,
  },
  { title: 'comparator throughput and streaming memory', run: benchComparator },
  { title: 'real-time factor, full pipeline (speech case)', run: benchRealTimeFactor },
  { title: 'scale: --gate and end-to-end compare on a scale-engine trace (TRACE_INSPECTOR_SCALE_GIB, default 4)', run: benchScale },
  {
    title: 'pass shards: one scale-engine case gated whole and as 2- and 4-way --shard-by passes splits (TRACE_INSPECTOR_PASS_SHARD_GIB, default 1)',
    run: benchPassShard,
  },
  { title: 'app performance in Chromium: 50k-row boundary table, 4096x4096 heatmap (serve mode; a scale target)', run: benchAppPerformance },
  { title: 'app on a large run: scale-engine trace stepped, opened and viewed in serve mode (TRACE_INSPECTOR_APP_SCALE_GIB, default 10)', run: benchAppScale },
];

const only = process.argv.slice(2);
let failed = false;
for (const bench of benches) {
  if (only.length > 0 && !only.some((word) => bench.title.includes(word))) continue;
  process.stdout.write(`\n== ${bench.title}\n`);
  try {
    for (const line of await bench.run()) process.stdout.write(`${line}\n`);
  } catch (error) {
    failed = true;
    process.stdout.write(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
}
process.exitCode = failed ? 1 : 0;

// Child of heap-bounds.test.ts: sets the gate's heap bounds (or not), starts a worker thread the
// way argv[2] says and waits for it to end, then churns the heap as a long run does (most objects
// die young, some survive a while) and prints the young generation's capacity before the churn
// and at its largest.
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { GATE_HEAP_FLAGS } from '../../main/cli/gate-heap.ts';
import { boundHeapGrowth, startWorker } from '../../main/core/tool/heap-bounds.ts';

const mode = process.argv[2];
const newSpace = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? -1;
if (mode !== 'default') boundHeapGrowth(GATE_HEAP_FLAGS);
const source = 'setTimeout(() => {}, 50)';
const worker = mode === 'plain-worker' ? new Worker(source, { eval: true }) : startWorker(source, { eval: true });
await new Promise((resolveExit) => worker.once('exit', resolveExit));
const before = newSpace();
let largest = before;
const kept: { index: number; text: string; pair: number[] }[] = [];
for (let index = 0; index < 1_500_000; index += 1) {
  const item = { index, text: `row ${index}`, pair: [index, index + 1] };
  if (index % 7 === 0) kept.push(item);
  if (kept.length > 100_000) kept.splice(0, 50_000);
  if (index % 5_000 === 0) largest = Math.max(largest, newSpace());
}
process.stdout.write(JSON.stringify({ before, largest }));

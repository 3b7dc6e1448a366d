// Bounds on this process's V8 heap growth, set while it runs (the `--gate` process sets them:
// main/cli/gate-heap.ts), and the one way this process starts a worker thread so they hold.
//
// V8 flags set once the process runs (v8.setFlagsFromString) take effect where V8 reads them each
// time it sizes a space. But Node 20 puts V8's flags back as the command line gave them while a
// worker thread starts (before its 'online' event; measured: tests/gate/heap-bounds.test.ts), so
// each worker started here sets the bounds again once it is online.
import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

let bounds: readonly string[] = [];

function applyBounds(): void {
  for (const flag of bounds) setFlagsFromString(flag);
}

/** Sets `flags` (each `--name=value`) now and again after every startWorker of this process. */
export function boundHeapGrowth(flags: readonly string[]): void {
  bounds = [...flags];
  applyBounds();
}

/** `new Worker(...)`, the heap bounds set again once it is online (its start resets V8's flags). */
export function startWorker(filename: string | URL, options?: WorkerOptions): Worker {
  const worker = new Worker(filename, options);
  if (bounds.length > 0) worker.once('online', applyBounds);
  return worker;
}

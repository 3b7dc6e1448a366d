// Hashes tree-sha256 leaves (tree-digest.ts: sha256(0x00 || chunk)) of bytes this thread already
// holds — a window the comparison has just read — on worker threads, so the bytes compared are
// the bytes hashed and no file is read twice. Each worker owns a ring of shared memory: the
// window is copied into it (a memcpy, far cheaper than its sha256) and the worker hashes it there
// while this thread compares. When the ring is full this thread hashes the window itself: the
// work moves to whichever side has a core free and nothing waits.
//
// Windows are handed over and answered through shared memory, not messages: a message cost the
// comparing thread (the limit of `compare` on two cores) a structured clone and a wake-up each way
// per window, about a tenth of its time. This thread writes a job (offset, length, leaf size) into
// the worker's job table and bumps a counter the worker sleeps on (Atomics.wait); the worker
// writes the leaves' digests over the window it hashed and bumps a second counter, which this
// thread reads whenever it next places a window (or when Atomics.waitAsync wakes it).
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../tool/heap-bounds.ts';
import { leavesOf } from './tree-digest.ts';

/**
 * Shared memory per worker, used as a ring: windows are copied in one after another and freed in
 * the order the worker hashes them. Two of the comparison's largest windows (8 MiB) fit, or many
 * small ones (a run of small tensors queues up instead of being hashed here).
 */
export const RING_BYTES = 16 * 1024 * 1024;

/** Jobs a worker's table holds (a ring too): enough for a run of small tensors. */
export const MAX_JOBS = 4096;
/** Control words: jobs posted (this thread), jobs done (the worker), stop (this thread). */
const POSTED = 0;
const DONE = 1;
const STOP = 2;
/** A leaf's digest, written by the worker over the window it hashed. */
const DIGEST_BYTES = 32;
/**
 * Workers idle this long are ended (endIdleWorkers): the app compares a run, then the engineer
 * reads its rows for minutes; each worker's ring and V8 heap (16 MiB and ~10 MB) would otherwise
 * stay until the app quits. Long enough that a run of comparisons keeps its workers.
 */
export const IDLE_END_MS = 30_000;

// The worker sleeps on POSTED (Atomics.wait: no event loop, no message), hashes each job's leaves,
// writes their digests at the job's offset once all are hashed (the job holds room for them), and
// publishes DONE. STOP ends the loop (endIdleWorkers, or a worker dropped after a failure).
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const memory = new Uint8Array(workerData.memory);
const control = new Int32Array(workerData.control);
const jobs = new Int32Array(workerData.jobs);
const maxJobs = workerData.maxJobs;
const LEAF = Buffer.from([0]);
let done = 0;
for (;;) {
  while (Atomics.load(control, ${POSTED}) === done && Atomics.load(control, ${STOP}) === 0) Atomics.wait(control, ${POSTED}, done);
  if (Atomics.load(control, ${STOP}) !== 0) break;
  const slot = (done % maxJobs) * 3;
  const offset = jobs[slot], length = jobs[slot + 1], chunkBytes = jobs[slot + 2];
  const digests = [];
  for (let at = 0; at < length; at += chunkBytes) {
    digests.push(createHash('sha256').update(LEAF).update(memory.subarray(offset + at, offset + Math.min(at + chunkBytes, length))).digest());
  }
  digests.forEach((digest, i) => memory.set(digest, offset + ${DIGEST_BYTES} * i));
  done += 1;
  Atomics.store(control, ${DONE}, done);
  Atomics.notify(control, ${DONE});
}
`;

interface LeafJob {
  readonly offset: number;
  /** Ring bytes held: the window, or its leaves' digests when those are longer. */
  readonly reserved: number;
  readonly leafCount: number;
  readonly resolve: (leaves: string[]) => void;
  readonly reject: (error: Error) => void;
}

interface LeafWorker {
  readonly worker: Worker;
  readonly memory: Buffer;
  readonly control: Int32Array;
  readonly jobs: Int32Array;
  /** Jobs posted and not taken back yet, oldest first (the worker does them in this order). */
  readonly queue: LeafJob[];
  posted: number;
  /** Jobs whose answers this thread took back. */
  taken: number;
  queuedBytes: number;
  /** An Atomics.waitAsync on DONE is armed. */
  watching: boolean;
}

/** Atomics.waitAsync (Node 16+; not in this project's TypeScript lib yet). */
interface WaitAsync {
  waitAsync(typed: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> };
}
const atomics = Atomics as unknown as WaitAsync;

/** Where `length` bytes fit in the ring after the queued jobs, or null when it is full. */
function ringOffset(queue: readonly LeafJob[], length: number, jobSlots: number): number | null {
  const oldest = queue[0];
  const newest = queue.at(-1);
  if (oldest === undefined || newest === undefined) return length <= RING_BYTES ? 0 : null;
  if (queue.length >= jobSlots) return null; // a slot still holds an unanswered job
  const head = oldest.offset;
  const tail = newest.offset + newest.reserved;
  if (tail > head) {
    if (length <= RING_BYTES - tail) return tail;
    return length <= head ? 0 : null;
  }
  return length <= head - tail ? tail : null;
}

/** Windows hashed on the workers and on this thread, for the benchmark's and the tests' account. */
export interface LeafHashCounts {
  onWorkers: number;
  onThisThread: number;
}

export class LeafHashPool {
  private readonly workers: LeafWorker[] = [];
  private busy = 0;
  readonly counts: LeafHashCounts = { onWorkers: 0, onThisThread: 0 };

  /** Armed when the last window is answered; ends the idle workers unless work came first. */
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly workerCount: number = Math.max(1, availableParallelism()),
    private readonly idleEndMs: number = IDLE_END_MS,
    /** Jobs each worker's table holds (MAX_JOBS; fewer in tests, to fill it). */
    private readonly jobSlots: number = MAX_JOBS,
  ) {}

  /**
   * The leaves of `bytes` (chunks of `chunkBytes` from its first byte). `bytes` is copied or
   * hashed before this returns, so the caller may overwrite it at once.
   */
  leaves(bytes: Uint8Array, chunkBytes: number): Promise<string[]> {
    const leafCount = Math.ceil(bytes.byteLength / chunkBytes);
    const reserved = Math.max(bytes.byteLength, leafCount * DIGEST_BYTES);
    const placed = bytes.byteLength === 0 ? null : this.place(reserved);
    if (placed === null) {
      this.counts.onThisThread += 1;
      return Promise.resolve(leavesOf(bytes, chunkBytes));
    }
    this.counts.onWorkers += 1;
    const { worker, offset } = placed;
    worker.memory.set(bytes, offset);
    if (this.busy++ === 0) {
      this.disarmIdleEnd();
      for (const each of this.workers) each.worker.ref();
    }
    const done = new Promise<string[]>((resolve, reject) => {
      worker.queue.push({ offset, reserved, leafCount, resolve, reject });
    });
    worker.queuedBytes += reserved;
    const slot = (worker.posted % this.jobSlots) * 3;
    worker.jobs[slot] = offset;
    worker.jobs[slot + 1] = bytes.byteLength;
    worker.jobs[slot + 2] = chunkBytes;
    worker.posted += 1;
    Atomics.store(worker.control, POSTED, worker.posted);
    Atomics.notify(worker.control, POSTED);
    this.watch(worker);
    return done;
  }

  /**
   * Takes back what the workers have answered, freeing their rings (a caller that reads window
   * after window calls it after each). Answers are also taken back when this thread places a
   * window and when Atomics.waitAsync wakes it, so nothing waits on this call.
   */
  takeAnswers(): void {
    for (const worker of this.workers) this.take(worker);
  }

  /** Workers running now. */
  get runningWorkers(): number {
    return this.workers.length;
  }

  /**
   * Ends the workers that hold no window (a worker with one keeps hashing it): each holds its
   * ring and its own V8 heap, which a caller done comparing for a while (the gate, once a case is
   * judged and before it signs) need not carry. The next window starts a worker again.
   */
  endIdleWorkers(): void {
    this.disarmIdleEnd();
    for (const entry of this.workers) this.take(entry);
    for (const entry of this.workers.filter((each) => each.queue.length === 0)) {
      this.workers.splice(this.workers.indexOf(entry), 1);
      this.stop(entry);
    }
  }

  /** Everything answered: the workers end after idleEndMs unless a window comes first. */
  private armIdleEnd(): void {
    this.disarmIdleEnd();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.busy === 0) this.endIdleWorkers();
    }, this.idleEndMs);
    this.idleTimer.unref(); // never what keeps a process alive
  }

  private disarmIdleEnd(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** Resolves the jobs the worker has finished, in order, reading their leaves from its ring. */
  private take(worker: LeafWorker): void {
    const done = Atomics.load(worker.control, DONE);
    if (done === worker.taken) return;
    const jobs: { job: LeafJob; leaves: string[] }[] = [];
    while (worker.taken < done) {
      const job = worker.queue.shift();
      if (job === undefined) break;
      worker.taken += 1;
      worker.queuedBytes -= job.reserved;
      const leaves: string[] = [];
      for (let i = 0; i < job.leafCount; i++) {
        const at = job.offset + i * DIGEST_BYTES;
        leaves.push(worker.memory.toString('hex', at, at + DIGEST_BYTES));
      }
      jobs.push({ job, leaves });
    }
    this.busy -= jobs.length;
    if (jobs.length > 0 && this.busy === 0) {
      for (const each of this.workers) each.worker.unref();
      this.armIdleEnd();
    }
    for (const { job, leaves } of jobs) job.resolve(leaves);
  }

  /** Wakes this thread (Atomics.waitAsync) when the worker finishes a job while it waits on nothing else. */
  private watch(worker: LeafWorker): void {
    if (worker.watching) return;
    const waited = atomics.waitAsync(worker.control, DONE, worker.taken);
    if (!waited.async) {
      // Already answered: take it back on the next turn, then watch again if work is left.
      worker.watching = true;
      setImmediate(() => this.woken(worker));
      return;
    }
    worker.watching = true;
    void waited.value.then(() => this.woken(worker));
  }

  private woken(worker: LeafWorker): void {
    worker.watching = false;
    if (!this.workers.includes(worker)) return;
    this.take(worker);
    if (worker.queue.length > 0) this.watch(worker);
  }

  /** The least loaded worker with room for `length` bytes (a new one while fewer than the cores run), or null. */
  private place(length: number): { worker: LeafWorker; offset: number } | null {
    for (const worker of this.workers) this.take(worker);
    if (this.workers.length < this.workerCount && this.workers.every((each) => each.queue.length > 0)) {
      const started = this.startWorker();
      if (started !== null) return { worker: started, offset: 0 };
    }
    let best: { worker: LeafWorker; offset: number } | null = null;
    for (const worker of this.workers) {
      if (best !== null && worker.queuedBytes >= best.worker.queuedBytes) continue;
      const offset = ringOffset(worker.queue, length, this.jobSlots);
      if (offset !== null) best = { worker, offset };
    }
    return best;
  }

  private startWorker(): LeafWorker | null {
    let memory: SharedArrayBuffer;
    let control: SharedArrayBuffer;
    let jobs: SharedArrayBuffer;
    try {
      memory = new SharedArrayBuffer(RING_BYTES);
      control = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
      jobs = new SharedArrayBuffer(3 * this.jobSlots * Int32Array.BYTES_PER_ELEMENT);
    } catch {
      return null; // no shared memory here: this thread hashes
    }
    const worker = startWorker(WORKER_SOURCE, { eval: true, workerData: { memory, control, jobs, maxJobs: this.jobSlots } });
    worker.unref();
    const entry: LeafWorker = {
      worker,
      memory: Buffer.from(memory),
      control: new Int32Array(control),
      jobs: new Int32Array(jobs),
      queue: [],
      posted: 0,
      taken: 0,
      queuedBytes: 0,
      watching: false,
    };
    worker.on('error', (error) => this.fail(entry, error));
    worker.on('exit', () => this.fail(entry, new Error('the leaf hashing worker stopped')));
    this.workers.push(entry);
    return entry;
  }

  /** Ends a worker's loop (it sleeps on POSTED) and the worker. */
  private stop(entry: LeafWorker): void {
    Atomics.store(entry.control, STOP, 1);
    Atomics.notify(entry.control, POSTED);
    void entry.worker.terminate();
  }

  /** A worker that failed: its windows' hashes are refused (their leaves are then read again), and it is dropped. */
  private fail(entry: LeafWorker, error: Error): void {
    const at = this.workers.indexOf(entry);
    if (at === -1) return;
    this.workers.splice(at, 1);
    for (const job of entry.queue) {
      job.reject(error);
      if (--this.busy === 0) {
        for (const each of this.workers) each.worker.unref();
        this.armIdleEnd();
      }
    }
    entry.queue.length = 0;
    this.stop(entry);
  }
}

let shared: LeafHashPool | null = null;

/** The process's pool (workers started on first use, unref'd while idle). */
export function leafHashPool(): LeafHashPool {
  shared ??= new LeafHashPool();
  return shared;
}

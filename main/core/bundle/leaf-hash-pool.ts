// Hashes tree-sha256 leaves (tree-digest.ts: sha256(0x00 || chunk)) of bytes this thread already
// holds — a window the comparison has just read — on worker threads, so the bytes compared are
// the bytes hashed and no file is read twice. Each worker owns a few slots of shared memory: the
// window is copied into a free slot (a memcpy, far cheaper than its sha256) and the worker hashes
// it there while this thread compares. When every slot is busy this thread hashes the window
// itself: the work moves to whichever side has a core free and nothing waits.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../tool/heap-bounds.ts';
import { z } from 'zod';
import { leavesOf } from './tree-digest.ts';

/**
 * Shared memory per worker, used as a ring: windows are copied in one after another and freed in
 * the order the worker hashes them. Two of the comparison's largest windows (8 MiB) fit, or many
 * small ones (a run of small tensors queues up instead of being hashed here).
 */
export const RING_BYTES = 16 * 1024 * 1024;

/**
 * Windows queued for a busy worker are sent together once this many bytes wait (or when it
 * answers): a run of small tensors costs a message per batch, not per tensor.
 */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes handed over between two event-loop turns of a caller that reads synchronously (turn()). */
const TURN_BYTES = 4 * 1024 * 1024;
/**
 * Workers idle this long are ended (endIdleWorkers): the app compares a run, then the engineer
 * reads its rows for minutes; each worker's ring and V8 heap (16 MiB and ~10 MB) would otherwise
 * stay until the app quits. Long enough that a run of comparisons keeps its workers.
 */
export const IDLE_END_MS = 30_000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const memory = new Uint8Array(workerData.memory);
const LEAF = Buffer.from([0]);
parentPort.on('message', (batch) => {
  const answers = batch.jobs.map((job) => {
    const leaves = [];
    for (let at = 0; at < job.length; at += job.chunkBytes) {
      const end = Math.min(at + job.chunkBytes, job.length);
      leaves.push(createHash('sha256').update(LEAF).update(memory.subarray(job.offset + at, job.offset + end)).digest('hex'));
    }
    return leaves;
  });
  parentPort.postMessage({ id: batch.id, leaves: answers });
});
`;

const AnswerSchema = z.object({ id: z.number(), leaves: z.array(z.array(z.string())) });

interface LeafJob {
  readonly offset: number;
  readonly length: number;
  readonly chunkBytes: number;
  readonly resolve: (leaves: string[]) => void;
  readonly reject: (error: Error) => void;
}

interface LeafWorker {
  readonly worker: Worker;
  readonly memory: Uint8Array;
  /** Every job whose bytes are in the ring, oldest first: the sent batches' (answered in order), then the unsent. */
  readonly queue: LeafJob[];
  /** Batches sent and not answered, oldest first: their ids and job counts. */
  readonly sent: { id: number; jobs: number }[];
  /** Jobs not sent yet (the tail of `queue`), and their bytes. */
  unsent: number;
  unsentBytes: number;
  /** A send is queued for when this thread next yields. */
  flushQueued: boolean;
  queuedBytes: number;
}

/** Where `length` bytes fit in the ring after the queued jobs, or null when it is full. */
function ringOffset(queue: readonly LeafJob[], length: number): number | null {
  const oldest = queue[0];
  const newest = queue.at(-1);
  if (oldest === undefined || newest === undefined) return length <= RING_BYTES ? 0 : null;
  const head = oldest.offset;
  const tail = newest.offset + newest.length;
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
  /** Messages sent to the workers (a batch of windows each). */
  batches: number;
}

export class LeafHashPool {
  private readonly workers: LeafWorker[] = [];
  private nextId = 0;
  private sinceTurn = 0;
  private busy = 0;
  readonly counts: LeafHashCounts = { onWorkers: 0, onThisThread: 0, batches: 0 };

  /** Armed when the last window is answered; ends the idle workers unless work came first. */
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly workerCount: number = Math.max(1, availableParallelism()),
    private readonly idleEndMs: number = IDLE_END_MS,
  ) {}

  /**
   * The leaves of `bytes` (chunks of `chunkBytes` from its first byte). `bytes` is copied or
   * hashed before this returns, so the caller may overwrite it at once.
   */
  leaves(bytes: Uint8Array, chunkBytes: number): Promise<string[]> {
    const placed = this.place(bytes.byteLength);
    if (placed === null) {
      this.counts.onThisThread += 1;
      return Promise.resolve(leavesOf(bytes, chunkBytes));
    }
    this.counts.onWorkers += 1;
    this.sinceTurn += bytes.byteLength;
    const { worker, offset } = placed;
    worker.memory.set(bytes, offset);
    if (this.busy++ === 0) {
      this.disarmIdleEnd();
      for (const each of this.workers) each.worker.ref();
    }
    const done = new Promise<string[]>((resolve, reject) => {
      worker.queue.push({ offset, length: bytes.byteLength, chunkBytes, resolve, reject });
    });
    worker.queuedBytes += bytes.byteLength;
    worker.unsent += 1;
    worker.unsentBytes += bytes.byteLength;
    // Sent in batches: when one fills up, or when this thread next yields (turn(), or any await
    // that lets the event loop run), or when the worker answers: fewer messages, fewer wake-ups.
    if (worker.unsentBytes >= BATCH_BYTES) this.send(worker);
    else if (!worker.flushQueued) {
      worker.flushQueued = true;
      setImmediate(() => {
        worker.flushQueued = false;
        this.send(worker);
      });
    }
    return done;
  }

  /**
   * Resolves after this thread let the workers' answers in (an event-loop turn) when enough was
   * handed over since the last: a caller that reads synchronously calls it after each window, so
   * the ring is freed as the workers finish instead of filling up and hashing here.
   */
  async turn(): Promise<void> {
    if (this.sinceTurn < TURN_BYTES) return;
    this.sinceTurn = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
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
    for (const entry of this.workers.filter((each) => each.queue.length === 0)) {
      this.workers.splice(this.workers.indexOf(entry), 1);
      void entry.worker.terminate();
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

  /** Sends the worker its unsent jobs as one batch. */
  private send(worker: LeafWorker): void {
    if (worker.unsent === 0) return;
    const jobs = worker.queue.slice(worker.queue.length - worker.unsent);
    const id = this.nextId++;
    this.counts.batches += 1;
    worker.sent.push({ id, jobs: jobs.length });
    worker.unsent = 0;
    worker.unsentBytes = 0;
    worker.worker.postMessage({ id, jobs: jobs.map((job) => ({ offset: job.offset, length: job.length, chunkBytes: job.chunkBytes })) });
  }

  /** The least loaded worker with room for `length` bytes (a new one while fewer than the cores run), or null. */
  private place(length: number): { worker: LeafWorker; offset: number } | null {
    if (this.workers.length < this.workerCount && this.workers.every((each) => each.queue.length > 0)) {
      const started = this.startWorker();
      if (started !== null) return { worker: started, offset: 0 };
    }
    let best: { worker: LeafWorker; offset: number } | null = null;
    for (const worker of this.workers) {
      if (best !== null && worker.queuedBytes >= best.worker.queuedBytes) continue;
      const offset = ringOffset(worker.queue, length);
      if (offset !== null) best = { worker, offset };
    }
    return best;
  }

  private startWorker(): LeafWorker | null {
    let memory: SharedArrayBuffer;
    try {
      memory = new SharedArrayBuffer(RING_BYTES);
    } catch {
      return null; // no shared memory here: this thread hashes
    }
    const worker = startWorker(WORKER_SOURCE, { eval: true, workerData: { memory } });
    worker.unref();
    const entry: LeafWorker = { worker, memory: new Uint8Array(memory), queue: [], sent: [], unsent: 0, unsentBytes: 0, flushQueued: false, queuedBytes: 0 };
    worker.on('message', (message: unknown) => {
      const parsed = AnswerSchema.safeParse(message);
      const batch = entry.sent[0];
      if (!parsed.success || batch === undefined || batch.id !== parsed.data.id || parsed.data.leaves.length !== batch.jobs) {
        this.fail(entry, new Error('the leaf hashing worker answered with an unexpected message'));
        return;
      }
      entry.sent.shift();
      const jobs = entry.queue.splice(0, batch.jobs);
      for (const job of jobs) entry.queuedBytes -= job.length;
      this.send(entry);
      this.busy -= jobs.length;
      if (this.busy === 0) {
        for (const each of this.workers) each.worker.unref();
        this.armIdleEnd();
      }
      jobs.forEach((job, j) => job.resolve(parsed.data.leaves[j] as string[]));
    });
    worker.on('error', (error) => this.fail(entry, error));
    worker.on('exit', () => this.fail(entry, new Error('the leaf hashing worker stopped')));
    this.workers.push(entry);
    return entry;
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
    void entry.worker.terminate();
  }
}

let shared: LeafHashPool | null = null;

/** The process's pool (workers started on first use, unref'd while idle). */
export function leafHashPool(): LeafHashPool {
  shared ??= new LeafHashPool();
  return shared;
}

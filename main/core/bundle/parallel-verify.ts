// Hashes bundle files on worker threads, several files at once (one per core), each read once:
// the file's sha256, every tensor's sha256 and every chunk digest the manifest states are all
// computed from the same buffer. The main thread only judges the results, so verifying a bundle
// (or two, the gate's reference and native) runs at the speed of the disk and the cores rather
// than of one thread. The worker is a small self-contained script (evaluated, not a file), so it
// runs the same from the TypeScript sources, the esbuild bundle and the Electron app.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../tool/heap-bounds.ts';
import { z } from 'zod';
import type { PinEvidence } from './file-pins.ts';

/** A byte span of the file whose sha256 (and, optionally, per-chunk sha256) is wanted. */
export interface HashSpan {
  readonly begin: number;
  readonly end: number;
  /** Also hash every `chunkBytes` of the span separately; null: no chunk digests. */
  readonly chunkBytes: number | null;
}

export interface HashJob {
  readonly path: string;
  readonly spans: readonly HashSpan[];
  /**
   * Read only bytes [begin, end) (the spans lie inside it): one part of a large file whose
   * tensors are hashed by several workers at once; the outcome's sha256 and bytes are then the
   * range's. Absent: the whole file.
   */
  readonly range?: { readonly begin: number; readonly end: number };
  /**
   * A file at least `settleMinBytes` long whose ctime is less than `settleMs` old is hashed only
   * once it is that old, so its pin (file-pins.ts) can be trusted and it need not be hashed
   * again: waiting a fraction of a second is cheaper than a second read. 0: never wait.
   */
  readonly settleMs?: number;
  readonly settleMinBytes?: number;
  /**
   * Tree mode (tree-digest.ts): only the spans' chunks are hashed, each as a leaf
   * (sha256(0x00 || chunk)); no whole-file or whole-span sha256 (their sha256 come back empty),
   * so every byte is hashed once.
   */
  readonly tree?: boolean;
}

export interface HashedSpan {
  readonly sha256: string;
  readonly chunks: readonly string[];
}

export type HashOutcome =
  | {
      readonly ok: true;
      readonly sha256: string;
      readonly bytes: number;
      /** The file's size when it was hashed (a part reads only its range of it). */
      readonly size?: number;
      readonly spans: readonly HashedSpan[];
      readonly pin: PinEvidence;
    }
  | { readonly ok: false; readonly problem: 'changed' | 'not_regular' | 'unreadable'; readonly reason: string };

const HashOutcomeSchema = z.union([
  z.object({
    ok: z.literal(true),
    sha256: z.string(),
    bytes: z.number(),
    size: z.number().optional(),
    spans: z.array(z.object({ sha256: z.string(), chunks: z.array(z.string()) })),
    pin: z.object({ identity: z.string(), ctimeNs: z.string(), statAtMs: z.number(), fsType: z.number() }),
  }),
  z.object({ ok: z.literal(false), problem: z.enum(['changed', 'not_regular', 'unreadable']), reason: z.string() }),
]);

/** Read size of the workers: large enough for the disk, small enough to keep each worker's memory flat. */
const READ_BYTES = 4 * 1024 * 1024;

// The worker: receives jobs one at a time, answers each with a HashOutcome. It opens the file
// non-blocking and refuses anything but a regular file (a FIFO swapped in would block a read
// forever), and reads up to the size the file had when opened. The file's identity (device,
// inode, size, mtime, ctime) is read before and after the hash: a difference means it was
// written meanwhile ('changed'); equal, it is the pin evidence (file-pins.ts) of the bytes hashed.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const buffer = Buffer.allocUnsafe(${READ_BYTES});
const LEAF = Buffer.from([0]);
const identity = (s) => s.dev + ':' + s.ino + ':' + s.size + ':' + s.mtimeNs + ':' + s.ctimeNs;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
function fsTypeOf(path) {
  try { return fs.statfsSync(path).type; } catch { return 0; }
}
function hashFile(job) {
  let fd;
  try {
    fd = fs.openSync(job.path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (error) {
    return { ok: false, problem: 'unreadable', reason: 'cannot be opened (' + error.message + ')' };
  }
  try {
    let statAtMs = Date.now();
    let info = fs.fstatSync(fd, { bigint: true });
    if (!info.isFile()) return { ok: false, problem: 'not_regular', reason: 'is not a regular file' };
    const settleMs = job.settleMs || 0;
    if (settleMs > 0 && info.size >= BigInt(job.settleMinBytes || 0)) {
      const wait = Number(info.ctimeNs / 1000000n) + settleMs + 1 - statAtMs;
      if (wait > 0 && wait <= settleMs + 1) {
        Atomics.wait(sleeper, 0, 0, wait);
        statAtMs = Date.now();
        info = fs.fstatSync(fd, { bigint: true });
      }
    }
    const size = Number(info.size);
    const begin = job.range ? job.range.begin : 0;
    const end = job.range ? job.range.end : size;
    if (end > size) return { ok: false, problem: 'changed', reason: 'shrank before it was hashed (' + size + ' bytes, ' + end + ' expected)' };
    const tree = job.tree === true;
    const newChunk = () => (tree ? createHash('sha256').update(LEAF) : createHash('sha256'));
    const file = tree ? null : createHash('sha256');
    const spans = job.spans.map((s) => ({ s, hash: tree ? null : createHash('sha256'), chunk: s.chunkBytes === null ? null : newChunk(), chunkEnd: s.chunkBytes === null ? 0 : Math.min(s.begin + s.chunkBytes, s.end), chunks: [] }));
    let at = begin;
    while (at < end) {
      const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, end - at), at);
      if (n === 0) return { ok: false, problem: 'changed', reason: 'shrank while being hashed (' + at + ' of ' + end + ' bytes)' };
      const piece = buffer.subarray(0, n);
      if (file !== null) file.update(piece);
      const pieceEnd = at + n;
      for (const span of spans) {
        let from = Math.max(span.s.begin, at);
        const to = Math.min(span.s.end, pieceEnd);
        if (from >= to) continue;
        if (span.hash !== null) span.hash.update(piece.subarray(from - at, to - at));
        if (span.chunk === null) continue;
        while (from < to) {
          const upto = Math.min(to, span.chunkEnd);
          span.chunk.update(piece.subarray(from - at, upto - at));
          from = upto;
          if (from === span.chunkEnd) {
            span.chunks.push(span.chunk.digest('hex'));
            span.chunk = newChunk();
            span.chunkEnd = Math.min(span.chunkEnd + span.s.chunkBytes, span.s.end);
          }
        }
      }
      at = pieceEnd;
    }
    const after = fs.fstatSync(fd, { bigint: true });
    if (identity(after) !== identity(info)) return { ok: false, problem: 'changed', reason: 'was written to while being hashed (its size, modification or change time moved)' };
    const pin = { identity: identity(info), ctimeNs: String(info.ctimeNs), statAtMs, fsType: fsTypeOf(job.path) };
    return { ok: true, sha256: file === null ? '' : file.digest('hex'), bytes: at - begin, size, spans: spans.map((span) => ({ sha256: span.hash === null ? '' : span.hash.digest('hex'), chunks: span.chunks })), pin };
  } catch (error) {
    return { ok: false, problem: 'unreadable', reason: 'cannot be read (' + error.message + ')' };
  } finally {
    fs.closeSync(fd);
  }
}
parentPort.on('message', (job) => parentPort.postMessage(hashFile(job)));
`;

/** Workers used at most (one per core; the main thread mostly waits meanwhile). */
export const hashWorkerLimit = (): number => Math.max(1, availableParallelism());

// Idle workers are kept (unref'd: they never keep the process alive) and reused, so opening
// several bundles in a row pays no thread start-up; a worker that failed is dropped. One idle for
// IDLE_MS is ended: each holds its own V8 heap and read buffer (about 12 MB of resident memory),
// which a long gate would otherwise carry through its whole run after the evidence is verified.
const IDLE_MS = 2000;
const idle: Worker[] = [];
const idleTimers = new Map<Worker, NodeJS.Timeout>();

function takeWorker(): Worker {
  const worker = idle.pop() ?? startWorker(WORKER_SOURCE, { eval: true });
  clearTimeout(idleTimers.get(worker));
  idleTimers.delete(worker);
  worker.ref();
  return worker;
}

function returnWorker(worker: Worker): void {
  worker.removeAllListeners('message');
  worker.removeAllListeners('error');
  worker.unref();
  if (idle.length >= hashWorkerLimit()) {
    void worker.terminate();
    return;
  }
  idle.push(worker);
  const timer = setTimeout(() => {
    idleTimers.delete(worker);
    const at = idle.indexOf(worker);
    if (at !== -1) idle.splice(at, 1);
    void worker.terminate();
  }, IDLE_MS);
  timer.unref();
  idleTimers.set(worker, timer);
}

/**
 * Hashes every job's file on worker threads, at most `workers` files at once, and returns the
 * outcomes in the jobs' order. Stops handing out jobs once `stopAfter` says an outcome settles
 * the call (the caller's first failure), so a bad bundle is refused without hashing the rest.
 */
export async function hashFilesInParallel(
  jobs: readonly HashJob[],
  options: { workers?: number; stopAfter?: (outcome: HashOutcome, index: number) => boolean } = {},
): Promise<(HashOutcome | null)[]> {
  const results: (HashOutcome | null)[] = jobs.map(() => null);
  if (jobs.length === 0) return results;
  const count = Math.min(options.workers ?? hashWorkerLimit(), jobs.length);
  let next = 0;
  let stopped = false;
  const runWorker = (): Promise<void> =>
    new Promise<void>((resolvePool, rejectPool) => {
      const worker = takeWorker();
      let current = -1;
      const feed = (): void => {
        if (stopped || next >= jobs.length) {
          returnWorker(worker);
          resolvePool();
          return;
        }
        current = next++;
        const job = jobs[current] as HashJob;
        worker.postMessage({
          path: job.path,
          spans: job.spans.map((span) => ({ ...span })),
          range: job.range === undefined ? null : { ...job.range },
          settleMs: job.settleMs ?? 0,
          settleMinBytes: job.settleMinBytes ?? 0,
          tree: job.tree === true,
        });
      };
      worker.on('message', (message: unknown) => {
        const parsed = HashOutcomeSchema.safeParse(message);
        if (!parsed.success) {
          stopped = true;
          void worker.terminate();
          rejectPool(new Error(`the hashing worker answered with an unexpected message for ${jobs[current]?.path ?? '?'}`));
          return;
        }
        results[current] = parsed.data as HashOutcome;
        if (options.stopAfter?.(parsed.data as HashOutcome, current) === true) stopped = true;
        feed();
      });
      worker.on('error', (error) => {
        stopped = true;
        void worker.terminate();
        rejectPool(error);
      });
      feed();
    });
  await Promise.all(Array.from({ length: count }, runWorker));
  return results;
}

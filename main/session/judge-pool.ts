// The session's judging workers: judges slices of a run's passes on worker threads
// (judge-worker.ts), several slices at once (one worker per core), and hands each slice's verdicts
// to the session in pass order as soon as it and every slice before it are judged. The thread
// that serves the app only receives verdicts, so opening or stepping a large run never stalls
// it, and rows appear as they are judged.
//
// A worker that fails (a bundle it cannot open, an error judgeCase does not turn into a verdict)
// or dies (out of memory, killed) fails the job with a message saying so; the session reports it,
// and the next job starts a fresh worker.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { Contract } from '../core/bundle/manifest-schema.ts';
import type { AudioStreamJudgement } from '../core/gate/gate-types.ts';
import { packageRoot } from '../core/tool/tool-info.ts';
import { BundleError, type BundleErrorCode } from '../core/bundle/errors.ts';
import type { BundleManifest, PassEntry } from '../core/bundle/manifest-schema.ts';
import type { SharedPin } from '../core/bundle/file-pins.ts';
import type { FinishedManifestRead } from '../core/bundle/capture-in-progress.ts';
import {
  parseFromWorker,
  parseManifestMessage,
  type BundlePlace,
  type FinishedSummary,
  type FromWorker,
  type JudgeJob,
  type PassSlice,
  type SessionVerdict,
  type ToWorker,
} from './judge-messages.ts';

export interface JudgePoolOptions {
  /** Workers at most (default: one per core but one, which is left to the serving thread; 1 to 4). */
  workers?: number;
  /** Heap limits of each worker (default Node's). */
  resourceLimits?: ResourceLimits;
}

/** One judged slice, handed over in pass order. */
export interface JudgedSlice extends PassSlice {
  verdicts: SessionVerdict[];
  contracts: Record<string, Contract>;
  /** The worker thread that judged it (never the session's own thread). */
  threadId: number;
}

export interface JudgeRequest {
  job: JudgeJob;
  /** Slices of passes, in execution order: each is one judgeCase call on a worker. */
  slices: readonly PassSlice[];
  onSlice: (slice: JudgedSlice) => void;
  /**
   * After the last slice: the verdicts whose audio streams are to be judged (the PCM rows of
   * every pass so far), or null for none (judge-audio-rows.ts picks them).
   */
  audioRows: () => SessionVerdict[] | null;
  /**
   * Before a slice is handed to a worker: resolves once its bundles' files are verified (an
   * opened run is verified pass by pass while its first passes are judged), with the pins of the
   * files it reads (file-pins.ts) for the worker to take, so bytes verified here are not hashed
   * again there. A rejection fails the job with that error (E_DIGEST naming the file and field).
   */
  ready?: (slice: PassSlice) => Promise<readonly SharedPin[]>;
  /**
   * A judged slice is handed over (onSlice) only once this resolves — its files verified — even
   * when `ready` let a worker judge it before they were (its tensors then hashed as read there):
   * no verdict reaches the session before its evidence is verified. A rejection fails the job.
   */
  verified?: (slice: PassSlice) => Promise<void>;
  /** Fails the job at once, with its error, when it rejects (the run's verification failed). */
  until?: Promise<unknown>;
}

/** The bundled worker script (dist/judge-worker.js under the package root). */
export function judgeWorkerPath(): string {
  const path = join(packageRoot(), 'dist', 'judge-worker.js');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`node scripts/build.mjs\` (or \`npm install\`) to build the judging worker`);
  return path;
}

export class JudgeFailure extends Error {
  override name = 'JudgeFailure';
}

export class JudgePool {
  private readonly limit: number;
  private readonly idle: Worker[] = [];
  private jobs = 0;
  private closed = false;

  constructor(private readonly options: JudgePoolOptions = {}) {
    this.limit = Math.max(1, options.workers ?? Math.min(4, availableParallelism() - 1));
  }

  /** Judges every slice; resolves with the audio streams' judgements once the last slice is handed over. */
  judge(request: JudgeRequest): Promise<AudioStreamJudgement[]> {
    if (this.closed) return Promise.reject(new JudgeFailure('the session is closed'));
    const jobId = ++this.jobs;
    const { slices } = request;
    const workers: Worker[] = [];
    return new Promise<AudioStreamJudgement[]>((resolve, reject) => {
      let settled = false;
      let audioAsked = false;
      let nextSlice = 0;
      let nextDelivery = 0;
      /** Judged slices whose files are verified, waiting for the slices before them. */
      const done = new Map<number, JudgedSlice>();

      const finish = (outcome: { ok: true; judgements: AudioStreamJudgement[] } | { ok: false; message: string } | { ok: false; error: unknown }): void => {
        if (settled) return;
        settled = true;
        for (const worker of workers) {
          worker.removeAllListeners();
          // A worker of a failed job may be mid-slice or broken: it goes; the others are kept.
          if (outcome.ok) this.release(worker);
          else {
            worker.on('error', () => undefined);
            void worker.terminate();
          }
        }
        if (outcome.ok) resolve(outcome.judgements);
        else reject('error' in outcome ? outcome.error : new JudgeFailure(outcome.message));
      };

      /** Hands `worker` the next slice, if one is left. */
      const feed = (worker: Worker): void => {
        if (settled || nextSlice >= slices.length) return;
        const slice = nextSlice++;
        const { passes, range } = slices[slice] as PassSlice;
        const ready = request.ready?.(slices[slice] as PassSlice) ?? Promise.resolve([]);
        ready.then(
          (pins) => {
            if (!settled) worker.postMessage({ type: 'slice', jobId, slice, passes: [...passes], range, pins } satisfies ToWorker);
          },
          (error: unknown) => finish({ ok: false, error }),
        );
      };

      /** Every slice is handed over (so every slice is judged): the audio streams, on `worker`, once. */
      const judgeAudio = (worker: Worker): void => {
        if (settled || audioAsked || nextDelivery < slices.length) return;
        audioAsked = true;
        let rows: SessionVerdict[] | null;
        try {
          rows = request.audioRows();
        } catch (error) {
          finish({ ok: false, message: error instanceof Error ? error.message : String(error) });
          return;
        }
        if (rows === null) finish({ ok: true, judgements: [] });
        else worker.postMessage({ type: 'audio', jobId, verdicts: rows, judged: slices.flatMap((slice) => slice.passes) } satisfies ToWorker);
      };

      const deliver = (): void => {
        for (let slice = done.get(nextDelivery); slice !== undefined && !settled; slice = done.get(nextDelivery)) {
          done.delete(nextDelivery);
          nextDelivery += 1;
          try {
            request.onSlice(slice);
          } catch (error) {
            finish({ ok: false, message: error instanceof Error ? error.message : String(error) });
          }
        }
      };

      const onMessage = (worker: Worker, raw: unknown): void => {
        if (settled) return;
        const message: FromWorker | null = parseFromWorker(raw);
        if (message === null || message.jobId !== jobId) {
          finish({ ok: false, message: 'the judging worker answered with a message that is not one of its own' });
          return;
        }
        if (message.type === 'failed') {
          finish({ ok: false, message: message.message });
          return;
        }
        if (message.type === 'audio') {
          finish({ ok: true, judgements: message.judgements });
          return;
        }
        const judged: JudgedSlice = {
          ...(slices[message.slice] as PassSlice),
          verdicts: message.verdicts,
          contracts: message.contracts,
          threadId: message.threadId,
        };
        const verified = request.verified?.(judged) ?? null;
        if (verified === null) {
          done.set(message.slice, judged);
          deliver();
        } else {
          verified.then(
            () => {
              done.set(message.slice, judged);
              deliver();
              judgeAudio(worker);
            },
            (error: unknown) => finish({ ok: false, error }),
          );
        }
        if (settled) return;
        if (nextDelivery === slices.length) judgeAudio(worker);
        else feed(worker);
      };

      request.until?.catch((error: unknown) => finish({ ok: false, error }));
      const count = Math.max(1, Math.min(this.limit, slices.length));
      try {
        for (let i = 0; i < count; i++) workers.push(this.take());
      } catch (error) {
        finish({ ok: false, message: error instanceof Error ? error.message : String(error) });
        return;
      }
      for (const worker of workers) {
        worker.on('message', (raw: unknown) => onMessage(worker, raw));
        worker.on('error', (error: Error) => finish({ ok: false, message: `the judging worker failed: ${error.message}` }));
        worker.on('exit', (code: number) => finish({ ok: false, message: `the judging worker stopped (exit code ${code}) before it finished` }));
        worker.postMessage({ type: 'begin', jobId, job: request.job } satisfies ToWorker);
      }
      if (slices.length === 0) judgeAudio(workers[0] as Worker);
      else for (const worker of workers) feed(worker);
    });
  }

  /**
   * Has every worker open these bundles now, ahead of the job that will judge against them (the
   * reference when the session opens it; an opened run while the session verifies it), so a job
   * starts judging instead of parsing manifests. Best effort: a failure shows in the job.
   */
  prepare(places: readonly BundlePlace[]): void {
    if (this.closed || places.length === 0) return;
    const workers = this.idle.splice(0);
    try {
      while (workers.length < this.limit) workers.push(this.take());
    } catch {
      // No worker script: the job will say so.
    }
    for (const worker of workers) {
      worker.removeAllListeners();
      worker.postMessage({ type: 'open', places: places.map(({ kind, dir }) => ({ kind, dir })) } satisfies ToWorker);
      this.release(worker);
    }
  }

  /**
   * The manifest of the bundle at `place`, read and validated on a worker and received in parts
   * (judge-messages.ts ManifestPart). Rejects with the reader's BundleError when it is refused.
   */
  async manifest(place: BundlePlace): Promise<BundleManifest> {
    return (await this.manifestParts(place, (requestId) => ({ type: 'manifest', requestId, place: { kind: place.kind, dir: place.dir } }))).manifest;
  }

  /**
   * The finished manifest of this session's capture in `dir`, read and validated on a worker,
   * which grows its own view of the capture to the finished bundle and keeps it open for the
   * judging of the last pass (one parse of the manifest, off this thread): the head, every entry's
   * digest and the entries from `knownPasses` on (capture-in-progress.ts FinishedManifestSource).
   */
  async finishedCapture(dir: string, knownPasses: number): Promise<FinishedManifestRead> {
    const place: BundlePlace = { kind: 'capture', dir };
    const { manifest, finished } = await this.manifestParts(place, (requestId) => ({ type: 'finishedCapture', requestId, dir, knownPasses }));
    if (finished === null) throw new JudgeFailure(`the worker reading ${dir} sent the finished manifest without its digests`);
    const { passes, ...head } = manifest;
    return { head, passes, ...finished };
  }

  /** Sends `request` to a worker and receives the manifest it answers in parts (acknowledged one turn later). */
  private manifestParts(place: BundlePlace, request: (requestId: number) => ToWorker): Promise<{ manifest: BundleManifest; finished: FinishedSummary | null }> {
    if (this.closed) return Promise.reject(new JudgeFailure('the session is closed'));
    const requestId = ++this.jobs;
    let worker: Worker;
    try {
      worker = this.take();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      let head: Omit<BundleManifest, 'passes'> | null = null;
      let finished: FinishedSummary | null = null;
      const passes: PassEntry[] = [];
      const settle = (outcome: { ok: true; manifest: BundleManifest } | { ok: false; error: Error }, keep: boolean): void => {
        worker.removeAllListeners();
        if (keep) this.release(worker);
        else {
          worker.on('error', () => undefined);
          void worker.terminate();
        }
        if (outcome.ok) resolve({ manifest: outcome.manifest, finished });
        else reject(outcome.error);
      };
      worker.on('message', (raw: unknown) => {
        const message = parseManifestMessage(raw);
        if (message === null || message.requestId !== requestId) {
          settle({ ok: false, error: new JudgeFailure(`the worker reading ${place.dir} answered with a message that is not one of its own`) }, false);
          return;
        }
        if (message.type === 'manifestFailed') {
          const { bundle } = message;
          const error =
            bundle === null ? new JudgeFailure(message.message) : BundleError.fromIssues(bundle.file, bundle.issues, bundle.code as BundleErrorCode);
          settle({ ok: false, error }, true);
          return;
        }
        if (message.head !== null) head = message.head;
        if (message.finished !== undefined) finished = message.finished;
        if (message.pass !== null) passes.push({ ...message.pass, boundaries: message.boundaries });
        else {
          const into = passes.at(-1)?.boundaries;
          for (const boundary of message.boundaries) into?.push(boundary);
        }
        if (!message.last) {
          // Acknowledged after the event loop's next turn: Node hands this thread every message
          // that reaches the port while it drains it, so an acknowledgement sent at once let a
          // quick worker's parts arrive back to back, and the thread served nothing until the
          // manifest was in (up to half a second for a 50k-row run's, under load).
          setImmediate(() => worker.postMessage({ type: 'manifestAck', requestId } satisfies ToWorker));
          return;
        }
        if (head === null) settle({ ok: false, error: new JudgeFailure(`the worker reading ${place.dir} sent no manifest`) }, false);
        else settle({ ok: true, manifest: { ...head, passes } }, true);
      });
      worker.on('error', (error: Error) => settle({ ok: false, error: new JudgeFailure(`the worker reading ${place.dir} failed: ${error.message}`) }, false));
      worker.on('exit', (code: number) => settle({ ok: false, error: new JudgeFailure(`the worker reading ${place.dir} stopped (exit code ${code})`) }, false));
      worker.postMessage(request(requestId));
    });
  }

  /** Terminates the idle workers; a job in flight finishes on its own workers, then they go too. */
  async close(): Promise<void> {
    this.closed = true;
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((worker) => worker.terminate()));
  }

  private take(): Worker {
    const worker =
      this.idle.pop() ?? new Worker(judgeWorkerPath(), this.options.resourceLimits === undefined ? {} : { resourceLimits: this.options.resourceLimits });
    worker.removeAllListeners();
    worker.ref();
    return worker;
  }

  /** Idle workers are kept (unref'd: they never keep the process alive), with the bundles they opened. */
  private release(worker: Worker): void {
    worker.unref();
    if (this.closed || this.idle.length >= this.limit) {
      void worker.terminate();
      return;
    }
    // An idle worker that dies is dropped, never an unhandled 'error' that would take the app down.
    const drop = (): void => {
      const at = this.idle.indexOf(worker);
      if (at !== -1) this.idle.splice(at, 1);
    };
    worker.on('error', drop);
    worker.on('exit', drop);
    this.idle.push(worker);
  }
}

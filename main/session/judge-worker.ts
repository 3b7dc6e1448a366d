// A judging worker of the session (judge-pool.ts starts it): judges slices of a run's passes with
// the gate's own judgeCase, off the thread that serves the app, and posts each slice's verdicts
// as soon as they exist. Bundled by scripts/build.mjs into dist/judge-worker.js.
//
// It opens the bundles itself, from their folders, and keeps them open across jobs (a live run
// judges a pass per step against the same reference); the session may have it open a bundle ahead
// of the job that needs it ('open': the reference as soon as the session opens it, an opened run
// while the session verifies it). A bundle whose file list is not the one the session verified is
// opened again, and refused if it still differs (judge-messages.ts BundleRef).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, threadId } from 'node:worker_threads';
import { openBundle, openBundleFromManifest, readManifest, type TraceBundle } from '../core/bundle/bundle-reader.ts';
import { BundleError } from '../core/bundle/errors.ts';
import { adoptPins } from '../core/bundle/file-pins.ts';
import { CaptureInProgressReader } from '../core/bundle/capture-in-progress.ts';
import { JOURNAL_FILE_NAME } from '../core/bundle/capture-journal.ts';
import { judgeAudioStreams, type StreamCarry } from '../core/gate/audio-stream-verdicts.ts';
import { judgeCase } from '../core/gate/case-verdicts.ts';
import { withContracts } from '../core/compare/contracted-bundle.ts';
import { applyBoundaryMap } from '../core/compare/mapped-bundle.ts';
import { MANIFEST_FILE_NAME, type BundleManifest, type Contract } from '../core/bundle/manifest-schema.ts';
import {
  MANIFEST_PART_ROWS,
  MANIFEST_PARTS_IN_FLIGHT,
  sessionVerdict,
  type BundlePlace,
  type BundleRef,
  type FinishedSummary,
  type FromWorker,
  type JudgeJob,
  type ManifestFailed,
  type ManifestPart,
  type ToWorker,
} from './judge-messages.ts';

const port = parentPort;
if (port === null) throw new Error('judge-worker.ts runs as a worker thread (judge-pool.ts starts it)');

type Place = BundlePlace;
const keyOf = (ref: Place): string => `${ref.kind}\u0000${ref.dir}`;
/** Bundles kept open, with the stamp of the manifest (or journal) they were opened from. */
const open = new Map<string, { bundle: Promise<TraceBundle>; stamp: string }>();

/**
 * Identity, size and modification time of the file a bundle is opened from: a folder captured
 * again, or a manifest rewritten, since the bundle was kept open is opened afresh.
 */
function stampOf(place: Place): string {
  const stamp = (file: string): string | null => {
    try {
      const info = statSync(join(place.dir, file));
      return `${file}:${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
    } catch {
      return null;
    }
  };
  // A capture's view is read from its journal, and from its manifest.json once it is finished (the journal gone).
  const from = place.kind === 'capture' ? (stamp(JOURNAL_FILE_NAME) ?? stamp(MANIFEST_FILE_NAME)) : stamp(MANIFEST_FILE_NAME);
  return from ?? 'unreadable';
}

/** The bundle kept open for `place`, unless its manifest changed since; undefined when none is. */
function kept(place: Place): Promise<TraceBundle> | undefined {
  const entry = open.get(keyOf(place));
  if (entry === undefined) return undefined;
  if (entry.stamp === stampOf(place)) return entry.bundle;
  open.delete(keyOf(place));
  void entry.bundle.then((bundle) => bundle.close()).catch(() => undefined);
  return undefined;
}

function keep(place: Place, bundle: Promise<TraceBundle>, stamp: string): void {
  const key = keyOf(place);
  open.set(key, { bundle, stamp });
  // A failed open is not kept: the next job tries again.
  bundle.catch(() => {
    if (open.get(key)?.bundle === bundle) open.delete(key);
  });
}

function describeFile(file: { path: string; bytes: number; sha256: string } | undefined): string {
  return file === undefined ? 'nothing' : `${file.path} (${file.bytes} bytes, sha256 ${file.sha256})`;
}

/** Why `bundle` is not the bundle the session verified, or null when its file list is the same. */
function filesDiffer(bundle: TraceBundle, ref: BundleRef): string | null {
  const files = bundle.manifest.files;
  const count = Math.max(files.length, ref.files.length);
  for (let i = 0; i < count; i++) {
    const now = files[i];
    const then = ref.files[i];
    if (now?.path !== then?.path || now?.bytes !== then?.bytes || now?.sha256 !== then?.sha256) {
      return `${bundle.manifestPath}: files[${i}] is now ${describeFile(now)}, the session opened ${describeFile(then)}: the bundle changed since it was opened; open it again`;
    }
  }
  return null;
}

/**
 * The views of the captures in progress, by folder: a capture's view is opened again whenever its
 * journal grew, from the view before (capture-in-progress.ts), so a step's view costs what the
 * step sealed.
 */
const captures = new Map<string, CaptureInProgressReader>();

function opened(ref: Place): Promise<TraceBundle> {
  const current = kept(ref);
  if (current !== undefined) return current;
  const stamp = stampOf(ref);
  let bundle: Promise<TraceBundle>;
  if (ref.kind === 'capture') {
    const reader = captures.get(ref.dir) ?? new CaptureInProgressReader(ref.dir);
    captures.set(ref.dir, reader);
    bundle = reader.open();
  } else bundle = openBundle(ref.dir, { verify: 'none', headers: 'lazy' });
  keep(ref, bundle, stamp);
  return bundle;
}

async function forget(ref: Place): Promise<void> {
  const entry = open.get(keyOf(ref));
  open.delete(keyOf(ref));
  // Opened again, a capture is read again from its journal's first line.
  if (ref.kind === 'capture') captures.delete(ref.dir);
  await entry?.bundle.then((bundle) => bundle.close()).catch(() => undefined);
}

/** The bundle `ref` names, with the file list the session verified (opened again once if it differs). */
async function bundleOf(ref: BundleRef): Promise<TraceBundle> {
  // (A capture in progress grows by a pass per step: a view of an earlier step lists fewer files.)
  const bundle = await opened(ref);
  if (filesDiffer(bundle, ref) === null) return bundle;
  await forget(ref);
  const again = await opened(ref);
  const problem = filesDiffer(again, ref);
  if (problem !== null) throw new Error(problem);
  return again;
}

/** Closes the bundles the new job does not use (the previous step's view of a capture). */
async function keepOnly(job: JudgeJob): Promise<void> {
  const wanted = new Set([job.reference, job.oracle, job.native].flatMap((ref) => (ref === null ? [] : [keyOf(ref)])));
  for (const [key, entry] of [...open]) {
    if (wanted.has(key)) continue;
    open.delete(key);
    const [kind, dir] = key.split('\u0000');
    if (kind === 'capture' && dir !== undefined) captures.delete(dir);
    await entry.bundle.then((bundle) => bundle.close()).catch(() => undefined);
  }
}

/**
 * The manifest of `place` for the session, which opens the bundle with it (openBundleFromManifest):
 * read and validated here, so the serving thread never parses a manifest of tens of MB. A bundle
 * already open here gives its manifest; otherwise it is read, and `keepOpen` opens it from the same
 * manifest for the jobs to come — called once the manifest is sent: opening it reads every pass
 * file's header, which would hold up the parts the session waits for.
 * A capture in progress is read on from the view before whenever its journal grew (opened()).
 */
async function manifestOf(place: Place): Promise<{ manifest: BundleManifest; keepOpen: () => void }> {
  const none = (): void => undefined;
  const cached = kept(place);
  const bundle = cached === undefined ? null : await cached.catch(() => null);
  if (bundle !== null) return { manifest: bundle.manifest, keepOpen: none };
  // Read alone (its errors are the reader's, as the session's own read would give them)...
  const stamp = stampOf(place);
  if (place.kind === 'capture') return { manifest: (await opened(place)).manifest, keepOpen: none };
  const manifest = await readManifest(place.dir);
  // ...then kept open for the judging, from the same manifest.
  const keepOpen = (): void => {
    if (kept(place) === undefined)
      keep(place, openBundleFromManifest(place.dir, manifest, join(place.dir, MANIFEST_FILE_NAME), { verify: 'none', headers: 'lazy' }), stamp);
  };
  return { manifest, keepOpen };
}

/**
 * Parts of a manifest sent and not yet acknowledged, at most MANIFEST_PARTS_IN_FLIGHT: Node hands
 * a thread every message queued on its port in one turn, so a manifest of 100 parts sent at once
 * held the serving thread for the whole burst (over a second for a 50k-row run, under load).
 */
let partsInFlight = 0;
let onAck: (() => void) | null = null;

function acknowledged(): void {
  partsInFlight = Math.max(0, partsInFlight - 1);
  const resume = onAck;
  onAck = null;
  resume?.();
}

async function sendManifest(requestId: number, manifest: BundleManifest, finished?: FinishedSummary): Promise<void> {
  const { passes, ...head } = manifest;
  partsInFlight = 0;
  let part: ManifestPart = { type: 'manifestPart', requestId, head, pass: null, boundaries: [], last: false, ...(finished === undefined ? {} : { finished }) };
  const flush = async (): Promise<void> => {
    while (partsInFlight >= MANIFEST_PARTS_IN_FLIGHT) await new Promise<void>((resolve) => (onAck = resolve));
    partsInFlight += 1;
    port?.postMessage(part);
    part = { type: 'manifestPart', requestId, head: null, pass: null, boundaries: [], last: false };
  };
  for (const { boundaries, ...pass } of passes) {
    if (part.pass !== null || part.boundaries.length > 0) await flush();
    part.pass = pass;
    for (let at = 0; at < boundaries.length; at += MANIFEST_PART_ROWS) {
      if (at > 0) await flush();
      part.boundaries = boundaries.slice(at, at + MANIFEST_PART_ROWS);
    }
  }
  part.last = true;
  await flush();
  // The session acknowledges every part but the last.
  partsInFlight = 0;
}

function manifestFailure(requestId: number, error: unknown): ManifestFailed {
  const bundle =
    error instanceof BundleError
      ? { code: error.code, file: error.file, issues: error.issues.map(({ code, field, message }) => ({ code, field, message })) }
      : null;
  return { type: 'manifestFailed', requestId, bundle, message: error instanceof Error ? error.message : String(error) };
}

interface Current {
  jobId: number;
  job: JudgeJob;
  /** The job's bundles as the session sees them (judge-messages.ts JudgeJob.views), made once per job. */
  sides?: Promise<Sides>;
}

interface Sides {
  reference: TraceBundle;
  oracle: TraceBundle | null;
  native: TraceBundle | null;
}

/** The raw bundles under the job's views: the same contracts and map the session judges under. */
async function sidesOf(job: JudgeJob): Promise<Sides> {
  const [rawReference, rawOracle, rawNative] = await Promise.all([
    bundleOf(job.reference),
    job.oracle === null ? null : bundleOf(job.oracle),
    job.native === null ? null : bundleOf(job.native),
  ]);
  const reference = await withContracts(rawReference, job.views.reference);
  const oracle = rawOracle === null ? null : await withContracts(rawOracle, job.views.oracle);
  const native = rawNative === null || job.views.map === null ? rawNative : applyBoundaryMap(rawNative, job.views.map, reference).bundle;
  return { reference, oracle, native };
}
let current: Current | null = null;

/**
 * The audio streams as measured by the last stream judgement, for the next one of the same
 * reference and native run (a live run's next step measures only its new records:
 * audio-stream-verdicts.ts StreamCarry). Another run starts afresh.
 */
let streams: { key: string; carry: StreamCarry } | null = null;

function streamCarry(job: JudgeJob): StreamCarry {
  const key = [job.reference, job.native].map((ref) => (ref === null ? '' : keyOf(ref))).join('\u0001');
  if (streams?.key !== key) streams = { key, carry: new Map() };
  return streams.carry;
}

/** What a worker is asked to do (acknowledgements are handled as they arrive). */
type Work = Exclude<ToWorker, { type: 'manifestAck' }>;

async function handle(message: Work): Promise<FromWorker | null> {
  if (message.type === 'open') {
    // Ahead of a job: a failure here is the job's to report (or the session's own open's).
    await Promise.all(message.places.map((place) => opened(place).catch(() => undefined)));
    return null;
  }
  if (message.type === 'manifest') {
    try {
      const { manifest, keepOpen } = await manifestOf(message.place);
      await sendManifest(message.requestId, manifest);
      keepOpen();
    } catch (error) {
      port?.postMessage(manifestFailure(message.requestId, error));
    }
    return null;
  }
  if (message.type === 'finishedCapture') {
    try {
      // This worker's own view of the capture grows to the finished bundle (one parse of the
      // manifest, validated against the view's entries) and stays open for the last pass's judging.
      await opened({ kind: 'capture', dir: message.dir });
      const read = captures.get(message.dir)?.finishedRead(message.knownPasses) ?? null;
      if (read === null)
        throw new Error(`${join(message.dir, MANIFEST_FILE_NAME)}: the capture in ${message.dir} is not finished (its journal is still there)`);
      const { head, passes, ...finished } = read;
      await sendManifest(message.requestId, { ...head, passes: [...passes] }, finished);
    } catch (error) {
      port?.postMessage(manifestFailure(message.requestId, error));
    }
    return null;
  }
  if (message.type === 'begin') {
    current = { jobId: message.jobId, job: message.job };
    await keepOnly(message.job);
    return null;
  }
  if (current === null || current.jobId !== message.jobId) throw new Error(`job ${message.jobId} was never begun on this worker`);
  const { job } = current;
  current.sides ??= sidesOf(job);
  const { reference, oracle, native } = await current.sides;
  if (message.type === 'slice') {
    adoptPins(message.pins);
    const contracts: Record<string, Contract> = {};
    const judged = await judgeCase({
      caseId: job.caseId,
      reference,
      native,
      oracle,
      description: job.description,
      ledger: job.ledger,
      stop: job.stop,
      nativeUnreadable: job.nativeUnreadable,
      contracts,
      passes: message.passes,
      ...(message.range === null ? {} : { slotRange: message.range }),
      audioStreams: false,
    });
    return { type: 'slice', jobId: message.jobId, slice: message.slice, threadId, verdicts: judged.verdicts.map(sessionVerdict), contracts };
  }
  if (native === null || job.nativeUnreadable !== null) return { type: 'audio', jobId: message.jobId, judgements: [] };
  return { type: 'audio', jobId: message.jobId, judgements: await judgeAudioStreams(reference, native, message.verdicts, streamCarry(job)) };
}

// One message at a time, in order (the pool sends the next slice only after an answer anyway).
let queue: Promise<void> = Promise.resolve();
port.on('message', (message: ToWorker) => {
  // Acknowledgements release the manifest being sent (a handler in the queue): never queued.
  if (message.type === 'manifestAck') {
    acknowledged();
    return;
  }
  const work: Work = message;
  queue = queue.then(async () => {
    try {
      const answer = await handle(work);
      if (answer !== null) port.postMessage(answer);
    } catch (error) {
      if (work.type !== 'open' && work.type !== 'manifest' && work.type !== 'finishedCapture')
        port.postMessage({ type: 'failed', jobId: work.jobId, message: error instanceof Error ? error.message : String(error) } satisfies FromWorker);
    }
  });
});

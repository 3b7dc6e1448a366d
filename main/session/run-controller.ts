// The run of a session: starting a live run on the engine, stepping it one pass at a time and
// judging each pass as it is sealed, opening a captured run instead, and stopping either.
//
// After every pass the native side is re-opened: while the capture is being written, as a
// read-only view of its journal and sealed pass files (capture-in-progress.ts); once finished or
// recovered after a crash, as the bundle on disk. Only the new pass is judged (session-judge.ts),
// on a worker thread (judge-pool.ts); an opened run's rows are handed over slice by slice as
// they are judged, each slice an append the clients fetch while the rest is still being judged.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Isolation, PassResult } from '../engine-host/engine-host.ts';
import type { InspectorEvent } from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { BundleError } from '../core/bundle/errors.ts';
import { MANIFEST_FILE_NAME, type RunOutcome } from '../core/bundle/manifest-schema.ts';
import { confinedChild, safePathComponent } from '../core/bundle/path-confinement.ts';
import { alsoAwaiting, verifyInPassOrder } from '../core/bundle/verify-in-pass-order.ts';
import { createOutputFolder } from '../core/io/output-folder.ts';
import type { RunStop } from '../core/gate/case-verdicts.ts';
import type { Contract } from '../core/bundle/manifest-schema.ts';
import type { SessionVerdict } from './judge-messages.ts';
import type { BoundaryMap } from '../core/compare/boundary-map.ts';
import { applyBoundaryMap } from '../core/compare/mapped-bundle.ts';
import { LiveRun, type PassStep } from './live-capture.ts';
import type { RowsChange } from './rows-log.ts';
import { CALL_CODES, callError, type SessionErrorLog } from './session-errors.ts';
import type { BundleOpeners } from './bundle-openers.ts';
import { JudgeFailure, type JudgePool } from './judge-pool.ts';
import { catalogueFromReference, describeStop, judgePasses, type JudgeContext, type NativeSide } from './session-judge.ts';
import { hasDivergence } from './session-rows.ts';
import { emptyRun, type PassState, type RunRecord, type RunStatus } from './session-state.ts';
import { openCandidateRun, type OpenedEngine, type OpenedReference } from './session-sources.ts';

export interface RunSettings {
  isolation: Isolation;
  teacherForce: boolean;
  engineOptions: Readonly<Record<string, string>>;
  passTimeoutMs?: number;
}

export interface RunControllerHooks {
  workDir: string;
  errors: SessionErrorLog;
  emit(event: InspectorEvent): void;
  /**
   * Called whenever the rows change: 'append' when a step judged a pass after every judged pass
   * and no earlier row can have changed, 'full' otherwise (rows-log.ts).
   */
  rowsChanged(change: RowsChange): void;
  /** A native view is no longer current; it is closed once no reader uses it. */
  retire(bundle: TraceBundle): void;
  /** Judges passes off the session's thread. */
  pool: JudgePool;
  /** Opens the native side (bundle-openers.ts). */
  open: BundleOpeners;
  /** The run changed while an operation is still going on (a slice of an opened run was judged). */
  changed(): void;
}

/** A judgement that failed as a whole (a worker that died or could not open a bundle), as the call's error. */
function judgeFailed(error: unknown, what: string): unknown {
  return error instanceof JudgeFailure ? callError(CALL_CODES.bundle, `${what} could not be judged: ${error.message}`) : error;
}

const PASS_STATE: Readonly<Record<PassResult['status'], PassState>> = {
  ok: 'done',
  engine_error: 'failed',
  crashed: 'crashed',
  timeout: 'timeout',
  aborted: 'failed',
};

function runStatusOf(outcome: RunOutcome): RunStatus {
  // An aborted run was stopped between passes by the user: what it holds is complete.
  return outcome.status === 'aborted' ? 'completed' : outcome.status;
}

export class RunController {
  run: RunRecord = emptyRun();
  /** Contracts the verdicts refer to, by id (judgeCase fills it). */
  contracts: Record<string, Contract> = {};
  private runs = 0;

  constructor(private readonly hooks: RunControllerHooks) {}

  /** Stops whatever run there is (a live capture is sealed as aborted) and clears the rows. */
  async clear(reason: string): Promise<void> {
    const { live, native } = this.run;
    this.run = emptyRun();
    this.contracts = {};
    if (native !== null) this.hooks.retire(native);
    await live?.dispose(reason);
    this.hooks.rowsChanged('full');
  }

  /**
   * A fresh folder in the work folder for the next native bundle, named from the case id made
   * one safe path component and confined under the work folder (path-confinement.ts): a
   * bundle's case.id is untrusted and may not place a capture outside --work.
   */
  private async nextRunDir(caseId: string): Promise<string> {
    await createOutputFolder(this.hooks.workDir, 'the work folder');
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    for (;;) {
      this.runs += 1;
      const dir = await confinedChild(this.hooks.workDir, `${safePathComponent(caseId)}-${stamp}-${this.runs}`);
      if (!existsSync(dir)) return dir;
    }
  }

  /** Starts a live run (the previous run is cleared first) and runs its prefill. */
  async startLive(engine: OpenedEngine, reference: OpenedReference, settings: RunSettings): Promise<void> {
    // The new run is started before the old one is cleared: an engine that refuses an option or
    // an input leaves the previous run and its rows as they were.
    const outDir = await this.nextRunDir(reference.bundle.manifest.case.id);
    const live = await LiveRun.start({
      library: engine.info.library,
      reference: reference.bundle,
      outDir,
      isolation: settings.isolation,
      engineOptions: settings.engineOptions,
      teacherForce: settings.teacherForce,
      ...(settings.passTimeoutMs !== undefined ? { passTimeoutMs: settings.passTimeoutMs } : {}),
      onProgress: (progress) => this.hooks.emit({ type: 'progress', ...progress }),
    });
    await this.clear('a new run was started');
    this.run = { ...emptyRun(), source: 'live', live, nativeDir: outDir, status: 'running', message: `capturing into ${outDir}` };
    await this.step(engine, reference);
  }

  /**
   * Runs the next pass of the live run and judges it. Returns whether that pass brought a FAIL
   * or REVIEW_REQUIRED. A crash, hang or engine error ends the run (a SessionError names the pass
   * and the last boundary); the rows already judged stay.
   */
  async step(engine: OpenedEngine, reference: OpenedReference): Promise<{ diverged: boolean; ended: boolean }> {
    const live = this.run.live;
    if (live === null || live.nextPass === null) throw callError(CALL_CODES.state, 'there is no pass to run: the run is over; Reset or Prefill to start again');
    const step = await live.runNextPass();
    const { native, unreadable, kind } = await this.openNativeView(live, step);
    const stop = this.stopOf(step);
    const earlierVerdicts = (): SessionVerdict[] => [...this.run.verdicts.values()].flat();
    const side: NativeSide | null = native === null ? null : { bundle: native, kind };
    let verdicts: SessionVerdict[];
    try {
      const judged = await judgePasses(this.hooks.pool, this.judgeContext(reference, engine.description), side, [step.pass], stop, unreadable, earlierVerdicts);
      verdicts = judged.byPass.get(step.pass) ?? [];
    } catch (error) {
      // The pass ran and its capture is kept; the view opened for it is not current.
      if (native !== null && native !== this.run.native) this.hooks.retire(native);
      throw judgeFailed(error, `pass ${step.pass} (${step.kind})`);
    }

    const previous = this.run.native;
    // Rows of earlier passes read dtype and shape from the native side for boundaries the
    // reference lacks: a native view that appeared or vanished can change them (when there are any).
    const earlier = [...this.run.verdicts.keys()];
    const earlierUnchanged = earlier.length === 0 || (earlier.every((pass) => pass < step.pass) && (previous === null) === (native === null));
    this.run.native = native;
    if (previous !== null && previous !== native) this.hooks.retire(previous);
    this.run.verdicts.set(step.pass, verdicts);
    this.run.passStates.set(step.pass, step.result === null ? 'failed' : PASS_STATE[step.result.status]);
    if (step.result !== null) this.run.passesRun.push(step.pass);
    if (step.ended === null) {
      this.run.status = 'running';
      this.run.message = `pass ${step.pass} (${step.kind}) ran: ${live.passesRun} of ${reference.bundle.passes.length} passes`;
    } else {
      this.run.status = runStatusOf(step.ended);
      this.run.message = stop?.description ?? `the run completed: ${live.passesRun} passes captured into ${live.outDir}`;
      if (stop !== null) this.hooks.errors.add(`pass ${step.pass} (${step.kind})`, stop.description);
    }
    if (step.warning !== null) this.hooks.errors.add(`pass ${step.pass} (${step.kind})`, step.warning);
    if (unreadable !== null) this.hooks.errors.add(`pass ${step.pass} (${step.kind})`, `the native bundle cannot be read: ${unreadable}`);
    this.hooks.rowsChanged(earlierUnchanged ? 'append' : 'full');
    return { diverged: hasDivergence(verdicts), ended: step.ended !== null };
  }

  /** Where the run stopped, when this step ended it other than by completing. */
  private stopOf(step: PassStep): RunStop | null {
    if (step.ended === null || step.ended.status === 'completed') return null;
    const result = step.result;
    const lastBoundary = result !== null && result.status !== 'ok' ? result.lastBoundary : null;
    const detail =
      result === null
        ? step.ended.message
        : result.status === 'engine_error'
          ? `${result.code}: ${result.message}`
          : result.status === 'ok'
            ? ''
            : result.message;
    return { pass: step.pass, description: describeStop(step.ended.status, step.pass, step.kind, lastBoundary, detail) };
  }

  /** The native side after a step: the capture in progress, or the bundle finished / recovered on disk. */
  private async openNativeView(live: LiveRun, step: PassStep): Promise<{ native: TraceBundle | null; unreadable: string | null; kind: NativeSide['kind'] }> {
    try {
      if (live.capturing) return { native: await this.hooks.open.capture(live.outDir), unreadable: null, kind: 'capture' };
      if (!existsSync(join(live.outDir, MANIFEST_FILE_NAME))) {
        const why = step.warning ?? 'no manifest.json was written';
        return { native: null, unreadable: `${live.outDir}: ${why}`, kind: 'bundle' };
      }
      // This session's own capture, just finished (or recovered): opened from its manifest.json as
      // it grew from the view of the capture in progress (capture-in-progress.ts), its files not
      // hashed again nor their headers read again where their identity has not moved (the whole
      // run, before the last pass could be judged); every tensor's sha256 is still checked on
      // each read, as for the view of the capture in progress. The manifest (tens of MB for a long
      // run) is read on a judging worker, which keeps it open for the last pass's judging; this
      // thread receives the head and the entries its view lacks, and refuses a finished manifest
      // whose earlier entries are not the ones its view held and the rows were judged from.
      return { native: await this.hooks.open.capture(live.outDir), unreadable: null, kind: 'capture' };
    } catch (error) {
      if (error instanceof BundleError) return { native: null, unreadable: error.message, kind: 'bundle' };
      throw error;
    }
  }

  private judgeContext(
    reference: OpenedReference,
    description: OpenedEngine['description'],
    contracts: Record<string, Contract> = this.contracts,
  ): JudgeContext {
    return {
      caseId: reference.bundle.manifest.case.id,
      reference: reference.bundle,
      oracle: reference.oracle,
      referenceContracts: reference.contractSource,
      oracleContracts: reference.oracleContractSource,
      description,
      ledger: reference.ledger,
      contracts,
    };
  }

  /**
   * Opens a captured bundle (any kind) and judges every pass it holds against the reference,
   * through `map` when one is set (compare's applyBoundaryMap: renamed, reshaped, boundaries
   * declared unmapped taken out and reported). The engine's catalogue is used when the open
   * engine is the one that made the run (same library sha256) and no map renames its boundaries;
   * otherwise the reference's (session-judge.ts catalogueFromReference). The bundle is opened and
   * mapped before the current run is replaced, so a bad bundle or map file changes nothing; then
   * the rows of each judged slice are appended (and a snapshot sent) while later slices are still
   * being judged on the judging workers; a judgement that fails as a whole leaves no run open and
   * says why.
   */
  async openRun(dir: string, reference: OpenedReference, engine: OpenedEngine | null, map: BoundaryMap | null): Promise<void> {
    // Opened from its manifest (read and validated on a judging worker), its files not yet
    // hashed: they are verified below in pass order while the passes already verified are
    // judged; its paths, sizes and headers are checked meanwhile (bundle-opened-later.ts), and a
    // failure there fails the open as a digest failure does. (The other judging workers open the
    // run only now: asked before, the worker that reads the manifest opened the whole bundle,
    // every pass file's header read, before it sent the first part.)
    // The session's own check of every header starts once the first rows are handed over (or the
    // judging ended): each judging worker checks the header of every file it reads before reading
    // it, and 50 headers parsed here at the start competed with the first pass for the thread and
    // the cores. The run stands as opened only once they are all checked, as before.
    let startHeaderChecks: () => void = () => undefined;
    const headersMayStart = new Promise<void>((resolve) => {
      startHeaderChecks = resolve;
    });
    let opened: Promise<void> = Promise.resolve();
    const raw = await openCandidateRun(dir, reference, async (candidate) => {
      const later = await this.hooks.open.bundleLater(candidate, headersMayStart);
      opened = later.opened;
      return later.bundle;
    });
    this.hooks.pool.prepare([{ kind: 'bundle', dir: resolve(dir) }]);
    let mapped: ReturnType<typeof applyBoundaryMap> | null;
    try {
      mapped = map === null ? null : applyBoundaryMap(raw, map, reference.bundle);
    } catch (error) {
      await raw.close();
      throw error;
    }
    const native = mapped?.bundle ?? raw;
    const mapReport = mapped?.report ?? null;
    await this.clear('a captured run was opened');
    const { manifest } = raw;
    const madeBy = manifest.provenance.runtime['engine_library_sha256'];
    // An engine's own catalogue names its own boundaries: through a map they carry the reference's.
    const description = map === null && engine !== null && engine.info.sha256 === madeBy ? engine.description : catalogueFromReference(reference.bundle);
    const passes = native.passes.map((pass) => pass.index);
    const last = native.passes.at(-1);
    const outcome = manifest.run ?? { status: 'completed' as const, message: '', last_pass: last?.index ?? null, last_boundary: null };
    const failed = outcome.status !== 'completed' && outcome.status !== 'aborted' && last !== undefined;
    const stop: RunStop | null = failed
      ? { pass: last.index, description: describeStop(outcome.status, last.index, last.kind, outcome.last_boundary, outcome.message) }
      : null;
    // Every file of the run, hashed in pass order: a slice is judged once its passes' files are
    // verified, and a file that fails (E_DIGEST) fails the open and withdraws every row shown.
    const verification = alsoAwaiting(verifyInPassOrder(raw, passes), opened);
    const run: RunRecord = {
      ...emptyRun(),
      source: 'opened',
      nativeDir: native.dir,
      native,
      passesRun: passes,
      mapReport,
      status: 'running',
      message: '',
    };
    let judgedPasses = 0;
    // The rows shown while the open goes on are judged on verified files, but the run is not a
    // verified result until every file is: the message says which part is verified so far.
    const progress = (): string =>
      `verifying and judging ${native.dir}: ${judgedPasses} of ${passes.length} passes judged, ${verification.verified} of ${verification.total} files verified`;
    run.message = progress();
    this.run = run;
    for (const pass of passes) run.passStates.set(pass, 'pending');
    for (const warning of mapReport?.unusedEntries ?? []) this.hooks.errors.add('map file', warning);
    let judged: Awaited<ReturnType<typeof judgePasses>>;
    try {
      judged = await judgePasses(
        this.hooks.pool,
        this.judgeContext(reference, description),
        { bundle: native, kind: 'bundle', map, verification },
        passes,
        stop,
        null,
        [],
        (slice) => {
          startHeaderChecks();
          if (this.run !== run) return;
          // A part of a long pass adds to its rows; the pass is done with its last part.
          for (const verdict of slice.verdicts) {
            const list = run.verdicts.get(verdict.pass);
            if (list === undefined) run.verdicts.set(verdict.pass, [verdict]);
            else list.push(verdict);
          }
          if (slice.completes) {
            for (const pass of slice.passes) run.passStates.set(pass, 'done');
            judgedPasses += slice.passes.length;
          }
          run.message = progress();
          this.hooks.rowsChanged('append');
          this.hooks.changed();
        },
      );
      // Files no pass reads are verified too before the run stands as opened (and every header checked).
      startHeaderChecks();
      await verification.done;
    } catch (error) {
      verification.stop();
      if (this.run === run) await this.clear('opening the run failed');
      throw judgeFailed(error, `the run in ${native.dir}`);
    }
    if (this.run !== run) return;
    run.verdicts = judged.byPass;
    if (failed) {
      this.run.passStates.set(last.index, outcome.status === 'engine_error' ? 'failed' : outcome.status === 'timeout' ? 'timeout' : 'crashed');
      this.hooks.errors.add('open run', `${native.dir}: ${stop?.description ?? ''}`);
    }
    this.run.status = runStatusOf(outcome);
    this.run.message =
      stop?.description ??
      (outcome.status === 'aborted'
        ? `the run was aborted after ${passes.length} passes: ${outcome.message}`
        : `opened ${native.dir}: ${passes.length} passes, every file verified`);
    // The rows were appended slice by slice; only a broken audio stream bound changed one since.
    if (judged.revised) this.hooks.rowsChanged('full');
  }

  /** For the renderer's "run to ..." loops: whether a step is possible now. */
  get canStep(): boolean {
    return this.run.live !== null && this.run.live.nextPass !== null;
  }

  describeNoStep(): string {
    if (this.run.source === 'opened') return 'an opened run has no engine to step: Prefill starts a live run of the open engine';
    return `the run is over (${this.run.status}): Reset or Prefill to start again`;
  }
}

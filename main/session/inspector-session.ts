// The interactive session behind the app: one engine, one reference case (with its fp64
// oracle), one run at a time. Both hosts — Electron IPC and serve mode's WebSocket — hand every
// call to dispatchCall(session.handlers, ...) and forward session.subscribe() events; neither
// holds state of its own.
//
// Operations that run the engine or change what is open take the operation lock (a second one
// is refused with E_BUSY); getters never do, so the renderer keeps drawing while a pass runs.
// Every state change emits a snapshot event; a running pass emits progress events.
//
// Oracle choice: the verdicts are the gate's and always weigh both oracles (a disagreement is
// REVIEW_REQUIRED whichever is shown). Choosing 'fp64' switches what the numbers show: the
// table's max abs / max ULP / contract / badges and every view compare native with the fp64
// oracle instead of the reference.
//
// Two bundles, no engine (engine against engine): the open bundle may be of any kind and the run
// opened against it too; the contracts file, default contract, map file and oracle are compare's
// flags, applied with compare's own code (session-comparison.ts), and the receipt of an opened
// run is compare's (session-compare-receipt.ts).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Isolation } from '../engine-host/engine-host.ts';
import {
  InspectorCallError,
  type BoundaryRef,
  type BoundaryRow,
  type InspectorEvent,
  type InspectorHandlers,
  type LayerIsolation,
  type OracleChoice,
  type ReceiptExport,
  type SessionSnapshot,
} from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { userConfigDir, type Env } from '../core/receipt/keys.ts';
import { embeddedDefaults } from '../core/tool/tool-info.ts';
import { openersOffThread, type BundleOpeners } from './bundle-openers.ts';
import { JudgePool, type JudgePoolOptions } from './judge-pool.ts';
import { OperationLock } from './operation-lock.ts';
import { RecentItems } from './recent-items.ts';
import { RunController } from './run-controller.ts';
import { CALL_CODES, asCallError, callError, SessionErrorLog } from './session-errors.ts';
import { exportSessionReceipt, verifyReceiptText } from './session-receipt.ts';
import { runLayerIsolation } from './session-isolation.ts';
import { provenanceOf } from './session-provenance.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SessionVerdict } from './judge-messages.ts';
import { ROWS_PER_TURN, rowsReplyInTurns } from './rows-encoding.ts';
import { RowsLog } from './rows-log.ts';
import { buildRows, firstDivergenceIndex, hasDivergence, type RowSources } from './session-rows.ts';
import { allVerdicts, buildSnapshot, passVerdicts, verdictsFrom } from './session-state.ts';
import { openReference, probeEngine, withOracle, withoutOracle, withSettings, type OpenedEngine, type OpenedReference } from './session-sources.ts';
import { noComparisonSettings, type ComparisonSettings } from './session-comparison.ts';
import { exportComparisonReceipt } from './session-compare-receipt.ts';
import { MANIFEST_FILE_NAME } from '../core/bundle/manifest-schema.ts';
import { loadBoundaryMap } from '../core/compare/boundary-map.ts';
import { loadContractsFile } from '../core/compare/contracts-file.ts';
import { describeSource } from '../core/compare/reference-contracts.ts';
import { sessionViews, type ViewSides } from './session-views.ts';

export { dispatchCall, runCall, type DispatchResult } from './dispatch-call.ts';

export interface InspectorSessionOptions {
  /** Where native bundles of this session are written (one fresh folder per run). */
  workDir: string;
  /** The recent-items file; default <user config dir>/recent.json; null keeps the list in memory. */
  recentFile?: string | null;
  /** Environment used to find the user config folder (default process.env). */
  env?: Env;
  /** Watchdog per engine call (default: the engine host's, 60 s). */
  passTimeoutMs?: number;
  /** The judging workers (default: one per core but one, 1 to 4; Node's heap limits). */
  judge?: JudgePoolOptions;
}

/** Snapshots sent while an operation goes on (judged slices) are at least this far apart. */
const SNAPSHOT_EVERY_MS = 100;

const LAYER_ISOLATION_NOT_RUN: LayerIsolation = { status: 'not_run', message: 'layer isolation has not been run in this session', rows: [] };

export class InspectorSession {
  readonly handlers: InspectorHandlers;
  private readonly workDir: string;
  private readonly passTimeoutMs: number | undefined;
  private readonly listeners = new Set<(event: InspectorEvent) => void>();
  private readonly lock = new OperationLock();
  private readonly errors = new SessionErrorLog();
  private readonly recent: RecentItems;
  private readonly runs: RunController;
  private readonly judges: JudgePool;
  /** Bundles are opened with their manifests read on the judging workers. */
  private readonly openers: BundleOpeners;
  private engine: OpenedEngine | null = null;
  private reference: OpenedReference | null = null;
  private oracle: OracleChoice = 'reference';
  private isolation: Isolation = 'process';
  private teacherForce = false;
  private engineOptions: Record<string, string> = {};
  /** Contracts file, default contract and map file (compare's flags), applied to what is open. */
  private comparison: ComparisonSettings = noComparisonSettings();
  private layerIsolation: LayerIsolation = LAYER_ISOLATION_NOT_RUN;
  private readonly rowsLog = new RowsLog();
  /** The rows as last built: appended to when only appends happened since (session-rows.ts). */
  private rowsCache: { version: number; oracle: OracleChoice; rows: BoundaryRow[] } | null = null;
  /** Bundles replaced while a getter may still be reading them: closed when no reader is left. */
  private retired: TraceBundle[] = [];
  private snapshotTimer: NodeJS.Timeout | null = null;
  private lastSnapshotAt = -Infinity;
  private readers = 0;
  private closed = false;

  private constructor(options: InspectorSessionOptions) {
    this.workDir = options.workDir;
    this.passTimeoutMs = options.passTimeoutMs;
    const recentFile = options.recentFile === undefined ? join(userConfigDir(options.env), 'recent.json') : options.recentFile;
    this.recent = RecentItems.load(recentFile, (message) => this.errors.add('read recent items', message));
    this.judges = new JudgePool(options.judge);
    this.openers = openersOffThread(this.judges);
    this.runs = new RunController({
      workDir: this.workDir,
      errors: this.errors,
      emit: (event) => this.emit(event),
      rowsChanged: (change) => this.rowsLog.record(change, this.rowCount()),
      retire: (bundle) => this.retire(bundle),
      pool: this.judges,
      open: this.openers,
      changed: () => this.emitSoon(),
    });
    this.handlers = this.makeHandlers();
  }

  static create(options: InspectorSessionOptions): InspectorSession {
    return new InspectorSession(options);
  }

  /** Listens to snapshot and progress events; returns the unsubscribe function. */
  subscribe(listener: (event: InspectorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Stops the run (its capture is sealed as aborted), closes every bundle. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.snapshotTimer !== null) clearTimeout(this.snapshotTimer);
    await this.runs.clear('the session was closed');
    await this.judges.close();
    const reference = this.reference;
    this.reference = null;
    if (reference !== null) await Promise.all([reference.raw.close(), reference.rawOracle?.close()]);
    const retired = this.retired.splice(0);
    await Promise.all(retired.map((bundle) => bundle.close()));
    this.listeners.clear();
  }

  // ---- snapshot and events -------------------------------------------------------------------

  snapshot(): SessionSnapshot {
    return buildSnapshot({
      engine: this.engine,
      reference: this.reference,
      run: this.runs.run,
      oracle: this.oracle,
      isolation: this.isolation,
      teacherForce: this.teacherForce,
      engineOptions: this.engineOptions,
      busy: this.lock.busy,
      rowsVersion: this.rowsLog.version,
      errors: this.errors.list(),
      recent: this.recent.list(),
      workDir: this.workDir,
      comparison: this.comparison,
    });
  }

  private emit(event: InspectorEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        // A host's listener bug must not break the session (or the other listeners).
        process.emitWarning(`inspector session listener threw: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private emitSnapshot(): SessionSnapshot {
    if (this.snapshotTimer !== null) clearTimeout(this.snapshotTimer);
    this.snapshotTimer = null;
    this.lastSnapshotAt = performance.now();
    const snapshot = this.snapshot();
    this.emit({ type: 'snapshot', snapshot });
    return snapshot;
  }

  /**
   * A snapshot for a change in the middle of an operation (a judged slice of an opened run): at
   * once when none went out for SNAPSHOT_EVERY_MS, else once that long after the last, so a run
   * judged in hundreds of slices does not send every client hundreds of snapshots a second.
   */
  private emitSoon(): void {
    if (this.snapshotTimer !== null || this.closed) return;
    const wait = this.lastSnapshotAt + SNAPSHOT_EVERY_MS - performance.now();
    if (wait <= 0) {
      this.emitSnapshot();
      return;
    }
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      if (!this.closed) this.emitSnapshot();
    }, wait);
  }

  // ---- operations ------------------------------------------------------------------------------

  /**
   * Runs a state-changing operation under the lock. Failures about the user's engine or evidence
   * are also logged as SessionErrors under `action`; mistaken calls (bad state, busy) are not.
   */
  private async operate(name: string, action: string, operation: () => Promise<void>): Promise<SessionSnapshot> {
    this.requireOpen();
    await this.lock
      .run(name, async () => {
        this.emitSnapshot(); // shows busy
        try {
          await operation();
        } catch (error) {
          const failure = asCallError(error);
          if (failure.code !== CALL_CODES.state && failure.code !== CALL_CODES.request && failure.code !== CALL_CODES.busy) {
            this.errors.add(action, failure.message);
          }
          throw failure;
        } finally {
          this.flushRetired();
        }
      })
      .finally(() => {
        if (!this.closed) this.emitSnapshot();
      });
    return this.snapshot();
  }

  /** A change that touches no engine and no file: allowed while an operation runs. */
  private change(apply: () => void): SessionSnapshot {
    this.requireOpen();
    apply();
    return this.emitSnapshot();
  }

  private requireOpen(): void {
    if (this.closed) throw callError(CALL_CODES.state, 'the session is closed');
  }

  private requireEngine(what: string): OpenedEngine {
    if (this.engine !== null) return this.engine;
    const why = this.runs.run.source === 'opened' ? 'an opened run has no engine' : 'no engine is open';
    throw callError(CALL_CODES.state, `cannot ${what}: ${why}; open an engine library first`);
  }

  private requireReference(what: string): OpenedReference {
    if (this.reference === null) throw callError(CALL_CODES.state, `cannot ${what}: no reference bundle is open; open a bundle first`);
    return this.reference;
  }

  /** Options and settings apply when a run starts: changing them under a run in progress would misdescribe it. */
  private requireNoRunInProgress(what: string): void {
    if (this.runs.canStep) throw callError(CALL_CODES.state, `cannot ${what} while a run is in progress (they apply when a run starts): Reset first`);
  }

  private async commitEngine(engine: OpenedEngine): Promise<void> {
    await this.runs.clear('another engine was opened');
    this.engine = engine;
    // Options the new engine does not list would only be refused at the next prefill.
    const listed = new Set(engine.description.options.map((option) => option.name));
    this.engineOptions = Object.fromEntries(Object.entries(this.engineOptions).filter(([key]) => listed.has(key)));
    this.layerIsolation = LAYER_ISOLATION_NOT_RUN;
    this.rememberRecent('engines', engine.info.library);
  }

  private async commitReference(reference: OpenedReference): Promise<void> {
    await this.runs.clear('another bundle was opened');
    const previous = this.reference;
    this.reference = reference;
    if (previous !== null) {
      this.retire(previous.raw);
      if (previous.rawOracle !== null) this.retire(previous.rawOracle);
    }
    this.layerIsolation = LAYER_ISOLATION_NOT_RUN;
    this.rememberRecent('bundles', reference.dir);
    // The judging workers open it now, not when the first pass is to be judged.
    this.judges.prepare(
      [reference.bundle, ...(reference.oracle === null ? [] : [reference.oracle])].map((bundle) => ({ kind: 'bundle' as const, dir: bundle.dir })),
    );
  }

  private rememberRecent(kind: 'engines' | 'bundles', path: string): void {
    const problem = this.recent.remember(kind, path);
    if (problem !== null) this.errors.add('save recent items', problem);
  }

  private async openDefault(): Promise<void> {
    const defaults = embeddedDefaults();
    // Both are opened before either is committed: a failure changes nothing.
    const engine = await probeEngine(defaults.engineLibrary);
    const reference = await openReference(join(defaults.bundlesDir, defaults.defaultCase, 'reference'), this.comparison, this.openers.bundle);
    await this.commitEngine(engine);
    await this.commitReference(reference);
  }

  private async startRun(): Promise<void> {
    const engine = this.requireEngine('start a run');
    const reference = this.requireReference('start a run');
    if (this.comparison.map !== null) {
      throw callError(
        CALL_CODES.state,
        `cannot start a run while map file ${this.comparison.map.path} is set: a map lines up a bundle opened with Open run; a live engine is judged under its own boundary names (clear the map file first)`,
      );
    }
    await this.runs.startLive(engine, reference, {
      isolation: this.isolation,
      teacherForce: this.teacherForce,
      engineOptions: this.engineOptions,
      ...(this.passTimeoutMs !== undefined ? { passTimeoutMs: this.passTimeoutMs } : {}),
    });
  }

  /** Step: the next pass, or the prefill when nothing ran yet. */
  private async stepOnce(): Promise<{ diverged: boolean; ended: boolean }> {
    const engine = this.requireEngine('step');
    const reference = this.requireReference('step');
    if (this.runs.run.source === 'none') {
      await this.startRun();
      const verdicts = this.runs.run.verdicts.get(0) ?? [];
      return { diverged: hasDivergence(verdicts), ended: !this.runs.canStep };
    }
    if (!this.runs.canStep) throw callError(CALL_CODES.state, `cannot step: ${this.runs.describeNoStep()}`);
    return this.runs.step(engine, reference);
  }

  /** Steps until the run ends, or (untilDivergence) until a pass brings a FAIL or REVIEW_REQUIRED. */
  private async runOn(untilDivergence: boolean): Promise<void> {
    if (this.runs.run.source !== 'none' && !this.runs.canStep) throw callError(CALL_CODES.state, `cannot run: ${this.runs.describeNoStep()}`);
    for (;;) {
      const step = await this.stepOnce();
      this.emitSnapshot();
      if (step.ended || !this.runs.canStep) return;
      if (untilDivergence && step.diverged) return;
    }
  }

  /**
   * Makes `next` the session's comparison settings: the open reference is seen under its
   * contracts and an opened run (or a finished live run's bundle) is opened again through its
   * map and judged anew — all prepared before anything is replaced, so a contracts rule or a map
   * entry that cannot apply to these bundles fails the call and changes nothing.
   */
  private async applyComparison(next: ComparisonSettings): Promise<void> {
    this.requireNoRunInProgress('change the contracts or the map file');
    const current = this.reference;
    if (current === null) {
      this.comparison = next;
      return;
    }
    await this.judgeAgain(await withSettings(current, next), next);
  }

  /** Sets (or, with null, removes) the oracle judged beside the open bundle, and judges the run again. */
  private async setOracleBundle(dir: string | null): Promise<void> {
    this.requireNoRunInProgress('change the oracle');
    const current = this.requireReference('set an oracle');
    const next = dir === null ? await withoutOracle(current, this.comparison) : await withOracle(dir, current, this.comparison, this.openers.bundle);
    try {
      await this.judgeAgain(next, this.comparison);
    } catch (error) {
      if (next.rawOracle !== null && next.rawOracle !== current.rawOracle) await next.rawOracle.close();
      throw error;
    }
    if (current.rawOracle !== null && current.rawOracle !== next.rawOracle) this.retire(current.rawOracle);
    if (next.oracle === null && this.oracle === 'fp64') this.oracle = 'reference';
  }

  /**
   * Makes `reference` (the same bundles under other settings, or another oracle) the session's,
   * with the run judged again under it: an opened run, or a finished live run's bundle, is opened
   * again (through the map of `comparison`); a run that left no bundle is cleared. The run is
   * prepared before anything is replaced, so a failure changes nothing.
   */
  private async judgeAgain(reference: OpenedReference, comparison: ComparisonSettings): Promise<void> {
    const { run } = this.runs;
    const rejudge = run.nativeDir !== null && (run.source === 'opened' || existsSync(join(run.nativeDir, MANIFEST_FILE_NAME)));
    if (rejudge && run.nativeDir !== null) await this.runs.openRun(run.nativeDir, reference, this.engine, comparison.map);
    else if (run.source !== 'none') await this.runs.clear('the comparison settings changed');
    this.reference = reference;
    this.comparison = comparison;
    this.rowsLog.record('full', this.rowCount());
  }

  // ---- reading -----------------------------------------------------------------------------

  /** Runs a getter that reads bundles; bundles retired meanwhile stay open until it is done. */
  private async read<T>(getter: () => Promise<T>): Promise<T> {
    this.requireOpen();
    this.readers += 1;
    try {
      return await getter();
    } finally {
      this.readers -= 1;
      this.flushRetired();
    }
  }

  private retire(bundle: TraceBundle): void {
    if (!this.retired.includes(bundle)) this.retired.push(bundle);
    this.flushRetired();
  }

  private flushRetired(): void {
    if (this.readers > 0 || this.retired.length === 0) return;
    const current = new Set([this.reference?.raw, this.reference?.rawOracle, this.runs.run.native]);
    const closing = this.retired.filter((bundle) => !current.has(bundle));
    this.retired = this.retired.filter((bundle) => current.has(bundle));
    for (const bundle of closing) void bundle.close().catch(() => undefined);
  }

  /** The sides the views compare: native, and the reference or the fp64 oracle per the oracle choice. */
  private sides(what: string): ViewSides {
    const reference = this.requireReference(what);
    if (this.oracle === 'fp64') {
      if (reference.oracle === null)
        throw callError(CALL_CODES.state, `cannot ${what} against the fp64 oracle: case ${reference.info.caseId} has no oracle bundle`);
      return { native: this.runs.run.native, base: reference.oracle };
    }
    return { native: this.runs.run.native, base: reference.bundle };
  }

  /** How many rows rows() gives: one per verdict, none without a reference. */
  private rowCount(): number {
    if (this.reference === null) return 0;
    let count = 0;
    for (const verdicts of this.runs.run.verdicts.values()) count += verdicts.length;
    return count;
  }

  private rows(): BoundaryRow[] {
    const plan = this.rowsPlan();
    if ('rows' in plan) return plan.rows;
    const built = plan.sources === null ? [] : buildRows(plan.verdicts, plan.sources, plan.kept.length, plan.first);
    return this.keepRows(plan, built);
  }

  /**
   * rows(), built a slice of ROWS_PER_TURN verdicts at a time with a turn of the event loop
   * between slices: a whole long run's rows (40,899 of the 10 GiB scale trace, built again after a
   * change that is no append) took about 115 ms in one piece on the serving thread. When the rows
   * change meanwhile, rows() builds them as they now are.
   */
  private async rowsInTurns(): Promise<BoundaryRow[]> {
    const plan = this.rowsPlan();
    if ('rows' in plan || plan.sources === null || plan.verdicts.length <= ROWS_PER_TURN) return this.rows();
    const built: BoundaryRow[] = [];
    for (let at = 0; at < plan.verdicts.length; at += ROWS_PER_TURN) {
      if (at > 0) {
        await nextTurn();
        if (this.rowsLog.version !== plan.version || this.oracle !== plan.oracle) return this.rows();
      }
      for (const row of buildRows(plan.verdicts.slice(at, at + ROWS_PER_TURN), plan.sources, plan.kept.length + at, plan.first)) built.push(row);
    }
    return this.keepRows(plan, built);
  }

  /** The rows when they are cached for this version; else what is kept of them and what is left to build. */
  private rowsPlan():
    | { rows: BoundaryRow[] }
    | { version: number; oracle: OracleChoice; kept: BoundaryRow[]; verdicts: SessionVerdict[]; sources: RowSources | null; first: number } {
    const cached = this.rowsCache;
    if (cached !== null && cached.version === this.rowsLog.version && cached.oracle === this.oracle) return { rows: cached.rows };
    const reference = this.reference;
    // Only appends since the rows were built (a step, a slice of an opened run): build the new ones.
    const from = cached !== null && cached.oracle === this.oracle ? this.rowsLog.appendedFrom(cached.version) : null;
    const kept = from !== null && cached !== null && from === cached.rows.length ? cached.rows : [];
    return {
      version: this.rowsLog.version,
      oracle: this.oracle,
      kept,
      verdicts: reference === null ? [] : verdictsFrom(this.runs.run, kept.length),
      sources:
        reference === null
          ? null
          : { reference: reference.bundle, oracle: reference.oracle, native: this.runs.run.native, oracleChoice: this.oracle, contracts: this.runs.contracts },
      first: reference === null ? -1 : firstDivergenceIndex(passVerdicts(this.runs.run)),
    };
  }

  private keepRows(plan: { version: number; oracle: OracleChoice; kept: BoundaryRow[] }, built: BoundaryRow[]): BoundaryRow[] {
    const rows = plan.kept.length === 0 ? built : plan.kept.concat(built);
    this.rowsCache = { version: plan.version, oracle: plan.oracle, rows };
    return rows;
  }

  /** What the receipt and layer-isolation services need from the session. */
  private engineRunInputs(what: string): { library: string; reference: OpenedReference } {
    const engine = this.requireEngine(what);
    return { library: engine.info.library, reference: this.requireReference(what) };
  }

  // ---- handlers ------------------------------------------------------------------------------

  private makeHandlers(): InspectorHandlers {
    return {
      getSession: async () => {
        this.requireOpen();
        return this.snapshot();
      },
      openEngine: ({ library }) =>
        this.operate('open engine', 'open engine', async () => {
          await this.commitEngine(await probeEngine(library));
        }),
      openBundle: ({ dir }) =>
        this.operate('open bundle', 'open bundle', async () => {
          await this.commitReference(await openReference(dir, this.comparison, this.openers.bundle));
        }),
      openRun: ({ dir }) =>
        this.operate('open run', 'open run', async () => {
          const reference = this.requireReference('open a run');
          await this.runs.openRun(dir, reference, this.engine, this.comparison.map);
          this.rememberRecent('bundles', dir);
        }),
      openDefault: () => this.operate('open default', 'open default', () => this.openDefault()),
      setContractsFile: ({ file }) =>
        this.operate('set contracts file', 'set contracts file', async () => {
          const contractsFile = file === null ? null : await loadContractsFile(resolve(file));
          await this.applyComparison({ ...this.comparison, contractsFile });
        }),
      setDefaultContract: ({ everyBoundary }) =>
        this.operate('set default contract', 'set default contract', () => this.applyComparison({ ...this.comparison, everyBoundary })),
      setOracleBundle: ({ dir }) => this.operate('set oracle bundle', 'set oracle bundle', () => this.setOracleBundle(dir)),
      setMapFile: ({ file }) =>
        this.operate('set map file', 'set map file', async () => {
          const map = file === null ? null : await loadBoundaryMap(resolve(file));
          await this.applyComparison({ ...this.comparison, map });
        }),
      setOracle: async ({ oracle }) => {
        if (oracle === 'fp64' && this.reference !== null && this.reference.oracle === null) {
          throw callError(
            CALL_CODES.state,
            `case ${this.reference.info.caseId} has no oracle bundle (${this.reference.dir}/../oracle-f64, or one set with setOracleBundle)`,
          );
        }
        return this.change(() => {
          if (this.oracle === oracle) return;
          this.oracle = oracle;
          // Every row's numbers change: a client must take them all again.
          this.rowsLog.record('full', this.rowCount());
        });
      },
      setIsolation: ({ isolation }) =>
        this.operate('set isolation', 'set isolation', async () => {
          this.requireNoRunInProgress('change the isolation');
          this.isolation = isolation;
        }),
      setTeacherForce: ({ on }) =>
        this.operate('set teacher forcing', 'set teacher forcing', async () => {
          this.requireNoRunInProgress('change teacher forcing');
          this.teacherForce = on;
        }),
      setEngineOptions: ({ options }) =>
        this.operate('set engine options', 'set engine options', async () => {
          this.requireNoRunInProgress('change the engine options');
          if (this.engine !== null) {
            const listed = this.engine.description.options.map((option) => option.name);
            const unknown = Object.keys(options).filter((key) => !listed.includes(key));
            if (unknown.length > 0) {
              throw callError(
                CALL_CODES.request,
                `options.${unknown[0]}: engine ${this.engine.info.name} has no such option (it lists: ${listed.join(', ') || 'none'})`,
              );
            }
          }
          this.engineOptions = { ...options };
        }),
      prefill: () => this.operate('prefill', 'prefill', () => this.startRun()),
      step: () =>
        this.operate('step', 'step', async () => {
          await this.stepOnce();
        }),
      runToEnd: () => this.operate('run to end', 'run to end', () => this.runOn(false)),
      runToFirstDivergence: () => this.operate('run to first divergence', 'run to first divergence', () => this.runOn(true)),
      reset: () =>
        this.operate('reset', 'reset', async () => {
          // A dead engine host goes with the run; the next Prefill starts a fresh one.
          await this.runs.clear('the run was reset');
        }),
      dismissError: async ({ id }) => {
        this.requireOpen();
        if (!this.errors.dismiss(id)) throw callError(CALL_CODES.request, `id: no error with id ${id} (already dismissed?)`);
        return this.emitSnapshot();
      },
      getRows: async ({ since }) => {
        this.requireOpen();
        // A whole long run's rows are built and encoded in turns: the serving thread answers
        // other calls meanwhile (the 10 GiB scale run's 40,899 rows held it about 200 ms).
        // Built for the version the log holds as it resolves (else rows() built them then).
        const rows = await this.rowsInTurns();
        const version = this.rowsLog.version;
        const from = this.rowsLog.appendedFrom(since);
        // Rows are in execution order and an append only adds at the end: the client lacks the tail.
        if (from !== null && from <= rows.length) return rowsReplyInTurns(version, 'append', from, rows.slice(from));
        return rowsReplyInTurns(version, 'full', 0, rows);
      },
      getTensorView: (request) => this.read(() => sessionViews.tensorView(this.sides('show a tensor'), request)),
      getSeries: (request) => this.read(() => sessionViews.series(this.sides('show a series'), request)),
      getErrorStats: (ref) => this.read(() => sessionViews.errorStats(this.sides('show error statistics'), ref)),
      getElement: (request) => this.read(() => sessionViews.element(this.sides('show an element'), request)),
      getSpecials: ({ limit, ...ref }) => this.read(() => sessionViews.specials(this.sides('list special values'), ref, limit)),
      findFirstSpecial: ({ kind }) =>
        this.read(() => {
          const order: BoundaryRef[] = this.rows().map((row) => ({ pass: row.pass, boundary: row.boundary }));
          return sessionViews.firstSpecial(this.sides('find special values'), order, kind);
        }),
      getLayerIsolation: async () => {
        this.requireOpen();
        return this.layerIsolation;
      },
      runLayerIsolation: async () => {
        await this.operate('layer isolation', 'layer isolation', async () => {
          const { library, reference } = this.engineRunInputs('run layer isolation');
          try {
            this.layerIsolation = await runLayerIsolation({
              library,
              referenceDir: reference.dir,
              engineOptions: { ...this.engineOptions },
              isolation: this.isolation,
              workDir: this.workDir,
              teacherForce: this.teacherForce,
            });
          } catch (error) {
            this.layerIsolation = { status: 'error', message: asCallError(error).message, rows: [] };
            throw error;
          }
        });
        return this.layerIsolation;
      },
      getAudio: ({ boundary }) => this.read(() => sessionViews.audio(this.sides('play audio'), boundary)),
      exportWav: ({ boundary, side }) => this.read(() => sessionViews.wav(this.sides('export a WAV file'), boundary, side)),
      getProvenance: () =>
        this.read(() => {
          const reference = this.requireReference('show provenance');
          return provenanceOf({
            reference: reference.bundle,
            oracle: reference.oracle,
            native: this.runs.run.native,
            verdicts: allVerdicts(this.runs.run),
            passesRun: [...this.runs.run.passesRun],
          });
        }),
      exportReceipt: async ({ keyPath }) => {
        // Assigned inside the locked operation (a holder: TypeScript does not follow closures).
        const exported: { receipt: ReceiptExport | null } = { receipt: null };
        await this.operate('export receipt', 'export receipt', async () => {
          const { run } = this.runs;
          if (run.source === 'opened' && run.nativeDir !== null) {
            // Two bundles, no engine: the receipt is compare's, over both bundles.
            const reference = this.requireReference('export a receipt');
            exported.receipt = await exportComparisonReceipt({
              referenceDir: reference.dir,
              candidateDir: run.nativeDir,
              oracleDir: reference.oracleDir,
              settings: this.comparison,
              workDir: this.workDir,
              keyPath,
            });
            return;
          }
          const { library, reference } = this.engineRunInputs('export a receipt');
          exported.receipt = await exportSessionReceipt({
            referenceContracts: reference.contractSource === null ? null : describeSource(reference.contractSource),
            library,
            referenceDir: reference.dir,
            oracleDir: reference.oracleDir,
            engineOptions: { ...this.engineOptions },
            teacherForce: this.teacherForce,
            isolation: this.isolation,
            workDir: this.workDir,
            keyPath,
          });
        });
        if (exported.receipt === null) throw new InspectorCallError(CALL_CODES.internal, 'the receipt export returned nothing');
        return exported.receipt;
      },
      verifyReceipt: (request) => this.read(() => verifyReceiptText(request)),
    };
  }
}

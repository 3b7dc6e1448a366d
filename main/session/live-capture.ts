// One live run of the engine, stepped a pass at a time: an EngineHost (in its own process by
// default, so a crash costs the run, not the app) with a native capture open in the session's
// work folder. Each runNextPass() makes the same injections a CLI capture makes before that pass
// (capture-run.ts: rounding decisions always, the reference's tokens when teacher forcing), runs
// exactly one pass and reports how it went; the capture is finished when the last pass ran or
// the run ended, and recovered (with what was written) when the engine died.
import { join } from 'node:path';
import { EngineHost, type Isolation, type PassResult } from '../engine-host/engine-host.ts';
import type { PassKind } from '../engine-host/engine-protocol.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { sha256File } from '../core/bundle/digest.ts';
import { NativeBundleWriter } from '../core/bundle/native-bundle-writer.ts';
import type { RunOutcome } from '../core/bundle/manifest-schema.ts';
import {
  capturePlans,
  injectForPass,
  nativeHeader,
  outcomeOf,
  prepareSession,
  recordTeacherForcing,
  weightsForCapture,
  type CapturePlans,
} from '../core/capture/capture-run.ts';
import { messageOf } from './session-errors.ts';
import { capturePoolBytes } from '../core/capture/capture-pool-size.ts';

export interface LiveRunOptions {
  library: string;
  reference: TraceBundle;
  /** A fresh folder for the native bundle. */
  outDir: string;
  isolation: Isolation;
  engineOptions: Readonly<Record<string, string>>;
  teacherForce: boolean;
  passTimeoutMs?: number;
  /** Records announced while a pass runs: at most one call per batch the host delivers. */
  onProgress: (progress: { pass: number; kind: PassKind; records: number; lastBoundary: string | null }) => void;
}

/** What one step did. */
export interface PassStep {
  /** Null when the pass never ran (the engine refused an injection before it). */
  result: PassResult | null;
  pass: number;
  kind: PassKind;
  /** Set once the run is over: it completed, or the engine failed, crashed or hung. */
  ended: RunOutcome | null;
  /** A teacher-forcing summary could not be added to the finished bundle's provenance. */
  warning: string | null;
}

export const SESSION_COMMAND = 'trace-inspector app (interactive session)';

export class LiveRun {
  private readonly passes: PassResult[] = [];
  private injections = 0;
  private outcome: RunOutcome | null = null;
  private captureOpen = true;
  private current: { pass: number; kind: PassKind; records: number; lastBoundary: string | null } | null = null;
  private progressQueued = false;

  private constructor(
    private readonly host: EngineHost,
    private readonly options: LiveRunOptions,
    private readonly plans: CapturePlans,
  ) {
    // Announcements arrive in batches; one progress event per batch is plenty for a progress bar.
    host.onRecord((event) => {
      const current = this.current;
      if (current === null || event.pass !== current.pass) return;
      current.records += 1;
      current.lastBoundary = event.name;
      if (this.progressQueued) return;
      this.progressQueued = true;
      queueMicrotask(() => {
        this.progressQueued = false;
        if (this.current !== null) this.options.onProgress({ ...this.current });
      });
    });
  }

  /**
   * Starts the engine host, opens a session with the reference's weights (digest-checked), sets
   * the options and the reference's inputs, and opens the capture. Nothing is left running when
   * it rejects: an engine that cannot be loaded (EngineLoadError) or refuses an option or input
   * (InputError) names what it refused.
   */
  static async start(options: LiveRunOptions): Promise<LiveRun> {
    const weights = await weightsForCapture(options.reference, undefined);
    const host = await EngineHost.start({
      library: options.library,
      isolation: options.isolation,
      ...(options.passTimeoutMs !== undefined ? { passTimeoutMs: options.passTimeoutMs } : {}),
    });
    try {
      const inputs = await prepareSession(host, options.reference, weights?.path ?? null, options.engineOptions);
      const referenceSha256 = options.teacherForce ? (await sha256File(options.reference.manifestPath)).sha256 : '';
      const plans = capturePlans(options.reference, host.description, { teacherForce: options.teacherForce, forceRoundingDecisions: true, referenceSha256 });
      await host.beginCapture(
        options.outDir,
        nativeHeader(options.reference.manifest, host, SESSION_COMMAND, inputs, { weights, outDir: options.outDir }, plans.runtime),
        { poolBytes: capturePoolBytes(options.reference.passes) },
      );
      return new LiveRun(host, options, plans);
    } catch (error) {
      await host.close().catch(() => undefined);
      throw error;
    }
  }

  get outDir(): string {
    return this.options.outDir;
  }

  /** Passes that ran (whatever their status). */
  get passesRun(): number {
    return this.passes.length;
  }

  /** The next pass a step would run, null once the run is over. */
  get nextPass(): number | null {
    if (this.outcome !== null) return null;
    return this.passes.length < this.options.reference.passes.length ? this.passes.length : null;
  }

  get ended(): RunOutcome | null {
    return this.outcome;
  }

  /** Whether the capture is still being written (its view is built from the journal). */
  get capturing(): boolean {
    return this.captureOpen;
  }

  /** Runs the next pass; after the last one (or a failure) the capture is finished or recovered. */
  async runNextPass(): Promise<PassStep> {
    const pass = this.nextPass;
    if (pass === null) throw new Error('internal: runNextPass after the run ended');
    const entry = this.options.reference.passes[pass];
    const kind: PassKind = entry?.kind ?? (pass === 0 ? 'prefill' : 'decode');
    const previous = this.passes.at(-1);
    if (this.plans.plan !== null) {
      const injected = await injectForPass(this.host, this.plans.plan, pass);
      if (injected.refused !== null) {
        const ended: RunOutcome = {
          status: 'engine_error',
          message: injected.refused,
          last_pass: previous?.index ?? null,
          last_boundary: this.host.lastRecordSeen?.name ?? null,
        };
        return { result: null, pass, kind, ended, warning: await this.end(ended) };
      }
      this.injections += injected.count;
    }
    this.current = { pass, kind, records: 0, lastBoundary: null };
    let result: PassResult;
    try {
      result = await this.host.runPass(kind);
    } finally {
      this.current = null;
    }
    this.passes.push(result);
    const outcome = outcomeOf(result, this.host.lastRecordSeen?.name ?? null);
    if (result.status === 'crashed' || result.status === 'timeout' || result.status === 'aborted') {
      // The host is dead and has already recovered the capture from its journal.
      this.outcome = outcome;
      this.captureOpen = false;
      return {
        result,
        pass,
        kind,
        ended: outcome,
        warning: result.recoveryError === null ? null : `the capture could not be recovered: ${result.recoveryError}`,
      };
    }
    if (result.status === 'engine_error' || this.nextPass === null) {
      return { result, pass, kind, ended: outcome, warning: await this.end(outcome) };
    }
    return { result, pass, kind, ended: null, warning: null };
  }

  /** Finishes the capture with `outcome`; returns a warning when the provenance could not be completed. */
  private async end(outcome: RunOutcome): Promise<string | null> {
    this.outcome = outcome;
    await this.host.finishCapture(outcome);
    this.captureOpen = false;
    try {
      await recordTeacherForcing(this.options.outDir, this.options.reference, this.plans, this.injections);
      return null;
    } catch (error) {
      return `the teacher-forcing summary was not added to ${join(this.options.outDir, 'manifest.json')}: ${messageOf(error)}`;
    }
  }

  /**
   * Stops the run (Reset, another bundle opened, the app closing): the engine host goes, and a
   * capture still open is sealed as 'aborted' with the passes it holds, so the folder is a
   * readable bundle rather than a half-written one.
   */
  async dispose(reason: string): Promise<void> {
    await this.host.close().catch(() => undefined);
    if (!this.captureOpen) return;
    this.captureOpen = false;
    const last = this.passes.at(-1);
    this.outcome = { status: 'aborted', message: reason, last_pass: last?.index ?? null, last_boundary: this.host.lastRecordSeen?.name ?? null };
    try {
      NativeBundleWriter.recover(this.options.outDir, this.outcome);
    } catch {
      // Nothing readable was written yet (or the folder is gone): there is no bundle to keep.
    }
  }
}

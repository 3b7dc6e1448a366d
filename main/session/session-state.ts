// The session's mutable state about the current run, and the snapshot the renderer sees. The
// snapshot is derived, never stored: every field is computed from this state when asked, so it
// cannot drift from what the session actually holds.
import type { Isolation } from '../engine-host/engine-host.ts';
import type { OracleChoice, SessionError, SessionSnapshot, TimelinePass } from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { BoundaryVerdict } from '../core/gate/gate-types.ts';
import type { MapReport } from '../core/compare/mapped-bundle.ts';
import type { LiveRun } from './live-capture.ts';
import { comparisonInfo, type ComparisonSettings } from './session-comparison.ts';
import { countVerdicts, firstDivergenceOf } from './session-rows.ts';
import type { OpenedEngine, OpenedReference } from './session-sources.ts';

export type PassState = TimelinePass['state'];
export type RunStatus = SessionSnapshot['run']['status'];

/** A run: live (stepped on an engine in this session) or opened (a native bundle captured before). */
export interface RunRecord {
  source: 'none' | 'live' | 'opened';
  live: LiveRun | null;
  /** The native bundle's folder (live: being written in the work folder). */
  nativeDir: string | null;
  /** The current native view: the capture in progress, the finished bundle, or null. */
  native: TraceBundle | null;
  /** Verdicts of each judged pass, in the gate's execution order within the pass. */
  verdicts: Map<number, BoundaryVerdict[]>;
  passStates: Map<number, PassState>;
  /** Passes the engine actually ran (a pass refused before it started is judged but did not run). */
  passesRun: number[];
  status: RunStatus;
  message: string;
  /** An opened run seen through the session's map file: what the map did (mapped-bundle.ts). */
  mapReport: MapReport | null;
}

export function emptyRun(): RunRecord {
  return { source: 'none', live: null, nativeDir: null, native: null, verdicts: new Map(), passStates: new Map(), passesRun: [], status: 'idle', message: '', mapReport: null };
}

/** Every verdict of the run in execution order (pass, then catalogue order). */
export function allVerdicts(run: RunRecord): BoundaryVerdict[] {
  return [...run.verdicts.keys()].sort((a, b) => a - b).flatMap((pass) => run.verdicts.get(pass) ?? []);
}

export interface SnapshotSource {
  engine: OpenedEngine | null;
  reference: OpenedReference | null;
  run: RunRecord;
  oracle: OracleChoice;
  isolation: Isolation;
  teacherForce: boolean;
  engineOptions: Readonly<Record<string, string>>;
  busy: string | null;
  rowsVersion: number;
  errors: SessionError[];
  recent: { engines: string[]; bundles: string[] };
  workDir: string;
  comparison: ComparisonSettings;
}

function nextPassOf(source: SnapshotSource): number | null {
  const { run } = source;
  if (run.live !== null) return run.live.nextPass;
  // Nothing ran yet: Step starts with the prefill.
  if (run.source === 'none' && source.engine !== null && source.reference !== null && source.reference.bundle.passes.length > 0) return 0;
  return null;
}

export function buildSnapshot(source: SnapshotSource): SessionSnapshot {
  const { run, reference } = source;
  const verdicts = allVerdicts(run);
  const timeline: TimelinePass[] = (reference?.bundle.passes ?? []).map((pass) => ({
    index: pass.index,
    kind: pass.kind,
    state: run.passStates.get(pass.index) ?? 'pending',
    counts: countVerdicts(run.verdicts.get(pass.index) ?? []),
  }));
  return {
    engine: source.engine === null ? null : { ...source.engine.info },
    bundle: reference === null ? null : { ...reference.info },
    openedRun: run.source === 'opened' ? run.nativeDir : null,
    openedRunKind: run.source === 'opened' && run.native !== null ? run.native.manifest.kind : null,
    comparison: comparisonInfo(source.comparison, reference?.contracts ?? null, run.mapReport),
    oracle: source.oracle,
    isolation: source.isolation,
    teacherForce: source.teacherForce,
    engineOptions: { ...source.engineOptions },
    timeline,
    nextPass: nextPassOf(source),
    run: { status: run.status, message: run.message },
    busy: source.busy,
    rowsVersion: source.rowsVersion,
    rowCount: verdicts.length,
    counts: countVerdicts(verdicts),
    firstDivergence: firstDivergenceOf(verdicts),
    errors: source.errors,
    recent: source.recent,
    workDir: source.workDir,
  };
}

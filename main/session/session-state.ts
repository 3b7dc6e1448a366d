// The session's mutable state about the current run, and the snapshot the renderer sees. The
// snapshot is derived, never stored: every field is computed from this state when asked, so it
// cannot drift from what the session actually holds.
import type { Isolation } from '../engine-host/engine-host.ts';
import type { BoundaryRef, OracleChoice, SessionError, SessionSnapshot, TimelinePass } from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { emptyCounts, VERDICTS, type VerdictCounts } from '../core/gate/gate-types.ts';
import type { SessionVerdict } from './judge-messages.ts';
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
  verdicts: Map<number, SessionVerdict[]>;
  passStates: Map<number, PassState>;
  /** Passes the engine actually ran (a pass refused before it started is judged but did not run). */
  passesRun: number[];
  status: RunStatus;
  message: string;
  /** An opened run seen through the session's map file: what the map did (mapped-bundle.ts). */
  mapReport: MapReport | null;
}

export function emptyRun(): RunRecord {
  return {
    source: 'none',
    live: null,
    nativeDir: null,
    native: null,
    verdicts: new Map(),
    passStates: new Map(),
    passesRun: [],
    status: 'idle',
    message: '',
    mapReport: null,
  };
}

/** Every verdict of the run in execution order (pass, then catalogue order). */
export function allVerdicts(run: RunRecord): SessionVerdict[] {
  return verdictsFrom(run, 0);
}

/** Each judged pass's verdicts, in pass order. */
export function passVerdicts(run: RunRecord): SessionVerdict[][] {
  return [...run.verdicts.keys()].sort((a, b) => a - b).map((pass) => run.verdicts.get(pass) ?? []);
}

/** The verdicts from execution-order index `from` on (the passes wholly before it are skipped, not copied). */
export function verdictsFrom(run: RunRecord, from: number): SessionVerdict[] {
  const out: SessionVerdict[] = [];
  let offset = 0;
  for (const verdicts of passVerdicts(run)) {
    const end = offset + verdicts.length;
    if (end > from) for (let i = Math.max(0, from - offset); i < verdicts.length; i++) out.push(verdicts[i] as SessionVerdict);
    offset = end;
  }
  return out;
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

/**
 * A pass's counts and first divergence, kept while its verdict list is the same array of the same
 * length: snapshots go out after every judged slice and answer every getSession, and counting a
 * 50k-row run each time would be most of their cost. (A list is only ever appended to; verdicts
 * changed in place — a broken audio stream bound — are stored as a new list.)
 */
const passSummaries = new WeakMap<readonly SessionVerdict[], { length: number; counts: VerdictCounts; first: BoundaryRef | null }>();

function passSummary(verdicts: readonly SessionVerdict[]): { counts: VerdictCounts; first: BoundaryRef | null } {
  const kept = passSummaries.get(verdicts);
  if (kept !== undefined && kept.length === verdicts.length) return kept;
  const summary = { length: verdicts.length, counts: countVerdicts(verdicts), first: firstDivergenceOf(verdicts) };
  passSummaries.set(verdicts, summary);
  return summary;
}

export function buildSnapshot(source: SnapshotSource): SessionSnapshot {
  const { run, reference } = source;
  // Per pass, then summed: a snapshot goes out after every judged slice of a 50k-row run, and
  // flattening every verdict for each would cost more than the slice did.
  const passCounts = new Map<number, VerdictCounts>();
  const counts = emptyCounts();
  let rowCount = 0;
  let firstDivergence: BoundaryRef | null = null;
  for (const pass of [...run.verdicts.keys()].sort((a, b) => a - b)) {
    const verdicts = run.verdicts.get(pass) ?? [];
    const summary = passSummary(verdicts);
    passCounts.set(pass, { ...summary.counts });
    for (const verdict of VERDICTS) counts[verdict] += summary.counts[verdict];
    rowCount += verdicts.length;
    if (firstDivergence === null) firstDivergence = summary.first;
  }
  const timeline: TimelinePass[] = (reference?.bundle.passes ?? []).map((pass) => ({
    index: pass.index,
    kind: pass.kind,
    state: run.passStates.get(pass.index) ?? 'pending',
    counts: passCounts.get(pass.index) ?? emptyCounts(),
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
    rowCount,
    counts,
    firstDivergence,
    errors: source.errors,
    recent: source.recent,
    workDir: source.workDir,
  };
}

// One case of the gate: capture a native run of the engine over the case's reference (crash-
// isolated, into <workDir>/<case>/native), then judge every (pass, boundary) against the
// reference and the fp64 oracle. Everything it is given was validated by runGate before any
// engine ran; from here on what goes wrong with the engine is a verdict (a crash, a hang or an
// engine error makes the boundaries never reached FAIL), never an error.
import { join } from 'node:path';
import { EngineCallError, EngineHostDeadError, EngineHostError, EngineLoadError } from '../../engine-host/engine-errors.ts';
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import type { PassResult } from '../../engine-host/engine-host.ts';
import { openBundle, type TraceBundle } from '../bundle/bundle-reader.ts';
import { leafHashPool } from '../bundle/leaf-hash-pool.ts';
import { BundleError } from '../bundle/errors.ts';
import type { BundleManifest, Contract, RunOutcome } from '../bundle/manifest-schema.ts';
import { CaptureAbortedError, captureRun, type CaptureOptions, type CaptureResult } from '../capture/capture-run.ts';
import { withContracts } from '../compare/contracted-bundle.ts';
import { judgeCase, type CaseJudgeInput, type RunStop } from './case-verdicts.ts';
import { judgeCaseRange } from './pass-range-judge.ts';
import { audioBoundedNames, type CasePassRange } from './pass-split.ts';
import type { BundleSummary, CaseResult, CaseRun, GapRecord, GateOptions, GateProgress, LedgerEntry } from './gate-types.ts';
import { gapIds } from './verdicts.ts';
import { createOutputFolder } from '../io/output-folder.ts';
import { InputError } from '../io/input-error.ts';

/** The run was stopped (options.signal): what was captured stays in the work folder, nothing is signed. */
export class GateAbortedError extends Error {
  override name = 'GateAbortedError';
}

export function stopIfAborted(signal: AbortSignal | undefined, where: string): void {
  if (signal?.aborted) throw new GateAbortedError(`${typeof signal.reason === 'string' ? signal.reason : 'aborted'} ${where}`);
}

/** A case as runGate validated it: bundles, digests and weights checked, a work folder name chosen. */
export interface PreparedCase {
  caseId: string;
  /** A folder name for the case under workDir (the case id, made safe). */
  folder: string;
  referenceDir: string;
  oracleDir: string | null;
  manifest: BundleManifest;
  reference: BundleSummary;
  oracle: BundleSummary | null;
  /** Null when the reference names no weights (the engine embeds or generates them). */
  weights: { path: string; sha256: string; subjectName: string } | null;
  /** --shard-by passes: the range of the case's passes this shard judges (pass-split.ts); absent: every pass. */
  passRange?: CasePassRange;
}

function statusWords(status: RunOutcome['status']): string {
  switch (status) {
    case 'crashed':
      return 'the engine crashed';
    case 'timeout':
      return 'the engine timed out';
    case 'engine_error':
      return 'the engine returned an error';
    case 'aborted':
      return 'the run was aborted';
    case 'completed':
      return 'the run completed';
  }
}

function describeRun(capture: CaptureResult | null, failure: string | null, passesExpected: number): { run: CaseRun; stop: RunStop | null } {
  if (capture === null) {
    const outcome: RunOutcome = { status: 'crashed', message: failure ?? 'the engine host died', last_pass: null, last_boundary: null };
    const summary = `the engine host died before pass 0 could run: ${outcome.message}`;
    return { run: { outcome, passesExpected, passesCompleted: 0, signal: null, summary }, stop: { pass: 0, description: summary } };
  }
  const { run, passes } = capture;
  const completed = passes.filter((pass) => pass.status === 'ok').length;
  const last: PassResult | undefined = passes.at(-1);
  const signal = last?.status === 'crashed' ? last.signal : null;
  if (run.status === 'completed') return { run: { outcome: run, passesExpected, passesCompleted: completed, signal, summary: '' }, stop: null };
  const pass = last !== undefined && last.status !== 'ok' ? last.index : (run.last_pass ?? 0);
  const lastBoundary = last !== undefined && last.status !== 'ok' ? last.lastBoundary : run.last_boundary;
  const summary =
    `${statusWords(run.status)} in pass ${pass}${last ? ` (${last.kind})` : ''}, ` +
    `${lastBoundary === null ? 'before its first boundary' : `after boundary ${lastBoundary}`}` +
    `${signal ? ` (${signal})` : ''}${run.message ? `: ${run.message}` : ''}`;
  return { run: { outcome: run, passesExpected, passesCompleted: completed, signal, summary }, stop: { pass, description: summary } };
}

async function openNative(dir: string | null): Promise<{ bundle: TraceBundle | null; unreadable: string | null }> {
  if (dir === null) return { bundle: null, unreadable: null };
  try {
    return { bundle: await openBundle(dir), unreadable: null };
  } catch (error) {
    if (error instanceof BundleError) return { bundle: null, unreadable: error.message };
    throw error;
  }
}

async function openOracle(dir: string | null): Promise<TraceBundle | null> {
  if (dir === null) return null;
  // Validated (digests included) before the run; every tensor is digest-checked again as it is read.
  try {
    return await openBundle(dir, { verify: 'none' });
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`oracle bundle ${dir} changed during the run: ${error.message}`);
    throw error;
  }
}

/** What every case of one gate run shares. */
export interface GateCaseContext {
  options: GateOptions;
  /** The engine library, resolved. */
  library: string;
  workDir: string;
  description: EngineDescription;
  ledger: readonly LedgerEntry[];
  /** The contracts used so far, by id: filled in as rows are judged (shared by all cases). */
  contracts: Record<string, Contract>;
  caseIndex: number;
  caseCount: number;
  progress?: (event: GateProgress) => void;
}

/** Runs and judges one case; its gaps are in the result (runGate merges them across cases). */
export async function runGateCase(item: PreparedCase, context: GateCaseContext): Promise<CaseResult> {
  const { options, library, workDir, description, ledger, contracts, caseIndex, caseCount, progress } = context;
  stopIfAborted(options.signal, `before case ${item.caseId}`);
  const passesExpected = item.manifest.passes.length;
  progress?.({ kind: 'case_start', case: item.caseId, caseIndex, caseCount, passes: passesExpected });
  const caseGaps: GapRecord[] = [];
  if (item.oracleDir === null) {
    caseGaps.push({
      id: gapIds.oracleAbsent(item.caseId),
      case: item.caseId,
      reason: `case ${item.caseId} has no fp64 oracle bundle: no boundary was compared against the oracle`,
    });
  }

  const nativeDir = join(workDir, item.folder, 'native');
  await createOutputFolder(join(workDir, item.folder), '--work');
  const captureOptions: CaptureOptions = {
    library,
    referenceDir: item.referenceDir,
    outDir: nativeDir,
    // The weights resolved and digest-checked above, so the capture opens exactly those.
    weightsPath: item.weights?.path ?? null,
    isolation: options.isolation,
    passTimeoutMs: options.passTimeoutMs,
    options: options.engineOptions,
    command: options.command ?? `trace-inspector --gate (case ${item.caseId})`,
    // Verified in full (every file and tensor digest, padding) before any engine ran.
    referenceVerified: true,
    referenceContracts: options.referenceContracts?.source ?? null,
    onPass: (pass) =>
      progress?.({
        kind: 'pass',
        case: item.caseId,
        pass: pass.index,
        passes: passesExpected,
        status: pass.status,
        detail: pass.status === 'ok' ? `${pass.mode}, ${pass.recordCount} records` : pass.message,
      }),
  };
  // Teacher forcing and layer isolation belong to the capture; the gate only asks for them.
  if (options.teacherForce) captureOptions.teacherForce = true;
  if (options.isolate) captureOptions.isolate = true;
  if (options.forceRoundingDecisions === false) captureOptions.forceRoundingDecisions = false;
  if (options.signal !== undefined) captureOptions.signal = options.signal;
  const range = item.passRange;
  if (range !== undefined) {
    // The engine runs from pass 0 through the range; earlier passes are captured only for the
    // audio streams the last range judges whole (pass-range-judge.ts).
    captureOptions.passWindow = { recordFrom: range.from, through: range.to - 1, keepBefore: range.last ? audioBoundedNames(item.manifest) : [] };
  }

  let capture: CaptureResult | null = null;
  let hostFailure: string | null = null;
  try {
    capture = await captureRun(captureOptions);
  } catch (error) {
    if (error instanceof CaptureAbortedError) throw new GateAbortedError(`case ${item.caseId}: ${error.message}`);
    if (error instanceof InputError) throw error.within(`case ${item.caseId}`);
    if (error instanceof EngineLoadError || error instanceof BundleError || error instanceof EngineCallError) {
      throw new InputError(`case ${item.caseId}: ${error.message}`);
    }
    // The engine died outside a pass (opening the session, setting an input): a crash, judged as one.
    if (error instanceof EngineHostDeadError || error instanceof EngineHostError) hostFailure = error.message;
    else throw error;
  }
  stopIfAborted(options.signal, `during case ${item.caseId} (its capture is finished as aborted in ${nativeDir})`);
  const { run, stop } = describeRun(capture, hostFailure, passesExpected);
  const nativeManifest = capture?.manifestPath ?? null;
  const nativeFolder = nativeManifest === null ? null : nativeDir;

  const reference =
    capture?.reference ?? (await withContracts(await openBundle(item.referenceDir, { verify: 'none' }), options.referenceContracts?.source ?? null));
  const opened = await openNative(nativeFolder);
  let nativeUnreadable = opened.unreadable;
  if (nativeFolder === null && run.outcome.status !== 'completed') {
    const recovery = capture?.passes.at(-1);
    const why = recovery && 'recoveryError' in recovery && recovery.recoveryError ? `: ${recovery.recoveryError}` : '';
    nativeUnreadable = capture === null ? null : `${run.summary}; its capture could not be recovered${why}`;
  }
  const oracle = await openOracle(item.oracleDir);
  let judged;
  try {
    const judge = range === undefined ? judgeCase : (input: CaseJudgeInput) => judgeCaseRange(input, range);
    judged = await judge({
      caseId: item.caseId,
      reference,
      native: opened.bundle,
      oracle,
      description,
      ledger,
      stop,
      nativeUnreadable,
      contracts,
      onCompared: (done, total) => progress?.({ kind: 'compare', case: item.caseId, done, total }),
    });
    await options.onCaseJudged?.({ caseId: item.caseId, reference, native: opened.bundle });
  } finally {
    await Promise.all([reference.close(), opened.bundle?.close(), oracle?.close()]);
    // The comparison's hashing workers are idle until the next case: their rings and heaps go
    // now, not after the receipt is signed (the gate process's peak at 10 GiB is at its end).
    leafHashPool().endIdleWorkers();
  }

  const seenInCase = new Set(caseGaps.map((gap) => gap.id));
  for (const verdict of judged.verdicts) {
    if (verdict.gapId === null || seenInCase.has(verdict.gapId)) continue;
    seenInCase.add(verdict.gapId);
    caseGaps.push({ id: verdict.gapId, case: verdict.gapId.startsWith('not_in_catalogue:') ? null : item.caseId, reason: verdict.reason });
  }
  const firstDivergence = judged.verdicts.findIndex((verdict) => verdict.verdict === 'FAIL' || verdict.verdict === 'REVIEW_REQUIRED');
  const result: CaseResult = {
    id: item.caseId,
    reference: item.reference,
    oracle: item.oracle,
    weights: item.weights,
    nativeDir: nativeFolder,
    isolatedDir: capture?.isolated?.manifestPath ? capture.isolated.dir : null,
    teacherForcing: capture?.teacherForcing ?? null,
    run,
    verdicts: judged.verdicts,
    counts: judged.counts,
    compared: judged.compared,
    firstDivergence: firstDivergence === -1 ? null : firstDivergence,
    unreadable: judged.unreadable,
    gaps: caseGaps,
    audio: judged.audio,
    ...(range !== undefined ? { passRange: { from: range.from, to: range.to } } : {}),
  };
  progress?.({ kind: 'case_end', case: item.caseId, caseIndex, caseCount, counts: judged.counts, run: run.outcome.status });
  return result;
}

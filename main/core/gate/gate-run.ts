// runGate: the headless gate. For each case it captures a native run of the engine (crash-
// isolated, into <workDir>/<case>/native), then judges every (pass, boundary) of the reference
// against the native bundle and the fp64 oracle, and seals the whole run (seals.ts).
//
// Everything the gate is given is validated before the engine runs a single pass: every
// reference and oracle bundle (manifest, provenance, digests), the weights, the ledger, the
// engine library and its catalogue, the work folders. A problem there is a InputError
// (exit 2, nothing written). Once the engine runs, what goes wrong is a verdict, not an error:
// a crash, a hang or an engine error makes the boundaries never reached FAIL (kind missing,
// the crash named) and the run FIDELITY: FAIL.
import { summarize } from './bundle-summary.ts';
import { readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { EngineCallError, EngineHostDeadError, EngineHostError, EngineLoadError } from '../../engine-host/engine-errors.ts';
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import { EngineHost, type PassResult } from '../../engine-host/engine-host.ts';
import { nothingToForce } from '../capture/teacher-forcing.ts';
import { catalogueProblem, oracleStorageProblem } from './upfront-checks.ts';
import { checkGivenWeights, NATIVE_AS_REFERENCE, openBundle, resolveWeights, type TraceBundle } from '../bundle/bundle-reader.ts';
import { sha256File } from '../bundle/digest.ts';
import { BundleError } from '../bundle/errors.ts';
import type { BundleManifest, Contract, RunOutcome } from '../bundle/manifest-schema.ts';
import { CaptureAbortedError, captureRun, type CaptureOptions, type CaptureResult } from '../capture/capture-run.ts';
import { safePathComponent } from '../bundle/path-confinement.ts';
import { toolInfo } from '../tool/tool-info.ts';
import type { ContractSource } from '../compare/contracts-file.ts';
import { withContracts } from '../compare/contracted-bundle.ts';
import { admitReference } from '../compare/reference-contracts.ts';
import { judgeCase, type RunStop } from './case-verdicts.ts';
import {
  emptyCounts,
  type BundleSummary,
  type CaseResult,
  type CaseRun,
  type DivergenceRef,
  type EngineSummary,
  type GapRecord,
  type GateOptions,
  type GateProgress,
  type GateResult,
} from './gate-types.ts';
import { LedgerError, loadLedger, type LedgerCase } from './ledger.ts';
import { computeSeals } from './seals.ts';
import { shardAssignment, shardPlanDigest, type ShardInfo, type ShardSpec } from './gate-shard.ts';
import { gapIds } from './verdicts.ts';
import { createOutputFolder } from '../io/output-folder.ts';
import { InputError } from '../io/input-error.ts';

/** The run was stopped (options.signal): what was captured stays in the work folder, nothing is signed. */
export class GateAbortedError extends Error {
  override name = 'GateAbortedError';
}

function stopIfAborted(signal: AbortSignal | undefined, where: string): void {
  if (signal?.aborted) throw new GateAbortedError(`${typeof signal.reason === 'string' ? signal.reason : 'aborted'} ${where}`);
}

interface PreparedCase {
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
}


async function openValidated(dir: string, expectedKind: 'reference' | 'oracle-f64', role: string, contracts: ContractSource | null = null): Promise<TraceBundle> {
  let bundle: TraceBundle;
  try {
    bundle = await openBundle(dir, { checkPadding: true });
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`${role} bundle ${dir} is not valid: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError(`${role} bundle ${dir}: no such bundle folder`);
    throw error;
  }
  if (expectedKind === 'reference' && contracts !== null) {
    // Supplied contracts (--contracts / --contract) let a native bundle be the reference; every
    // rule is evaluated now, so a rule that cannot apply is refused before the engine runs.
    try {
      await admitReference(bundle, contracts);
      return bundle;
    } catch (error) {
      await bundle.close();
      if (error instanceof InputError) throw error.within(`${role} bundle ${dir}`);
      if (error instanceof BundleError) throw new InputError(`${role} bundle ${dir}: ${error.message}`);
      throw error;
    }
  }
  if (bundle.manifest.kind !== expectedKind) {
    await bundle.close();
    const why = bundle.manifest.kind === 'native' && expectedKind === 'reference' ? `: ${NATIVE_AS_REFERENCE}` : '';
    throw new InputError(`${role} bundle ${dir}: ${bundle.manifestPath}: kind: is "${bundle.manifest.kind}", expected "${expectedKind}"${why}`);
  }
  return bundle;
}

async function prepareCases(options: GateOptions): Promise<PreparedCase[]> {
  if (options.cases.length === 0) throw new InputError('no cases to run: give at least one reference bundle');
  const prepared: PreparedCase[] = [];
  const seen = new Map<string, string>();
  const folders = new Set<string>();
  for (const given of options.cases) {
    const referenceDir = resolve(given.referenceDir);
    const reference = await openValidated(referenceDir, 'reference', 'reference', options.referenceContracts?.source ?? null);
    try {
      const caseId = reference.manifest.case.id;
      const earlier = seen.get(caseId);
      if (earlier !== undefined) throw new InputError(`reference bundles ${earlier} and ${referenceDir} are both case "${caseId}"; give each case once`);
      seen.set(caseId, referenceDir);
      // One safe path component (also a receipt subject name segment); two ids that sanitise
      // alike ("a/b", "a_b") get distinct folders.
      const base = safePathComponent(caseId);
      let folder = base;
      for (let n = 2; folders.has(folder); n += 1) folder = `${base}-${n}`;
      folders.add(folder);
      let weightsPath: string | null;
      try {
        weightsPath =
          options.weightsPath === undefined ? await resolveWeights(reference) : await checkGivenWeights(reference, resolve(options.weightsPath), '--weights');
      } catch (error) {
        if (error instanceof BundleError) throw new InputError(error.message);
        throw error;
      }
      let oracle: BundleSummary | null = null;
      const oracleDir = given.oracleDir === null ? null : resolve(given.oracleDir);
      if (oracleDir !== null) {
        const oracleBundle = await openValidated(oracleDir, 'oracle-f64', 'oracle');
        try {
          if (oracleBundle.manifest.case.id !== caseId) {
            throw new InputError(`oracle bundle ${oracleDir} is case "${oracleBundle.manifest.case.id}", its reference ${referenceDir} is case "${caseId}"`);
          }
          const storage = oracleStorageProblem(reference.manifest, reference.manifestPath, oracleBundle.manifest, oracleBundle.manifestPath);
          if (storage !== null) throw new InputError(storage);
          oracle = await summarize(oracleBundle, `${folder}/${basename(oracleDir)}/manifest.json`);
        } finally {
          await oracleBundle.close();
        }
      }
      prepared.push({
        caseId,
        folder,
        referenceDir,
        oracleDir,
        manifest: reference.manifest,
        reference: await summarize(reference, `${folder}/${basename(referenceDir)}/manifest.json`),
        oracle,
        weights: weightsPath === null ? null : { path: weightsPath, sha256: reference.manifest.provenance.model.weights_sha256 ?? '', subjectName: basename(weightsPath) },
      });
    } finally {
      await reference.close();
    }
  }
  // Receipt subject names must be unique: different weights sharing a file name get the case as prefix.
  const byName = new Map<string, string>();
  for (const item of prepared) {
    if (item.weights === null) continue;
    const other = byName.get(item.weights.subjectName);
    if (other !== undefined && other !== item.weights.sha256) item.weights.subjectName = `${item.folder}/${item.weights.subjectName}`;
    else byName.set(item.weights.subjectName, item.weights.sha256);
  }
  return prepared;
}

/** Loads the engine once to read its catalogue (and prove it is an engine) before any case runs. */
async function describeEngine(options: GateOptions): Promise<{ description: EngineDescription; summary: EngineSummary }> {
  let host: EngineHost;
  try {
    host = await EngineHost.start({ library: options.library, isolation: options.isolation, passTimeoutMs: options.passTimeoutMs });
  } catch (error) {
    if (error instanceof EngineLoadError) throw new InputError(error.message);
    throw error;
  }
  try {
    const description = host.description;
    return {
      description,
      summary: {
        library: host.library,
        sha256: host.librarySha256,
        subjectName: basename(host.library),
        name: description.engine.name,
        version: description.engine.version,
        buildId: description.engine.build_id,
        abiVersion: description.abi_version,
        catalogue: description.boundaries.map((boundary) => boundary.name),
      },
    };
  } finally {
    await host.close().catch(() => undefined);
  }
}

async function assertFreshFolder(dir: string): Promise<void> {
  try {
    const entries = await readdir(dir);
    if (entries.length > 0) throw new InputError(`${dir} exists and is not empty; the gate never writes over a previous run (give a fresh --work folder)`);
  } catch (error) {
    if (error instanceof InputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new InputError(`${dir}: a file is in the way of the work folder`);
    throw error;
  }
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

function addGap(gaps: GapRecord[], seen: Set<string>, gap: GapRecord): void {
  if (seen.has(gap.id)) return;
  seen.add(gap.id);
  gaps.push(gap);
}

export async function runGate(options: GateOptions, progress?: (event: GateProgress) => void): Promise<GateResult> {
  const startedAt = new Date().toISOString();
  const tool = toolInfo();
  const workDir = resolve(options.workDir);
  const library = resolve(options.library);
  const ledgerFile = options.ledgerFile === null ? null : resolve(options.ledgerFile);

  // ---- everything validated before the engine runs ------------------------------------------
  const prepared = await prepareCases(options);
  const ledgerCases: LedgerCase[] = prepared.map((item) => ({
    caseId: item.caseId,
    referenceDir: item.referenceDir,
    manifestPath: item.reference.manifestPath,
    manifest: item.manifest,
  }));
  let ledger;
  try {
    ledger = await loadLedger(ledgerCases, ledgerFile);
  } catch (error) {
    if (error instanceof LedgerError) throw new InputError(`ledger ${error.message}`);
    throw error;
  }
  const { description, summary: engine } = await describeEngine({ ...options, library });
  let shard: ShardInfo | undefined;
  if (options.shard !== undefined) {
    const chosen = await chooseShard(prepared, options, engine.sha256, ledgerFile);
    shard = chosen.info;
    prepared.splice(0, prepared.length, ...chosen.prepared);
  }
  for (const item of prepared) {
    const disagreement = catalogueProblem(item.manifest, item.reference.manifestPath, 'reference', description, library);
    if (disagreement !== null) throw new InputError(disagreement);
    const unforced = options.teacherForce ? nothingToForce({ passes: item.manifest.passes, manifestPath: item.reference.manifestPath }, description) : null;
    if (unforced !== null) throw new InputError(`case ${item.caseId}: ${unforced}`);
  }
  for (const item of prepared) {
    await assertFreshFolder(join(workDir, item.folder, 'native'));
    if (options.isolate) await assertFreshFolder(join(workDir, item.folder, 'native-isolated'));
  }

  // ---- run and judge each case ---------------------------------------------------------------
  const contracts: Record<string, Contract> = {};
  const cases: CaseResult[] = [];
  const gaps: GapRecord[] = [];
  const gapSeen = new Set<string>();
  for (const [caseIndex, item] of prepared.entries()) {
    stopIfAborted(options.signal, `before case ${item.caseId}`);
    const passesExpected = item.manifest.passes.length;
    progress?.({ kind: 'case_start', case: item.caseId, caseIndex, caseCount: prepared.length, passes: passesExpected });
    const caseGaps: GapRecord[] = [];
    if (item.oracleDir === null) {
      caseGaps.push({ id: gapIds.oracleAbsent(item.caseId), case: item.caseId, reason: `case ${item.caseId} has no fp64 oracle bundle: no boundary was compared against the oracle` });
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

    const reference = capture?.reference ?? (await withContracts(await openBundle(item.referenceDir, { verify: 'none' }), options.referenceContracts?.source ?? null));
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
      judged = await judgeCase({
        caseId: item.caseId,
        reference,
        native: opened.bundle,
        oracle,
        description,
        ledger: ledger.entries,
        stop,
        nativeUnreadable,
        contracts,
        onCompared: (done, total) => progress?.({ kind: 'compare', case: item.caseId, done, total }),
      });
    } finally {
      await Promise.all([reference.close(), opened.bundle?.close(), oracle?.close()]);
    }

    const seenInCase = new Set(caseGaps.map((gap) => gap.id));
    for (const verdict of judged.verdicts) {
      if (verdict.gapId === null || seenInCase.has(verdict.gapId)) continue;
      seenInCase.add(verdict.gapId);
      caseGaps.push({ id: verdict.gapId, case: verdict.gapId.startsWith('not_in_catalogue:') ? null : item.caseId, reason: verdict.reason });
    }
    for (const gap of caseGaps) addGap(gaps, gapSeen, gap);
    const firstDivergence = judged.verdicts.findIndex((verdict) => verdict.verdict === 'FAIL' || verdict.verdict === 'REVIEW_REQUIRED');
    cases.push({
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
    });
    progress?.({ kind: 'case_end', case: item.caseId, caseIndex, caseCount: prepared.length, counts: judged.counts, run: run.outcome.status });
  }

  // ---- seal ----------------------------------------------------------------------------------
  const counts = emptyCounts();
  let compared = 0;
  let firstDivergence: DivergenceRef | null = null;
  for (const item of cases) {
    for (const verdict of Object.keys(counts) as (keyof typeof counts)[]) counts[verdict] += item.counts[verdict];
    compared += item.compared;
    if (firstDivergence === null && item.firstDivergence !== null) firstDivergence = { case: item.id, index: item.firstDivergence };
  }
  const seals = computeSeals({
    compared,
    counts,
    runStatuses: cases.map((item) => item.run.outcome.status),
    emptyCases: cases.filter((item) => item.compared === 0).map((item) => item.id),
    unreadable: cases.some((item) => item.unreadable !== null),
    gapIds: gaps.map((gap) => gap.id),
    strict: options.strict,
  });
  return {
    schema: 'trace-inspector.gate-result',
    schema_version: 1,
    tool: { name: tool.name, version: tool.version, commit: tool.commit, dirty: tool.dirty },
    startedAt,
    finishedAt: new Date().toISOString(),
    strict: options.strict,
    options: {
      isolation: options.isolation,
      passTimeoutMs: options.passTimeoutMs,
      engineOptions: { ...options.engineOptions },
      teacherForce: options.teacherForce,
      isolate: options.isolate,
      workDir,
      ledgerFile,
      referenceContracts:
        options.referenceContracts == null
          ? null
          : { description: options.referenceContracts.description, file: options.referenceContracts.file, sha256: options.referenceContracts.sha256 },
    },
    engine,
    ledger: ledger.entries,
    warnings: ledger.warnings,
    cases,
    contracts,
    gaps,
    counts,
    compared,
    firstDivergence,
    seals,
    ...(shard !== undefined ? { shard } : {}),
  };
}

/** This shard's cases (in plan order) and the shard record for its result. */
async function chooseShard(prepared: readonly PreparedCase[], options: GateOptions, engineSha256: string, ledgerFile: string | null): Promise<{ prepared: PreparedCase[]; info: ShardInfo }> {
  const spec = options.shard as ShardSpec;
  let assignment;
  try {
    assignment = shardAssignment(prepared.map((item) => item.caseId), spec);
  } catch (error) {
    throw new InputError((error as Error).message);
  }
  const plan = shardPlanDigest({
    cases: prepared.map((item) => ({
      id: item.caseId,
      referenceManifestSha256: item.reference.manifestSha256,
      oracleManifestSha256: item.oracle?.manifestSha256 ?? null,
      weightsSha256: item.weights?.sha256 ?? null,
    })),
    engineSha256,
    engineOptions: options.engineOptions,
    strict: options.strict,
    teacherForce: options.teacherForce,
    isolate: options.isolate,
    ledgerSha256: ledgerFile === null ? null : (await sha256File(ledgerFile)).sha256,
    count: spec.count,
  });
  const byId = new Map(prepared.map((item) => [item.caseId, item]));
  return {
    prepared: assignment.assigned.map((id) => byId.get(id) as PreparedCase),
    info: { index: spec.index, count: spec.count, plan, cases: assignment.cases, assigned: assignment.assigned },
  };
}


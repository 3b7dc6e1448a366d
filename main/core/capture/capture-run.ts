// Runs a native engine over a reference bundle's case — its inputs, then prefill and as many
// decode passes as the reference has — and captures every record into a native bundle.
// The engine runs in an isolated engine-host process by default, so a crash or hang ends the
// run with what was captured, never the caller.
//
// Two options inject reference values while the engine runs (the engine records its own value at
// an injected boundary and continues with the injected one):
//   teacherForce  every pass gets the reference's token-like boundaries (teacher-forcing.ts);
//   isolate       after the normal capture, a second session captures an "isolated" bundle in
//                 which every injectable boundary gets the reference value (layer-isolation.ts).
import { existsSync, rmdirSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { realpath } from 'node:fs/promises';
import { EngineCallError, EngineHostDeadError, EngineHostError } from '../../engine-host/engine-errors.ts';
import { EngineHost, type Isolation, type PassResult } from '../../engine-host/engine-host.ts';
import { openBundle, resolveWeights, type TraceBundle } from '../bundle/bundle-reader.ts';
import type { ContractSource } from '../compare/contracts-file.ts';
import { admitReference } from '../compare/reference-contracts.ts';
import { acquireCaptureLock, CAPTURE_LOCK_FILE_NAME, CaptureLockedError, lockHolderAlive, readCaptureLock, type CaptureLock } from '../bundle/capture-lock.ts';
import { JOURNAL_FILE_NAME } from '../bundle/capture-journal.ts';
import { sha256File } from '../bundle/digest.ts';
import { stillAsPinned } from '../bundle/file-pins.ts';
import { MANIFEST_FILE_NAME, type BundleManifest, type RunOutcome } from '../bundle/manifest-schema.ts';
import type { NativeCaptureHeader } from '../bundle/native-bundle-writer.ts';
import { toolInfo } from '../tool/tool-info.ts';
import { addRuntimeProvenance, type InjectionPlan, type RuntimeValue } from './injection-plan.ts';
import { combinePlans, roundingDecisionPlan } from './rounding-decisions.ts';
import { isolatedBundleDir, isolationPlan, isolationRuntime } from './layer-isolation.ts';
import {
  summarizeTeacherForcing,
  nothingToForce,
  teacherForcingPlan,
  teacherForcingRuntimeAfterRun,
  teacherForcingRuntimeAtStart,
  type TeacherForcingSummary,
} from './teacher-forcing.ts';
import { createOutputFolder, OutputFolderError } from '../io/output-folder.ts';
import { InputError } from '../io/input-error.ts';
import { capturePoolBytes } from './capture-pool-size.ts';

export interface CaptureOptions {
  /** Engine shared library. */
  library: string;
  /** The reference bundle whose case is run. */
  referenceDir: string;
  /**
   * Contracts supplied from elsewhere (--contracts / --contract): they let a native bundle be the
   * reference, and replace the reference's own where a rule matches (reference-contracts.ts).
   */
  referenceContracts?: ContractSource | null;
  /** Where the native bundle is written; must not exist or be empty. */
  outDir: string;
  /**
   * The caller has just opened the reference with full verification (every file and tensor
   * digest, its padding): open it without hashing every file again (each tensor is still
   * digest-checked as it is read). Default false: the capture verifies it in full.
   */
  referenceVerified?: boolean;
  /**
   * Weights file; default: the reference's provenance.model.weights_file (digest-checked), none
   * when it names none. null: open the engine with no weights (the gate's choice, made above).
   */
  weightsPath?: string | null;
  isolation?: Isolation;
  passTimeoutMs?: number;
  /** Engine options set before the run (perturbations, knobs). */
  options?: Readonly<Record<string, string>>;
  /** The command line that asked for this capture, recorded in provenance. */
  command: string;
  onPass?: (result: PassResult) => void;
  /**
   * Teacher forcing: before every pass, inject the reference's value of every token-like boundary
   * (injectable, integer dtype) the reference has for that pass. The native records keep the
   * engine's own choices; provenance.runtime says the run was forced and where it differed.
   */
  teacherForce?: boolean;
  /**
   * Inject the reference value at every boundary whose contract admits a discrete difference
   * (max_ulp), so later stages are judged from the same input (rounding-decisions.ts).
   * Default true; false lets a legitimate one-ULP rounding flip propagate.
   */
  forceRoundingDecisions?: boolean;
  /**
   * Layer isolation: after the capture, capture a second, "isolated" native bundle in which every
   * injectable boundary of every pass receives the reference value (see layer-isolation.ts).
   */
  isolate?: boolean;
  /** Where the isolated bundle goes; default `<outDir>-isolated` (must be absent or empty). */
  isolatedOutDir?: string;
  /** Called after each pass of the isolated run. */
  onIsolatedPass?: (result: PassResult) => void;
  /**
   * Stops the run when aborted (its reason, a string such as "SIGINT received", is recorded):
   * the engine is stopped at once, the bundle is finished as `aborted` with every sealed pass
   * and the whole records of the pass in flight. Aborted before the capture began: rejects
   * with CaptureAbortedError and writes nothing.
   */
  signal?: AbortSignal;
  /**
   * A pass-sharded gate (main/core/gate/pass-split.ts): run the reference's passes only through
   * pass `through` (decode state needs every earlier one, so the engine always starts at pass 0),
   * and capture the records of passes before `recordFrom` only for the boundaries in `keepBefore`
   * (the engine host drops the others before any copy, hash or write). Default: every pass, every record.
   */
  passWindow?: CapturePassWindow;
}

export interface CapturePassWindow {
  readonly recordFrom: number;
  readonly through: number;
  readonly keepBefore: readonly string[];
}

/** The second, isolated capture of a run asked for with `isolate`. */
export interface IsolatedCapture {
  dir: string;
  /** manifest.json of the isolated bundle; null when it was not captured (see skipped) or could not be recovered. */
  manifestPath: string | null;
  run: RunOutcome | null;
  passes: PassResult[];
  /** Why the isolated run did not happen (the main run crashed or hung), null when it ran. */
  skipped: string | null;
}

export interface CaptureResult {
  reference: TraceBundle;
  /** manifest.json of the native bundle (complete or recovered); null if none could be written. */
  manifestPath: string | null;
  run: RunOutcome;
  passes: PassResult[];
  /** Present when teacherForce was asked and a native bundle was written. */
  teacherForcing?: TeacherForcingSummary;
  /** Present when isolate was asked. */
  isolated?: IsolatedCapture;
}

/**
 * Refuses to write evidence over anything: the target must be absent or an empty folder (its
 * capture lock aside, see takeTarget). Every way it can fail is an InputError naming it.
 */
async function assertFreshTarget(outDir: string, lockIsOurs = false): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(outDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw targetError(outDir, error);
  }
  entries = entries.filter((entry) => entry !== CAPTURE_LOCK_FILE_NAME);
  const lock = lockIsOurs ? null : readCaptureLock(outDir);
  if (lock !== null && lockHolderAlive(lock)) throw new InputError(`--out ${new CaptureLockedError(outDir, lock).message}`);
  if (entries.includes(JOURNAL_FILE_NAME) && !entries.includes(MANIFEST_FILE_NAME)) {
    throw new InputError(
      `--out ${outDir}: the folder holds an interrupted capture (${JOURNAL_FILE_NAME} without ${MANIFEST_FILE_NAME}); ` +
        `run \`trace-inspector recover ${outDir}\` to seal what it holds, or choose another --out`,
    );
  }
  if (entries.length > 0) {
    throw new InputError(`--out ${outDir}: the folder exists and is not empty; captures never write over existing data`);
  }
}

/** A file-system failure on the target, as a usage error that says what is in the way. */
function targetError(outDir: string, error: unknown): InputError {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOTDIR':
      return new InputError(`--out ${outDir}: ${isFile(outDir) ? 'is a file, not a folder' : 'lies below a file (a path component is not a folder)'}`);
    case 'EEXIST':
      return new InputError(`--out ${outDir}: exists and is not a folder`);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new InputError(`--out ${outDir}: cannot be written (${code})`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new InputError(`--out ${outDir}: the disk is full (${code}); nothing was captured`);
    case 'ENAMETOOLONG':
    case 'ELOOP':
    case 'EINVAL':
      return new InputError(`--out ${outDir}: not a usable folder path (${code})`);
    default:
      return new InputError(`--out ${outDir}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Takes the target for this capture: checks it is fresh, then creates it and its capture lock
 * (O_EXCL), so a second capture into the same folder at the same time is refused by name.
 */
async function takeTarget(outDir: string): Promise<CaptureLock> {
  await assertFreshTarget(outDir);
  const created = !existsSync(outDir);
  let lock: CaptureLock;
  try {
    lock = acquireCaptureLock(outDir);
  } catch (error) {
    if (error instanceof CaptureLockedError) throw new InputError(`--out ${error.message}`);
    if (error instanceof OutputFolderError) throw new InputError(error.message);
    throw targetError(outDir, error);
  }
  try {
    // Another capture may have finished into it between the check and the lock.
    await assertFreshTarget(outDir, true);
  } catch (error) {
    lock.release();
    throw error;
  }
  return {
    path: lock.path,
    release() {
      lock.release();
      // A folder this capture made and never wrote into (the engine did not load, the isolated
      // run was skipped) goes again.
      if (created) {
        try {
          rmdirSync(outDir);
        } catch {
          // not empty: it holds the capture
        }
      }
    },
  };
}

/** Writing the bundle failed (ENOSPC, EROFS...): the message says what was kept and how to recover it. */
export class CaptureWriteError extends Error {
  override name = 'CaptureWriteError';
}

/** The capture was stopped (Ctrl+C, SIGTERM) before it wrote anything: no bundle. */
export class CaptureAbortedError extends Error {
  override name = 'CaptureAbortedError';
}

/** The weights an engine was opened with: the file and its sha256. */
export interface WeightsUsed {
  readonly path: string;
  readonly sha256: string;
}

/**
 * The weights a capture opens the engine with: the reference's own (resolveWeights, checked
 * against its digest), a file the user names (`given`: hashed here, unless this process has
 * already verified it, unchanged since, against the reference's digest, as the gate's --weights
 * does), or none (`given` null, or a reference that names none).
 */
export async function weightsForCapture(reference: TraceBundle, given: string | null | undefined): Promise<WeightsUsed | null> {
  if (given === null) return null;
  const expected = reference.manifest.provenance.model.weights_sha256;
  if (given === undefined) {
    const path = await resolveWeights(reference);
    return path === null || expected === undefined ? null : { path, sha256: expected };
  }
  const path = resolve(given);
  if (expected !== undefined && (await stillAsPinned(await realpath(path), expected))) return { path, sha256: expected };
  return { path, sha256: (await sha256File(path)).sha256 };
}

/**
 * The reference's model as this capture ran it. The weights are named relative to the native
 * bundle's own folder (a manifest names them relative to itself), with the digest of the file
 * the engine was given, so a capture that stands as the reference of another engine (compare,
 * the app) opens that engine with the same weights; a capture run with none names none.
 */
function modelAsRun(model: BundleManifest['provenance']['model'], weights: WeightsUsed | null, outDir: string): BundleManifest['provenance']['model'] {
  const { weights_file: _file, weights_sha256: _sha256, ...rest } = model;
  return weights === null ? rest : { ...rest, weights_file: relative(outDir, weights.path), weights_sha256: weights.sha256 };
}

/** The header of a native bundle captured from `host` over `reference`'s case into `outDir` (shared with the app's live runs). */
export function nativeHeader(
  reference: BundleManifest,
  host: EngineHost,
  command: string,
  inputs: NativeCaptureHeader['inputs'],
  run: { readonly weights: WeightsUsed | null; readonly outDir: string },
  extraRuntime: Readonly<Record<string, RuntimeValue>> = {},
): NativeCaptureHeader {
  const tool = toolInfo();
  const engine = host.description.engine;
  return {
    kind: 'native',
    case: reference.case,
    provenance: {
      model: modelAsRun(reference.provenance.model, run.weights, resolve(run.outDir)),
      generator: {
        implementation: `trace-inspector ${tool.version} capture`,
        revision: tool.commit === 'unknown' ? '0000000' : tool.commit,
        dirty: tool.dirty,
        command,
      },
      runtime: {
        node: process.version,
        engine_name: engine.name,
        engine_version: engine.version,
        engine_build_id: engine.build_id,
        engine_library_sha256: host.librarySha256,
        engine_abi_version: host.description.abi_version,
        engine_library: host.library,
        ...extraRuntime,
      },
      precision: 'native',
      created_at: new Date().toISOString(),
    },
    inputs,
  };
}

/** How a run ended, from its last pass (shared with the app's live runs). */
export function outcomeOf(result: PassResult, lastBoundary: string | null): RunOutcome {
  switch (result.status) {
    case 'ok':
      return { status: 'completed', message: '', last_pass: result.index, last_boundary: lastBoundary };
    case 'engine_error':
      return {
        status: 'engine_error',
        message: `${result.code}: ${result.message}`,
        last_pass: result.index,
        last_boundary: result.lastBoundary,
      };
    case 'crashed':
      return { status: 'crashed', message: result.message, last_pass: result.index, last_boundary: result.lastBoundary };
    case 'timeout':
      return { status: 'timeout', message: result.message, last_pass: result.index, last_boundary: result.lastBoundary };
    case 'aborted':
      return { status: 'aborted', message: result.message, last_pass: result.index, last_boundary: result.lastBoundary };
  }
}

/** An engine refusing what it was given before any pass ran is invalid input, not a failed run. */
async function refusedAsUsage(what: string, call: () => Promise<void>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof EngineCallError) throw new InputError(`the engine refused ${what}: ${error.message}`, null, error);
    throw error;
  }
}

/**
 * Opens the session and sets the options and the reference's inputs; returns the inputs for the
 * header. An engine refusing any of it is an InputError naming what it refused.
 */
export async function prepareSession(
  host: EngineHost,
  reference: TraceBundle,
  weightsPath: string | null,
  engineOptions: Readonly<Record<string, string>> = {},
): Promise<NativeCaptureHeader['inputs']> {
  // null: the reference names no weights, and ti_open gets a NULL weights_path.
  await refusedAsUsage(weightsPath === null ? 'opening a session with no weights' : `opening a session with weights ${weightsPath}`, () =>
    host.open({}, weightsPath),
  );
  for (const [key, value] of Object.entries(engineOptions)) {
    await refusedAsUsage(`option ${key}=${value}`, () => host.setOption(key, value));
  }
  const inputs: NativeCaptureHeader['inputs'] = [];
  for (const entry of reference.manifest.inputs) {
    const tensor = await reference.readInput(entry.name);
    await refusedAsUsage(`input ${entry.name} of ${reference.manifestPath}`, () =>
      host.setInput(entry.name, { dtype: tensor.dtype, shape: tensor.shape, data: tensor.data }),
    );
    inputs.push({ name: entry.name, dtype: tensor.dtype, shape: [...tensor.shape], data: tensor.data });
  }
  return inputs;
}

interface SessionCapture {
  manifestPath: string | null;
  run: RunOutcome;
  passes: PassResult[];
  /** Injections made over the run. */
  injections: number;
}

/**
 * Runs every pass of the reference into a native bundle in `outDir`, injecting what `plan` says
 * before each pass. An injection the engine refuses ends the run as an engine error naming it.
 */
async function captureSession(
  host: EngineHost,
  reference: TraceBundle,
  outDir: string,
  header: NativeCaptureHeader,
  plan: InjectionPlan | null,
  onPass: ((result: PassResult) => void) | undefined,
  window: CapturePassWindow | null = null,
): Promise<SessionCapture> {
  const passes: PassResult[] = [];
  await createOutputFolder(outDir, 'the capture folder');
  try {
    // Nothing reads the bundle before it is finished: the writer seals each pass behind the engine.
    await host.beginCapture(outDir, header, {
      sealBehind: true,
      poolBytes: capturePoolBytes(reference.passes),
      ...(window === null ? {} : { recordFrom: window.recordFrom, keepBefore: window.keepBefore }),
    });
  } catch (error) {
    if (error instanceof EngineHostError) throw new CaptureWriteError(`the capture could not start in ${outDir}: ${error.message}`);
    throw error;
  }
  try {
    return await capturePasses(host, reference, plan, onPass, passes, window?.through ?? null);
  } catch (error) {
    if (error instanceof EngineHostError) {
      // Writing the bundle failed (a full disk, a folder made read-only...): what was sealed stays.
      throw new CaptureWriteError(
        `the capture in ${outDir} could not be written to the end: ${error.message}. ` +
          `Every pass sealed before it is kept with the capture journal: once the cause is fixed, run \`trace-inspector recover ${outDir}\``,
      );
    }
    // The host died between passes (aborted, or killed while finishing): it recovered the capture.
    const recovery = host.recovery;
    if (!(error instanceof EngineHostDeadError) || recovery === null) throw error;
    const last = passes.at(-1);
    const run: RunOutcome = { status: 'aborted', message: error.message, last_pass: last?.index ?? null, last_boundary: host.lastRecordSeen?.name ?? null };
    if (recovery.manifestPath !== null) {
      const recovered = await openBundle(outDir, { verify: 'none' });
      const status = recovered.manifest.run?.status;
      await recovered.close();
      if (status !== undefined) run.status = status;
    }
    return { manifestPath: recovery.manifestPath, run, passes, injections: 0 };
  }
}

async function capturePasses(
  host: EngineHost,
  reference: TraceBundle,
  plan: InjectionPlan | null,
  onPass: ((result: PassResult) => void) | undefined,
  passes: PassResult[],
  through: number | null,
): Promise<SessionCapture> {
  let lastBoundary: string | null = null;
  const unsubscribe = host.onRecord((event) => {
    lastBoundary = event.name;
  });
  let injections = 0;
  let run: RunOutcome = { status: 'completed', message: '', last_pass: null, last_boundary: null };
  try {
    for (const pass of reference.passes) {
      if (through !== null && pass.index > through) break;
      if (plan !== null) {
        const injected = await injectForPass(host, plan, pass.index);
        if (injected.refused !== null) {
          run = { status: 'engine_error', message: injected.refused, last_pass: passes.at(-1)?.index ?? null, last_boundary: lastBoundary };
          break;
        }
        injections += injected.count;
      }
      const result = await host.runPass(pass.kind);
      passes.push(result);
      onPass?.(result);
      run = outcomeOf(result, lastBoundary);
      if (result.status !== 'ok') break;
    }
  } finally {
    unsubscribe();
  }
  const last = passes.at(-1);
  if (last === undefined || last.status === 'ok' || last.status === 'engine_error') {
    const manifestPath = await host.finishCapture(run);
    return { manifestPath, run, passes, injections };
  }
  // The engine-host process died (crash, timeout, abort): the host recovered the bundle from its journal.
  return { manifestPath: last.recoveredManifest, run, passes, injections };
}

/** Injects the plan's values for one pass; `refused` names the injection the engine refused. */
export async function injectForPass(host: EngineHost, plan: InjectionPlan, pass: number): Promise<{ count: number; refused: string | null }> {
  const planned = await plan.injectionsFor(pass);
  for (const { boundary, tensor } of planned) {
    try {
      await host.inject(boundary, { dtype: tensor.dtype, shape: tensor.shape, data: tensor.data });
    } catch (error) {
      if (error instanceof EngineCallError) {
        return { count: 0, refused: `the engine refused the ${plan.purpose.replace('_', ' ')} injection of ${boundary} before pass ${pass}: ${error.message}` };
      }
      throw error;
    }
  }
  return { count: planned.length, refused: null };
}

/** What a capture injects before each pass, and what its header's provenance.runtime says about it. */
export interface CapturePlans {
  /** Teacher forcing (token-like boundaries), when asked. */
  forcing: InjectionPlan | null;
  /** Rounding decisions (max_ulp boundaries), unless turned off. */
  rounding: InjectionPlan | null;
  /** Both combined: what injectForPass is given (null: nothing to inject). */
  plan: InjectionPlan | null;
  runtime: Record<string, RuntimeValue>;
}

export function capturePlans(
  reference: TraceBundle,
  description: EngineHost['description'],
  options: { teacherForce: boolean; forceRoundingDecisions: boolean; referenceSha256: string },
): CapturePlans {
  const unforced = options.teacherForce ? nothingToForce(reference, description) : null;
  if (unforced !== null) throw new InputError(unforced);
  const forcing = options.teacherForce ? teacherForcingPlan(reference, description) : null;
  const rounding = options.forceRoundingDecisions ? roundingDecisionPlan(reference, description) : null;
  const runtime: Record<string, RuntimeValue> = {
    ...(options.teacherForce ? teacherForcingRuntimeAtStart(options.referenceSha256) : {}),
    forced_rounding_decisions: rounding === null ? '' : rounding.boundaries.join(','),
  };
  return { forcing, rounding, plan: combinePlans([rounding, forcing]), runtime };
}

/**
 * After a teacher-forced run is written: summarises where the engine's own tokens differed from
 * the forced ones and adds that to the bundle's provenance.runtime. Null when nothing was forced.
 * `injections` counts every injection made (rounding decisions included).
 */
export async function recordTeacherForcing(
  outDir: string,
  reference: TraceBundle,
  plans: CapturePlans,
  injections: number,
): Promise<TeacherForcingSummary | null> {
  const { forcing, rounding } = plans;
  if (forcing === null) return null;
  let summary: TeacherForcingSummary;
  // Not verified file by file: the summary reads only the forced boundaries (a token or code a
  // pass), and each read of a bundle opened with verify 'none' checks that tensor's own digest. A
  // whole-file verification here hashed the entire run once more, right after it was written and
  // before the gate or the session verifies it for judging.
  const native = await openBundle(outDir, { verify: 'none' });
  try {
    // injections also counts the rounding-decision injections; the summary is about forcing.
    const roundingInjections =
      rounding === null
        ? 0
        : reference.passes.reduce((count, pass) => count + rounding.boundaries.filter((name) => reference.boundary(pass.index, name) !== undefined).length, 0);
    summary = await summarizeTeacherForcing(native, reference, forcing.boundaries, injections - roundingInjections);
  } finally {
    await native.close();
  }
  await addRuntimeProvenance(outDir, teacherForcingRuntimeAfterRun(summary));
  return summary;
}

function startHost(options: CaptureOptions): Promise<EngineHost> {
  return EngineHost.start({
    library: options.library,
    isolation: options.isolation ?? 'process',
    ...(options.passTimeoutMs !== undefined ? { passTimeoutMs: options.passTimeoutMs } : {}),
  });
}

function abortReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'the capture was aborted';
}

export async function captureRun(options: CaptureOptions): Promise<CaptureResult> {
  const opened = await openBundle(resolve(options.referenceDir), options.referenceVerified === true ? { verify: 'none' } : { checkPadding: true });
  let reference: TraceBundle;
  try {
    // A native bundle holds no contracts: it is a reference only with contracts supplied.
    reference = await admitReference(opened, options.referenceContracts ?? null);
  } catch (error) {
    await opened.close();
    throw error;
  }
  // The caller gets the reference open in the result and closes it; a capture refused or failed
  // before it returns closes it here, or its files' descriptors (the padding check read tensors)
  // outlive it until the garbage collector closes them.
  try {
    return await captureAdmitted(reference, options);
  } catch (error) {
    await opened.close().catch(() => undefined);
    throw error;
  }
}

async function captureAdmitted(reference: TraceBundle, options: CaptureOptions): Promise<CaptureResult> {
  const outDir = resolve(options.outDir);
  const isolatedDir = options.isolate ? resolve(options.isolatedOutDir ?? isolatedBundleDir(outDir)) : null;
  if (isolatedDir === outDir) throw new InputError(`the isolated bundle cannot go to --out ${outDir} itself`);
  await assertFreshTarget(outDir);
  if (isolatedDir !== null) await assertFreshTarget(isolatedDir);
  const weights = await weightsForCapture(reference, options.weightsPath === '' ? undefined : options.weightsPath);
  const referenceSha256 = options.teacherForce || options.isolate ? (await sha256File(reference.manifestPath)).sha256 : '';

  const locks: CaptureLock[] = [];
  const signal = options.signal;
  let host: EngineHost | null = null;
  const onAbort = (): void => {
    if (host !== null && signal !== undefined) void host.abort(abortReason(signal));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    locks.push(await takeTarget(outDir));
    if (isolatedDir !== null) locks.push(await takeTarget(isolatedDir));
    host = await startHost(options);
    if (signal?.aborted) throw new CaptureAbortedError(abortReason(signal));
    return await captureWith(host, options, {
      reference,
      outDir,
      isolatedDir,
      weights,
      referenceSha256,
      restart: async () => (host = await startHost(options)),
    });
  } catch (error) {
    // Stopped before the capture began: nothing of it was written.
    if (signal?.aborted && !(error instanceof CaptureAbortedError) && !existsSync(join(outDir, MANIFEST_FILE_NAME))) {
      throw new CaptureAbortedError(`${abortReason(signal)} before the capture began; nothing was written`, { cause: error });
    }
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await (host as EngineHost | null)?.close().catch(() => undefined);
    for (const lock of locks) lock.release();
  }
}

interface CaptureTargets {
  reference: TraceBundle;
  outDir: string;
  isolatedDir: string | null;
  weights: WeightsUsed | null;
  referenceSha256: string;
  /** Starts a fresh host (after the first died) and makes it the one an abort stops. */
  restart(): Promise<EngineHost>;
}

async function captureWith(first: EngineHost, options: CaptureOptions, targets: CaptureTargets): Promise<CaptureResult> {
  const { reference, outDir, isolatedDir, weights, referenceSha256 } = targets;
  const weightsPath = weights?.path ?? null;
  let host = first;
  const inputs = await prepareSession(host, reference, weightsPath, options.options);
  const plans = capturePlans(reference, host.description, {
    teacherForce: options.teacherForce === true,
    forceRoundingDecisions: options.forceRoundingDecisions !== false,
    referenceSha256,
  });
  const main = await captureSession(
    host,
    reference,
    outDir,
    nativeHeader(reference.manifest, host, options.command, inputs, { weights, outDir }, plans.runtime),
    plans.plan,
    options.onPass,
    options.passWindow ?? null,
  );
  const result: CaptureResult = { reference, manifestPath: main.manifestPath, run: main.run, passes: main.passes };

  if (main.manifestPath !== null) {
    const summary = await recordTeacherForcing(outDir, reference, plans, main.injections);
    if (summary !== null) result.teacherForcing = summary;
  }

  if (isolatedDir !== null) {
    if (main.run.status === 'crashed' || main.run.status === 'timeout' || main.run.status === 'aborted') {
      const skipped = `the main run ${main.run.status === 'crashed' ? 'crashed' : main.run.status === 'aborted' ? 'was aborted' : 'timed out'}: the isolated run was not attempted`;
      result.isolated = { dir: isolatedDir, manifestPath: null, run: null, passes: [], skipped };
    } else {
      // The same session, back to before prefill (inputs and options are kept).
      if (host.alive) {
        await host.reset();
      } else {
        await host.close().catch(() => undefined);
        host = await targets.restart();
        await prepareSession(host, reference, weightsPath, options.options);
      }
      const plan = isolationPlan(reference, host.description);
      const header = nativeHeader(reference.manifest, host, options.command, inputs, { weights, outDir: isolatedDir }, isolationRuntime(referenceSha256, plan));
      const isolated = await captureSession(host, reference, isolatedDir, header, plan, options.onIsolatedPass, options.passWindow ?? null);
      result.isolated = { dir: isolatedDir, manifestPath: isolated.manifestPath, run: isolated.run, passes: isolated.passes, skipped: null };
    }
  }
  return result;
}

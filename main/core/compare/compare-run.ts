// runCompare: `trace-inspector compare <reference> <candidate>` — judges one existing bundle
// against another without running any engine, with the gate's machinery: every (pass, boundary)
// is judged by judgeCase (case-verdicts.ts) into the gate's verdicts, the run is sealed by
// computeSeals, and the result has the gate's shape, so the gate's reports, annotations and
// receipt code serve it unchanged (compare-receipt.ts adds the comparison's own subjects).
//
// Either side may be a reference, an oracle-f64 or a native bundle. Contracts come from the
// reference's manifest, a contracts file, or the bit_exact default (contracts-file.ts); a map file
// lines up a candidate that names or lays out its boundaries differently (boundary-map.ts); an
// oracle (`--oracle`) is a second implementation with equal authority: where the two disagree the
// row is REVIEW_REQUIRED, as in the gate.
//
// Everything is validated before anything is judged, exactly as the gate does it: every bundle's
// manifest, confined paths, every file's and every tensor's digest, the reference's and oracle's
// own padding, the contracts and map files. A problem there is an InputError (exit 2).
import { summarize } from '../gate/bundle-summary.ts';
import { basename, dirname, resolve } from 'node:path';
import type { EngineBoundary, EngineDescription } from '../../engine-host/engine-description.ts';
import { openBundle, type TraceBundle } from '../bundle/bundle-reader.ts';
import { BundleError } from '../bundle/errors.ts';
import type { BundleManifest, Contract } from '../bundle/manifest-schema.ts';
import { judgeCase, type RunStop } from '../gate/case-verdicts.ts';
import { emptyCounts, type BundleSummary, type CaseResult, type CaseRun, type EngineSummary, type GapRecord, type GateResult } from '../gate/gate-types.ts';
import { LedgerError, loadLedger } from '../gate/ledger.ts';
import { computeSeals } from '../gate/seals.ts';
import { toolInfo } from '../tool/tool-info.ts';
import { loadBoundaryMap } from './boundary-map.ts';
import { withContracts } from './contracted-bundle.ts';
import { loadContractsFile, type ContractSource } from './contracts-file.ts';
import { applyBoundaryMap, type MapReport } from './mapped-bundle.ts';
import { InputError } from '../io/input-error.ts';
import { GuardedReadError } from '../io/guarded-read.ts';
import { incompleteRunProblem, oracleContractSource, referenceContractSource, sameCaseProblem, type ContractsUsed } from './comparison-sources.ts';

export type { ContractsUsed } from './comparison-sources.ts';

export interface CompareRunOptions {
  referenceDir: string;
  candidateDir: string;
  /** A second implementation judged beside the reference (--oracle), or null. */
  oracleDir: string | null;
  /** --contracts FILE, or null. */
  contractsFile: string | null;
  /** --contract bit_exact: the contract of every boundary that declares none (the default for a reference that declares none). */
  defaultContract: 'bit_exact';
  /** --map FILE, or null. */
  mapFile: string | null;
  /** Regression mode (--baseline): every boundary bit_exact, unless a contracts file says otherwise. */
  baseline: boolean;
  strict: boolean;
  /** A known-gap ledger file; null: a known-gaps.json beside the reference bundle, if any. */
  ledgerFile: string | null;
}

export interface ComparisonFacts {
  reference: BundleSummary;
  candidate: BundleSummary;
  oracle: BundleSummary | null;
  contracts: ContractsUsed;
  map: MapReport | null;
  baseline: boolean;
}

/** The gate's result shape (so every gate report serves compare) plus what the comparison was. */
export interface CompareResult extends GateResult {
  comparison: ComparisonFacts;
}

async function openEvidence(dir: string, role: string, checkPadding: boolean, verify: 'deferred' | 'files'): Promise<TraceBundle> {
  try {
    return await openBundle(dir, { checkPadding, verify });
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`${role} bundle ${dir} is not valid: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError(`${role} bundle ${dir}: no such bundle folder`);
    throw error;
  }
}

function requireCompletedRun(bundle: TraceBundle, role: string): void {
  const problem = incompleteRunProblem(bundle, role);
  if (problem !== null) throw new InputError(problem);
}

async function requireSameCase(reference: TraceBundle, other: TraceBundle, role: string): Promise<void> {
  const problem = await sameCaseProblem(reference, other, role);
  if (problem !== null) throw new InputError(problem);
}

/** The candidate's producer, as the gate's reports name an engine. */
function producerOf(candidate: BundleSummary, manifest: BundleManifest, catalogue: string[]): EngineSummary {
  const runtime = manifest.provenance.runtime;
  const text = (key: string): string | null => (typeof runtime[key] === 'string' ? (runtime[key] as string) : null);
  const abi = runtime['engine_abi_version'];
  return {
    library: candidate.manifestPath,
    sha256: candidate.manifestSha256,
    subjectName: candidate.subjectName,
    name: text('engine_name') ?? manifest.provenance.generator.implementation,
    version: text('engine_version') ?? manifest.provenance.generator.revision,
    buildId: text('engine_build_id') ?? '',
    abiVersion: typeof abi === 'number' ? abi : 0,
    catalogue,
  };
}

/**
 * No engine declares anything here: every boundary the reference records is expected of the
 * candidate in the passes where the reference has it (missing there is FAIL, kind missing), in
 * the reference's order.
 */
function referenceCatalogue(reference: TraceBundle): EngineDescription {
  const boundaries: EngineBoundary[] = [];
  const seen = new Set<string>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) {
      if (seen.has(entry.name)) continue;
      seen.add(entry.name);
      boundaries.push({ name: entry.name, stage: entry.stage, dtype: entry.dtype, shape: [...entry.shape], emit: 'every_pass', injectable: false, doc: '' });
    }
  }
  return { abi_version: 1, engine: { name: 'reference bundle', version: '', build_id: '' }, model: {}, inputs: [], boundaries, options: [] };
}

function describeCandidateRun(candidate: TraceBundle, passesExpected: number): { run: CaseRun; stop: RunStop | null } {
  const outcome = candidate.manifest.run ?? { status: 'completed' as const, message: '', last_pass: null, last_boundary: null };
  const passesCompleted = candidate.passes.length;
  if (outcome.status === 'completed') return { run: { outcome, passesExpected, passesCompleted, signal: null, summary: '' }, stop: null };
  const pass = outcome.last_pass ?? 0;
  const summary =
    `the candidate's run ended ${outcome.status} in pass ${pass}, ${outcome.last_boundary === null ? 'before its first boundary' : `after boundary ${outcome.last_boundary}`}` +
    `${outcome.message ? `: ${outcome.message}` : ''}`;
  return { run: { outcome, passesExpected, passesCompleted, signal: null, summary }, stop: { pass, description: summary } };
}

/**
 * Subject names: `<bundle folder>/manifest.json`; where two bundle folders share a name, one more
 * level (`<parent>/<folder>/manifest.json`), and the role in front if that still collides.
 */
function subjectNames(dirs: { role: string; dir: string }[]): Map<string, string> {
  const short = (dir: string): string => basename(dir);
  const longer = (dir: string): string => `${basename(dirname(dir))}/${basename(dir)}`;
  const clashes = (name: (dir: string) => string, dir: string): boolean => dirs.filter((other) => name(other.dir) === name(dir)).length > 1;
  const names = new Map<string, string>();
  for (const { role, dir } of dirs) {
    const folder = !clashes(short, dir) ? short(dir) : !clashes(longer, dir) ? longer(dir) : `${role}/${longer(dir)}`;
    names.set(role, `${folder}/manifest.json`);
  }
  return names;
}

async function contractSource(options: CompareRunOptions, reference: TraceBundle): Promise<{ source: ContractSource | null; used: ContractsUsed }> {
  const file = options.contractsFile === null ? null : await loadContractsFile(resolve(options.contractsFile));
  return referenceContractSource({ file, baseline: options.baseline, defaultContract: options.defaultContract }, reference);
}

/** A file read while its bundle was being verified could not be proven to hold the bytes verified. */
class UnprovenRead extends Error {}

/**
 * Waits for the verification of every opened bundle (opened with verify 'deferred'), in role
 * order: the first digest problem is an InputError naming the bundle, file and field, exactly as
 * when the open verified it; a read the verification cannot vouch for is UnprovenRead.
 */
async function settleEvidence(opened: readonly { role: string; dir: string; bundle: TraceBundle }[]): Promise<void> {
  let unproven = false;
  for (const { role, dir, bundle } of opened) {
    try {
      if ((await bundle.settleVerification?.()) === false) unproven = true;
    } catch (error) {
      if (error instanceof BundleError || error instanceof GuardedReadError) throw new InputError(`${role} bundle ${dir} is not valid: ${error.message}`);
      throw error;
    }
  }
  if (unproven) throw new UnprovenRead('a file changed (or could not be pinned) while it was verified and compared at once');
}

/**
 * Compares the bundles. Every bundle is verified on the worker pool while its tensors are already
 * compared on this thread (each byte hashed once, by the verification, and read again here
 * without hashing), and the result is returned only once every digest of every bundle matched and
 * every file compared is pinned with the identity it was read under (bundle-reader.ts, verify
 * 'deferred'): no verdict leaves this function from unverified evidence. Should a file have
 * changed meanwhile, or its pin not be trusted, the comparison runs again after a full
 * verification, hashing as it reads whatever is not pinned.
 */
export async function runCompare(options: CompareRunOptions): Promise<CompareResult> {
  try {
    return await compareOnce(options, 'deferred');
  } catch (error) {
    if (!(error instanceof UnprovenRead)) throw error;
    return compareOnce(options, 'files');
  }
}

async function compareOnce(options: CompareRunOptions, verify: 'deferred' | 'files'): Promise<CompareResult> {
  const startedAt = new Date().toISOString();
  const tool = toolInfo();
  const referenceDir = resolve(options.referenceDir);
  const candidateDir = resolve(options.candidateDir);
  const oracleDir = options.oracleDir === null ? null : resolve(options.oracleDir);
  if (candidateDir === referenceDir) throw new InputError(`the reference and the candidate are the same bundle ${referenceDir}; compare two bundles`);

  const opened: { role: string; dir: string; bundle: TraceBundle }[] = [];
  try {
    // ---- everything validated before anything is judged ---------------------------------------
    // (the digests while the judging already runs: settleEvidence below, before any result)
    const rawReference = await openEvidence(referenceDir, 'reference', true, verify);
    opened.push({ role: 'reference', dir: referenceDir, bundle: rawReference });
    requireCompletedRun(rawReference, 'reference');
    const rawCandidate = await openEvidence(candidateDir, 'candidate', false, verify);
    opened.push({ role: 'candidate', dir: candidateDir, bundle: rawCandidate });
    await requireSameCase(rawReference, rawCandidate, 'candidate');
    let rawOracle: TraceBundle | null = null;
    if (oracleDir !== null) {
      rawOracle = await openEvidence(oracleDir, 'oracle', true, verify);
      opened.push({ role: 'oracle', dir: oracleDir, bundle: rawOracle });
      requireCompletedRun(rawOracle, 'oracle');
      await requireSameCase(rawReference, rawOracle, 'oracle');
    }
    const caseId = rawReference.manifest.case.id;
    const names = subjectNames([
      { role: 'reference', dir: referenceDir },
      { role: 'candidate', dir: candidateDir },
      ...(oracleDir === null ? [] : [{ role: 'oracle', dir: oracleDir }]),
    ]);
    const referenceSummary = await summarize(rawReference, names.get('reference') as string);
    const candidateSummary = await summarize(rawCandidate, names.get('candidate') as string);
    const oracleSummary = rawOracle === null ? null : await summarize(rawOracle, names.get('oracle') as string);

    const { source, used } = await contractSource(options, rawReference);
    const reference = await withContracts(rawReference, source);
    const oracle = rawOracle === null ? null : await withContracts(rawOracle, oracleContractSource(source, rawOracle, options.defaultContract));
    let candidate: TraceBundle = rawCandidate;
    let mapReport: MapReport | null = null;
    if (options.mapFile !== null) {
      const mapped = applyBoundaryMap(rawCandidate, await loadBoundaryMap(resolve(options.mapFile)), reference);
      candidate = mapped.bundle;
      mapReport = mapped.report;
    }
    let ledger;
    try {
      ledger = await loadLedger(
        [{ caseId, referenceDir, manifestPath: rawReference.manifestPath, manifest: rawReference.manifest }],
        options.ledgerFile === null ? null : resolve(options.ledgerFile),
      );
    } catch (error) {
      if (error instanceof LedgerError) throw new InputError(`ledger ${error.message}`);
      throw error;
    }

    // ---- judge ----------------------------------------------------------------------------------
    const description = referenceCatalogue(reference);
    const { run, stop } = describeCandidateRun(rawCandidate, reference.passes.length);
    const contracts: Record<string, Contract> = {};
    const judged = await judgeCase({
      caseId,
      reference,
      native: candidate,
      oracle,
      description,
      ledger: ledger.entries,
      stop,
      nativeUnreadable: null,
      contracts,
    });
    // Nothing judged counts until every digest of every bundle matched.
    await settleEvidence(opened);

    const gaps: GapRecord[] = [];
    const seen = new Set<string>();
    for (const verdict of judged.verdicts) {
      if (verdict.gapId === null || seen.has(verdict.gapId)) continue;
      seen.add(verdict.gapId);
      gaps.push({ id: verdict.gapId, case: caseId, reason: verdict.reason });
    }
    const firstDivergence = judged.verdicts.findIndex((verdict) => verdict.verdict === 'FAIL' || verdict.verdict === 'REVIEW_REQUIRED');
    const item: CaseResult = {
      id: caseId,
      reference: referenceSummary,
      oracle: oracleSummary,
      // No engine runs, so none opened weights; the manifests (receipt subjects) say what each run used.
      weights: null,
      nativeDir: candidateDir,
      isolatedDir: null,
      teacherForcing: null,
      run,
      verdicts: judged.verdicts,
      counts: judged.counts,
      compared: judged.compared,
      firstDivergence: firstDivergence === -1 ? null : firstDivergence,
      unreadable: judged.unreadable,
      gaps,
      audio: judged.audio,
    };
    const counts = { ...emptyCounts(), ...judged.counts };
    const seals = computeSeals({
      compared: judged.compared,
      counts,
      runStatuses: [run.outcome.status],
      emptyCases: judged.compared === 0 ? [caseId] : [],
      unreadable: judged.unreadable !== null,
      gapIds: gaps.map((gap) => gap.id),
      strict: options.strict,
    });
    const warnings = [...ledger.warnings, ...(mapReport?.unusedEntries ?? [])];
    return {
      schema: 'trace-inspector.gate-result',
      schema_version: 1,
      tool: { name: tool.name, version: tool.version, commit: tool.commit, dirty: tool.dirty },
      startedAt,
      finishedAt: new Date().toISOString(),
      strict: options.strict,
      options: {
        // No engine runs in a comparison: nothing to isolate, time out or capture into.
        isolation: null,
        passTimeoutMs: null,
        engineOptions: {},
        teacherForce: false,
        isolate: false,
        workDir: null,
        ledgerFile: options.ledgerFile === null ? null : resolve(options.ledgerFile),
      },
      engine: producerOf(
        candidateSummary,
        rawCandidate.manifest,
        description.boundaries.map((boundary) => boundary.name),
      ),
      ledger: ledger.entries,
      warnings,
      cases: [item],
      contracts,
      gaps,
      counts,
      compared: judged.compared,
      firstDivergence: firstDivergence === -1 ? null : { case: caseId, index: firstDivergence },
      seals,
      comparison: {
        reference: referenceSummary,
        candidate: candidateSummary,
        oracle: oracleSummary,
        contracts: used,
        map: mapReport,
        baseline: options.baseline,
      },
    };
  } catch (error) {
    // A bundle whose verification failed is reported as such, whatever the judging ran into meanwhile.
    // (as when the open verified before anything else was checked).
    if (!(error instanceof UnprovenRead)) await settleEvidence(opened);
    if (error instanceof BundleError) throw new InputError(`a bundle changed while it was compared: ${error.message}`);
    throw error;
  } finally {
    await Promise.all(opened.map(({ bundle }) => bundle.close()));
  }
}

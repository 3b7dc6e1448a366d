// runGate: the headless gate. It validates everything it is given, runs and judges each case
// (gate-case.ts: a crash-isolated capture into <workDir>/<case>/native, then every (pass,
// boundary) of the reference judged against it and the fp64 oracle), and seals the whole run
// (seals.ts).
//
// Everything the gate is given is validated before the engine runs a single pass: every
// reference and oracle bundle (manifest, provenance, digests), the weights, the ledger, the
// engine library and its catalogue, the work folders. A problem there is an InputError
// (exit 2, nothing written). Once the engine runs, what goes wrong is a verdict, not an error:
// a crash, a hang or an engine error makes the boundaries never reached FAIL (kind missing,
// the crash named) and the run FIDELITY: FAIL.
import { summarize } from './bundle-summary.ts';
import { readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import { EngineHost } from '../../engine-host/engine-host.ts';
import { nothingToForce } from '../capture/teacher-forcing.ts';
import { catalogueProblem, oracleStorageProblem } from './upfront-checks.ts';
import { checkGivenWeights, NATIVE_AS_REFERENCE, openBundle, resolveWeights, type TraceBundle } from '../bundle/bundle-reader.ts';
import { sha256File } from '../bundle/digest.ts';
import { BundleError } from '../bundle/errors.ts';
import type { BundleManifest, Contract } from '../bundle/manifest-schema.ts';
import { safePathComponent } from '../bundle/path-confinement.ts';
import { toolInfo } from '../tool/tool-info.ts';
import type { ContractSource } from '../compare/contracts-file.ts';
import { admitReference } from '../compare/reference-contracts.ts';
import { runGateCase, type PreparedCase } from './gate-case.ts';
import { EngineLoadError } from '../../engine-host/engine-errors.ts';
import { assertEngineFile } from '../../engine-host/engine-file.ts';
import {
  emptyCounts,
  type BundleSummary,
  type CaseResult,
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
import { InputError } from '../io/input-error.ts';
import { passBytesOf, planPassRanges, rangeOf, shardRangeOf, type CasePassRange } from './pass-split.ts';
import { verifyPassEvidence, type VerifiedPasses } from './pass-evidence.ts';
import type { PassRange } from './pass-range.ts';

async function openValidated(
  dir: string,
  expectedKind: 'reference' | 'oracle-f64',
  role: string,
  contracts: ContractSource | null = null,
  passes?: (manifest: BundleManifest) => VerifiedPasses,
): Promise<TraceBundle> {
  let bundle: TraceBundle;
  try {
    // A pass shard verifies only the files of its passes (pass-evidence.ts); everyone else every file.
    bundle = await openBundle(dir, passes === undefined ? { checkPadding: true } : { verify: 'none' });
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`${role} bundle ${dir} is not valid: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError(`${role} bundle ${dir}: no such bundle folder`);
    throw error;
  }
  if (passes !== undefined) {
    try {
      await verifyPassEvidence(bundle, passes(bundle.manifest), true);
    } catch (error) {
      await bundle.close();
      if (error instanceof BundleError) throw new InputError(`${role} bundle ${dir} is not valid: ${error.message}`);
      throw error;
    }
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
    // --shard-by passes: the range of this case this shard judges, from the reference's manifest.
    let range: VerifiedPasses | undefined;
    const shard = options.shard;
    const rangeOfCase =
      shard?.by === 'passes'
        ? (manifest: BundleManifest): VerifiedPasses => {
            range = shardRangeOf(manifest, shard);
            return range;
          }
        : undefined;
    const reference = await openValidated(referenceDir, 'reference', 'reference', options.referenceContracts?.source ?? null, rangeOfCase);
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
        const oracleBundle = await openValidated(oracleDir, 'oracle-f64', 'oracle', null, range === undefined ? undefined : () => range as VerifiedPasses);
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
        weights:
          weightsPath === null
            ? null
            : { path: weightsPath, sha256: reference.manifest.provenance.model.weights_sha256 ?? '', subjectName: basename(weightsPath) },
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
  // The library file first: a mistyped --engine is refused before any evidence is hashed.
  try {
    assertEngineFile(library);
  } catch (error) {
    if (error instanceof EngineLoadError) throw new InputError(error.message);
    throw error;
  }
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
    const result = await runGateCase(item, {
      options,
      library,
      workDir,
      description,
      ledger: ledger.entries,
      contracts,
      caseIndex,
      caseCount: prepared.length,
      ...(progress !== undefined ? { progress } : {}),
    });
    for (const gap of result.gaps) addGap(gaps, gapSeen, gap);
    cases.push(result);
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
async function chooseShard(
  prepared: readonly PreparedCase[],
  options: GateOptions,
  engineSha256: string,
  ledgerFile: string | null,
): Promise<{ prepared: PreparedCase[]; info: ShardInfo }> {
  const spec = options.shard as ShardSpec;
  let assignment;
  try {
    // By passes every shard may run every case: only the case order is taken from here.
    assignment = shardAssignment(
      prepared.map((item) => item.caseId),
      spec.by === 'passes' ? { index: 1, count: 1 } : spec,
    );
  } catch (error) {
    throw new InputError((error as Error).message);
  }
  const byPasses = spec.by === 'passes';
  let ranges: PassRange[] | undefined;
  if (byPasses) {
    try {
      ranges = planPassRanges(
        prepared.map((item) => ({ id: item.caseId, passBytes: passBytesOf(item.manifest) })),
        spec.count,
      );
    } catch (error) {
      throw new InputError(`--shard ${spec.index}/${spec.count}: ${(error as Error).message}`);
    }
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
    ...(ranges !== undefined ? { passRanges: ranges } : {}),
  });
  const byId = new Map(prepared.map((item) => [item.caseId, item]));
  if (ranges !== undefined) {
    // This shard's range of every case it has one of, in plan order.
    const mine: PreparedCase[] = [];
    for (const range of ranges) {
      if (range.shard !== spec.index) continue;
      const item = byId.get(range.case) as PreparedCase;
      mine.push({ ...item, passRange: rangeOf(ranges, range.case, spec.index, item.manifest.passes.length) as CasePassRange });
    }
    return {
      prepared: mine,
      info: {
        index: spec.index,
        count: spec.count,
        plan,
        cases: assignment.cases,
        assigned: mine.map((item) => item.caseId),
        by: 'passes',
        ranges,
      },
    };
  }
  return {
    prepared: assignment.assigned.map((id) => byId.get(id) as PreparedCase),
    info: { index: spec.index, count: spec.count, plan, cases: assignment.cases, assigned: assignment.assigned },
  };
}

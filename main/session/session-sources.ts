// What a session compares: the engine it runs and the bundles it judges against. Everything is
// validated when it is opened — the engine loaded and its catalogue parsed, every bundle's
// manifest, paths and digests checked, the known-gap ledger read — so a bad input fails the open
// call with the file and the field named, before anything else in the session changes.
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { EngineDescription } from '../engine-host/engine-description.ts';
import { EngineHost } from '../engine-host/engine-host.ts';
import type { BundleInfo, EngineInfo } from '../../protocol/inspector-api.ts';
import { openBundle, type TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { BundleOpener } from './bundle-openers.ts';
import { incompleteRunProblem, sameCaseProblem, type ContractsUsed } from '../core/compare/comparison-sources.ts';
import type { ContractSource } from '../core/compare/contracts-file.ts';
import { BundleError } from '../core/bundle/errors.ts';
import { MANIFEST_FILE_NAME } from '../core/bundle/manifest-schema.ts';
import type { LedgerEntry } from '../core/gate/gate-types.ts';
import { loadLedger } from '../core/gate/ledger.ts';
import { judgedSides, noComparisonSettings, type ComparisonSettings } from './session-comparison.ts';
import { CALL_CODES, callError } from './session-errors.ts';

export interface OpenedEngine {
  info: EngineInfo;
  description: EngineDescription;
}

export interface OpenedReference {
  dir: string;
  /** The reference side as it is judged: under the session's contracts (session-comparison.ts). */
  bundle: TraceBundle;
  oracle: TraceBundle | null;
  /** The bundles as opened (what is closed): the views above only add contracts. */
  raw: TraceBundle;
  rawOracle: TraceBundle | null;
  oracleDir: string | null;
  info: BundleInfo;
  ledger: LedgerEntry[];
  /** Where the contracts the rows are judged under came from, and the source itself (null: the manifest's own). */
  contracts: ContractsUsed;
  contractSource: ContractSource | null;
  /** The oracle's contracts source (null: its manifest's own), as judge workers apply it. */
  oracleContractSource: ContractSource | null;
}

/** The folder name of a case's fp64 oracle, beside its reference/ folder. */
export const ORACLE_FOLDER = 'oracle-f64';

/**
 * Loads the library in a throwaway engine host to check it is an engine (ABI version, catalogue)
 * and read its description; the runs start their own host. Always in its own process, whatever
 * the session's isolation: loading runs the library's constructors, and a library that crashes
 * there must cost the open, not the app. Rejects with EngineLoadError naming the library and the
 * symbol or field.
 */
export async function probeEngine(library: string): Promise<OpenedEngine> {
  const host = await EngineHost.start({ library: resolve(library), isolation: 'process' });
  try {
    const description = host.description;
    return {
      description,
      info: {
        library: host.library,
        name: description.engine.name,
        version: description.engine.version,
        buildId: description.engine.build_id,
        sha256: host.librarySha256,
        abiVersion: host.abiVersion,
        boundaryCount: description.boundaries.length,
      },
    };
  } finally {
    await host.close().catch(() => undefined);
  }
}

function bundleInfo(bundle: TraceBundle, oracleDir: string | null): BundleInfo {
  const { manifest } = bundle;
  const kind = manifest.kind;
  const names = new Set<string>();
  for (const pass of manifest.passes) for (const entry of pass.boundaries) names.add(entry.name);
  return {
    dir: bundle.dir,
    kind,
    caseId: manifest.case.id,
    description: manifest.case.description,
    precision: manifest.provenance.precision,
    generator: `${manifest.provenance.generator.implementation} @ ${manifest.provenance.generator.revision}`,
    createdAt: manifest.provenance.created_at,
    passCount: manifest.passes.length,
    boundaryCount: names.size,
    oracleDir,
    oracleKind: oracleDir === null ? null : 'oracle-f64',
  };
}

function wrongKind(bundle: TraceBundle, expected: string, hint: string): BundleError {
  return new BundleError('E_MANIFEST_SCHEMA', bundle.manifestPath, 'kind', `is "${bundle.manifest.kind}", expected "${expected}": ${hint}`);
}

/**
 * Opens the reference side (every file and tensor digest verified, its padding checked, before
 * anything else in the session changes) — `dir` itself, or a case folder holding reference/.
 * Any kind may stand there: a reference bundle with its fp64 oracle when the case has one
 * (<case>/oracle-f64), an fp64 oracle, or a completed native capture (engine against engine);
 * `settings` give the contracts a bundle that declares none is judged under (compare's rules,
 * session-comparison.ts). The case's known-gap ledger is read as the gate reads it.
 */
export async function openReference(
  dir: string,
  settings: ComparisonSettings = noComparisonSettings(),
  open: BundleOpener = openBundle,
): Promise<OpenedReference> {
  let referenceDir = resolve(dir);
  if (!existsSync(join(referenceDir, MANIFEST_FILE_NAME)) && existsSync(join(referenceDir, 'reference', MANIFEST_FILE_NAME))) {
    referenceDir = join(referenceDir, 'reference');
  }
  const bundle = await open(referenceDir, { checkPadding: true });
  let oracle: TraceBundle | null = null;
  try {
    const incomplete = incompleteRunProblem(bundle, 'reference');
    if (incomplete !== null) throw callError(CALL_CODES.bundle, incomplete);
    const candidate = join(dirname(referenceDir), ORACLE_FOLDER);
    // Only a reference bundle has its case's fp64 oracle beside it.
    const oracleDir =
      bundle.manifest.kind === 'reference' && basename(referenceDir) !== ORACLE_FOLDER && existsSync(join(candidate, MANIFEST_FILE_NAME)) ? candidate : null;
    if (oracleDir !== null) {
      oracle = await open(oracleDir, { checkPadding: true });
      if (oracle.manifest.kind !== 'oracle-f64') throw wrongKind(oracle, 'oracle-f64', `${oracleDir} sits where the case's fp64 oracle belongs`);
      if (oracle.manifest.case.id !== bundle.manifest.case.id) {
        throw new BundleError(
          'E_MANIFEST_SCHEMA',
          oracle.manifestPath,
          'case.id',
          `is "${oracle.manifest.case.id}", but the reference beside it is case "${bundle.manifest.case.id}"`,
        );
      }
    }
    const ledger = await loadLedger([{ caseId: bundle.manifest.case.id, referenceDir, manifestPath: bundle.manifestPath, manifest: bundle.manifest }], null);
    const judged = await judgedSides(bundle, oracle, settings);
    return { dir: referenceDir, ...judged, raw: bundle, rawOracle: oracle, oracleDir, info: bundleInfo(bundle, oracleDir), ledger: ledger.entries };
  } catch (error) {
    await Promise.all([bundle.close(), oracle?.close()]);
    throw error;
  }
}

/** The same reference under other comparison settings (the bundles stay open; only the contracts change). */
export async function withSettings(reference: OpenedReference, settings: ComparisonSettings): Promise<OpenedReference> {
  return { ...reference, ...(await judgedSides(reference.raw, reference.rawOracle, settings)) };
}

/**
 * The reference side with `dir` as its oracle (compare --oracle): a second implementation of any
 * kind, a completed run of the same case on the same inputs, every file and tensor digest and its
 * padding checked; its contracts as compare gives an oracle's. Nothing of `reference` is closed.
 */
export async function withOracle(
  dir: string,
  reference: OpenedReference,
  settings: ComparisonSettings,
  open: BundleOpener = openBundle,
): Promise<OpenedReference> {
  const oracleDir = resolve(dir);
  if (oracleDir === reference.dir)
    throw callError(CALL_CODES.request, `dir: ${oracleDir} is the open reference bundle itself; an oracle is a second implementation`);
  const oracle = await open(oracleDir, { checkPadding: true });
  try {
    const problem = incompleteRunProblem(oracle, 'oracle') ?? (await sameCaseProblem(reference.raw, oracle, 'oracle'));
    if (problem !== null) throw callError(CALL_CODES.bundle, problem);
    const judged = await judgedSides(reference.raw, oracle, settings);
    return { ...reference, ...judged, rawOracle: oracle, oracleDir, info: { ...reference.info, oracleDir, oracleKind: oracle.manifest.kind } };
  } catch (error) {
    await oracle.close();
    throw error;
  }
}

/** The reference side with no oracle (its own stays open until the caller retires it). */
export async function withoutOracle(reference: OpenedReference, settings: ComparisonSettings): Promise<OpenedReference> {
  const judged = await judgedSides(reference.raw, null, settings);
  return { ...reference, ...judged, rawOracle: null, oracleDir: null, info: { ...reference.info, oracleDir: null, oracleKind: null } };
}

/**
 * Opens the other side of a comparison: a captured run (any kind: a native capture, another
 * reference, an fp64 oracle) of the reference's case, on the same inputs (compare's rule,
 * comparison-sources.ts), every file digest-checked. Never the reference's own folder.
 */
export async function openCandidateRun(dir: string, reference: OpenedReference, open: BundleOpener = openBundle): Promise<TraceBundle> {
  const candidateDir = resolve(dir);
  if (candidateDir === reference.dir)
    throw callError(CALL_CODES.request, `dir: ${candidateDir} is the open reference bundle itself; open the run to compare with it`);
  const native = await open(candidateDir);
  try {
    const problem = await sameCaseProblem(reference.raw, native, 'candidate');
    if (problem !== null) throw callError(CALL_CODES.bundle, problem);
    return native;
  } catch (error) {
    await native.close();
    throw error;
  }
}

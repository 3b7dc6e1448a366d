// What a session compares: the engine it runs and the bundles it judges against. Everything is
// validated when it is opened — the engine loaded and its catalogue parsed, every bundle's
// manifest, paths and digests checked, the known-gap ledger read — so a bad input fails the open
// call with the file and the field named, before anything else in the session changes.
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { EngineDescription } from '../engine-host/engine-description.ts';
import { EngineHost } from '../engine-host/engine-host.ts';
import type { BundleInfo, EngineInfo } from '../../protocol/inspector-api.ts';
import { openBundle, requireReferenceKind, type TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { BundleOpener } from './bundle-openers.ts';
import { BundleError } from '../core/bundle/errors.ts';
import { MANIFEST_FILE_NAME } from '../core/bundle/manifest-schema.ts';
import type { LedgerEntry } from '../core/gate/gate-types.ts';
import { loadLedger } from '../core/gate/ledger.ts';

export interface OpenedEngine {
  info: EngineInfo;
  description: EngineDescription;
}

export interface OpenedReference {
  dir: string;
  bundle: TraceBundle;
  oracle: TraceBundle | null;
  oracleDir: string | null;
  info: BundleInfo;
  ledger: LedgerEntry[];
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
  const names = new Set<string>();
  for (const pass of manifest.passes) for (const entry of pass.boundaries) names.add(entry.name);
  return {
    dir: bundle.dir,
    caseId: manifest.case.id,
    description: manifest.case.description,
    precision: manifest.provenance.precision,
    generator: `${manifest.provenance.generator.implementation} @ ${manifest.provenance.generator.revision}`,
    createdAt: manifest.provenance.created_at,
    passCount: manifest.passes.length,
    boundaryCount: names.size,
    oracleDir,
  };
}

function wrongKind(bundle: TraceBundle, expected: string, hint: string): BundleError {
  return new BundleError('E_MANIFEST_SCHEMA', bundle.manifestPath, 'kind', `is "${bundle.manifest.kind}", expected "${expected}": ${hint}`);
}

/**
 * Opens a reference bundle (every file and tensor digest verified, its padding checked, before
 * anything else in the session changes) — `dir` itself, or a case folder holding reference/ — with its fp64
 * oracle when the case has one (<case>/oracle-f64) and the case's known-gap ledger (the
 * manifest's known_gaps and a known-gaps.json beside the bundle, as the gate reads them).
 */
export async function openReference(dir: string, open: BundleOpener = openBundle): Promise<OpenedReference> {
  let referenceDir = resolve(dir);
  if (!existsSync(join(referenceDir, MANIFEST_FILE_NAME)) && existsSync(join(referenceDir, 'reference', MANIFEST_FILE_NAME))) {
    referenceDir = join(referenceDir, 'reference');
  }
  const bundle = await open(referenceDir, { checkPadding: true });
  let oracle: TraceBundle | null = null;
  try {
    // A native bundle holds no contracts (Open run takes it, against a reference).
    requireReferenceKind(bundle);
    const candidate = join(dirname(referenceDir), ORACLE_FOLDER);
    const oracleDir = basename(referenceDir) !== ORACLE_FOLDER && existsSync(join(candidate, MANIFEST_FILE_NAME)) ? candidate : null;
    if (oracleDir !== null) {
      oracle = await open(oracleDir, { checkPadding: true });
      if (oracle.manifest.kind !== 'oracle-f64') throw wrongKind(oracle, 'oracle-f64', `${oracleDir} sits where the case's fp64 oracle belongs`);
      if (oracle.manifest.case.id !== bundle.manifest.case.id) {
        throw new BundleError('E_MANIFEST_SCHEMA', oracle.manifestPath, 'case.id', `is "${oracle.manifest.case.id}", but the reference beside it is case "${bundle.manifest.case.id}"`);
      }
    }
    const ledger = await loadLedger(
      [{ caseId: bundle.manifest.case.id, referenceDir, manifestPath: bundle.manifestPath, manifest: bundle.manifest }],
      null,
    );
    return { dir: referenceDir, bundle, oracle, oracleDir, info: bundleInfo(bundle, oracleDir), ledger: ledger.entries };
  } catch (error) {
    await Promise.all([bundle.close(), oracle?.close()]);
    throw error;
  }
}

/** Opens a captured native bundle of the reference's case (every file digest-checked). */
export async function openNativeRun(dir: string, reference: TraceBundle, open: BundleOpener = openBundle): Promise<TraceBundle> {
  const native = await open(resolve(dir));
  try {
    if (native.manifest.kind !== 'native') throw wrongKind(native, 'native', 'Open run takes a native bundle captured from an engine');
    if (native.manifest.case.id !== reference.manifest.case.id) {
      throw new BundleError('E_MANIFEST_SCHEMA', native.manifestPath, 'case.id', `is "${native.manifest.case.id}", but the open reference is case "${reference.manifest.case.id}"`);
    }
    return native;
  } catch (error) {
    await native.close();
    throw error;
  }
}

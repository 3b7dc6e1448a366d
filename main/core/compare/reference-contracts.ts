// A reference that declares no contracts (a native capture, a port's bundle) may stand as the
// reference of `capture` and `--gate` once contracts are supplied: `--contracts FILE` or
// `--contract bit_exact` (contracts-file.ts). Without them it is refused as before (it declares
// nothing anything could be judged against). No PyTorch provenance is asked of it: a native
// bundle's own provenance (engine, build, library digest) is what it is.
import { requireReferenceKind, type TraceBundle } from '../bundle/bundle-reader.ts';
import { BundleError } from '../bundle/errors.ts';
import { withContracts } from './contracted-bundle.ts';
import { loadContractsFile, type ContractSource } from './contracts-file.ts';

/** What --contracts / --contract ask for; null when neither was given. */
export async function contractSourceOf(flags: { contractsFile: string | null; contract: 'bit_exact' | null }): Promise<ContractSource | null> {
  if (flags.contractsFile !== null) return loadContractsFile(flags.contractsFile);
  if (flags.contract !== null)
    return { kind: 'default', contract: flags.contract, why: `--contract ${flags.contract}: the reference declares no contract for this boundary` };
  return null;
}

/** Where a gate or capture's contracts came from, for reports and receipts. */
export interface SuppliedContracts {
  source: ContractSource;
  description: string;
  file: string | null;
  sha256: string | null;
}

export function describeSource(source: ContractSource): SuppliedContracts {
  if (source.kind === 'file')
    return { source, description: `contracts file ${source.path} (${source.rules.length} rule(s))`, file: source.path, sha256: source.sha256 };
  return {
    source,
    description: source.kind === 'default' ? `--contract ${source.contract} for every boundary without a contract` : source.why,
    file: null,
    sha256: null,
  };
}

/**
 * `bundle` as a reference: a reference bundle as it is (with `source`'s contracts when given); a
 * native bundle only with `source`, and only a completed run. Anything else is a BundleError
 * naming its manifest.json and the field (InputError for a rule that cannot apply).
 */
export async function admitReference(bundle: TraceBundle, source: ContractSource | null): Promise<TraceBundle> {
  if (source === null || bundle.manifest.kind !== 'native') {
    requireReferenceKind(bundle);
    return withContracts(bundle, source);
  }
  const run = bundle.manifest.run;
  if (run !== undefined && run !== null && run.status !== 'completed') {
    throw new BundleError('E_RUN', bundle.manifestPath, 'run.status', `is "${run.status}": a native bundle stands as a reference only as a completed run`);
  }
  return withContracts(bundle, source);
}

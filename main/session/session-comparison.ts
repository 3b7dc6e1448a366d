// The comparison settings of a session, as `trace-inspector compare` takes them as flags: a
// contracts file (--contracts), the default contract (--contract bit_exact, or every boundary
// bit_exact: --baseline), and a map file (--map). They are applied by compare's own core code
// (main/core/compare): the reference side is seen through withContracts under the source
// referenceContractSource chooses, an opened run through applyBoundaryMap. A file is loaded and
// validated when it is set, so a bad one fails that call and changes nothing.
import { basename } from 'node:path';
import type { ComparisonInfo } from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { BoundaryMap } from '../core/compare/boundary-map.ts';
import { oracleContractSource, referenceContractSource, type ContractsUsed } from '../core/compare/comparison-sources.ts';
import { withContracts } from '../core/compare/contracted-bundle.ts';
import type { ContractSource } from '../core/compare/contracts-file.ts';
import type { MapReport } from '../core/compare/mapped-bundle.ts';

export const DEFAULT_CONTRACT = 'bit_exact' as const;

export interface ComparisonSettings {
  contractsFile: (ContractSource & { kind: 'file' }) | null;
  /** Regression mode (compare --baseline): every boundary bit_exact, whatever the reference declares. */
  everyBoundary: boolean;
  map: BoundaryMap | null;
}

export function noComparisonSettings(): ComparisonSettings {
  return { contractsFile: null, everyBoundary: false, map: null };
}

/**
 * The reference (and its oracle) as they are judged under `settings`: compare's choice of
 * contracts, evaluated on these bundles (a faithful_from_k rule that cannot apply to one of
 * their boundaries is an InputError naming the contracts file and the rule).
 */
export async function judgedSides(
  reference: TraceBundle,
  oracle: TraceBundle | null,
  settings: ComparisonSettings,
): Promise<{
  bundle: TraceBundle;
  oracle: TraceBundle | null;
  contracts: ContractsUsed;
  contractSource: ContractSource | null;
  oracleContractSource: ContractSource | null;
}> {
  const { source, used } = referenceContractSource(
    { file: settings.contractsFile, baseline: settings.everyBoundary, defaultContract: DEFAULT_CONTRACT },
    reference,
  );
  const oracleSource = oracle === null ? null : oracleContractSource(source, oracle, DEFAULT_CONTRACT);
  return {
    bundle: await withContracts(reference, source),
    oracle: oracle === null ? null : await withContracts(oracle, oracleSource),
    contracts: used,
    contractSource: source,
    // The judging workers open the raw bundles and apply the same sources (judge-worker.ts).
    oracleContractSource: oracleSource,
  };
}

/** The snapshot's account of the settings, and of what the map did to the opened run (every boundary it took out is listed). */
export function comparisonInfo(settings: ComparisonSettings, contracts: ContractsUsed | null, report: MapReport | null): ComparisonInfo {
  const { contractsFile, map } = settings;
  return {
    contracts,
    contractsFile:
      contractsFile === null
        ? null
        : { path: contractsFile.path, name: basename(contractsFile.path), sha256: contractsFile.sha256, rules: contractsFile.rules.length },
    defaultContract: { contract: DEFAULT_CONTRACT, everyBoundary: settings.everyBoundary },
    mapFile: map === null ? null : { path: map.path, name: basename(map.path), sha256: map.sha256, entries: map.map.length + map.unmapped.length },
    map:
      report === null
        ? null
        : {
            mapped: report.mapped.map((row) => ({ candidate: row.candidate, reference: row.reference, transform: row.transform, passes: row.passes.length })),
            unmapped: report.unmapped.map((row) => ({ candidate: row.candidate, reason: row.reason, passes: row.passes.length })),
            uncovered: report.uncovered.map((row) => ({ candidate: row.candidate, inReference: row.inReference, passes: row.passes.length })),
            unusedEntries: [...report.unusedEntries],
          },
  };
}

// The options of `trace-inspector compare <reference> <candidate>` given no flags: contracts from
// the reference, bit_exact where it declares none, no oracle, map, ledger or regression mode. The
// tests and benches that run runCompare directly share them instead of each spelling them out.
import type { CompareRunOptions } from '../../main/core/compare/compare-run.ts';

export function plainCompareOptions(referenceDir: string, candidateDir: string): CompareRunOptions {
  return {
    referenceDir,
    candidateDir,
    oracleDir: null,
    contractsFile: null,
    defaultContract: 'bit_exact',
    mapFile: null,
    baseline: false,
    strict: false,
    ledgerFile: null,
  };
}

// What makes two existing bundles comparable, and where the contracts of their comparison come
// from: shared by `trace-inspector compare` (compare-run.ts) and the app's two-bundle session
// (main/session/session-comparison.ts), so both refuse the same pairs with the same words and
// judge under the same contracts.
//
// The checks return a problem sentence (or null) rather than throw: each caller raises its own
// error class (compare: a usage error, exit 2; the app: a refused call that changes nothing).
import { schemeName, schemeOf } from '../bundle/tree-digest.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import type { ContractSource } from './contracts-file.ts';

/** Where the contracts came from, as the reports, the receipt and the app's session bar state it. */
export interface ContractsUsed {
  kind: ContractSource['kind'] | 'manifest';
  /** For a contracts file: its path and sha256 (a receipt subject). */
  file: string | null;
  sha256: string | null;
  /** One sentence. */
  description: string;
}

/** How the contracts of a comparison are chosen: compare's --contracts / --baseline / --contract. */
export interface ContractChoice {
  /** A loaded contracts file (contracts-file.ts loadContractsFile), or null. */
  file: (ContractSource & { kind: 'file' }) | null;
  /** Regression mode: every boundary bit_exact, unless a contracts file says otherwise. */
  baseline: boolean;
  /** The contract of every boundary the reference declares none for. */
  defaultContract: 'bit_exact';
}

/** A reference must be a whole run: a crashed or stopped capture cannot be the truth. */
export function incompleteRunProblem(bundle: TraceBundle, role: string): string | null {
  const run = bundle.manifest.run;
  if (run === undefined || run === null || run.status === 'completed') return null;
  return `${role} bundle ${bundle.dir}: ${bundle.manifestPath}: run.status: is "${run.status}"; a ${role} must be a completed run (${run.message || 'no message'})`;
}

/**
 * Both sides must have run the same case on the same inputs, else nothing they hold is
 * comparable. The inputs' digests are compared when both manifests state them in the same digest
 * scheme (tree-digest.ts); across schemes (a plain-sha256 reference and a tree-sha256 capture) a
 * digest in one says nothing of the other, so the inputs' bytes are read (each verified against
 * its own digest) and compared.
 */
export async function sameCaseProblem(reference: TraceBundle, other: TraceBundle, role: string): Promise<string | null> {
  if (other.manifest.case.id !== reference.manifest.case.id) {
    return `${role} bundle ${other.dir}: ${other.manifestPath}: case.id: is "${other.manifest.case.id}", the reference ${reference.manifestPath} is case "${reference.manifest.case.id}"`;
  }
  const sameScheme = schemeName(schemeOf(reference.manifest)) === schemeName(schemeOf(other.manifest));
  for (const [index, input] of other.manifest.inputs.entries()) {
    const mine = reference.input(input.name);
    const differs =
      mine !== undefined &&
      (sameScheme ? mine.sha256 !== input.sha256 : !Buffer.from((await reference.readInput(input.name)).data).equals((await other.readInput(input.name)).data));
    if (differs) {
      return `${role} bundle ${other.dir}: ${other.manifestPath}: inputs[${index}].sha256: input ${input.name} differs from the reference's (${reference.manifestPath}): the two runs did not read the same inputs`;
    }
  }
  return null;
}

function declaresNone(bundle: TraceBundle): boolean {
  return bundle.passes.some((pass) => pass.boundaries.some((entry) => entry.contract === null));
}

/**
 * The contracts the reference is judged under (null: its manifest's own) and how the reports say
 * so: a contracts file wins; then regression mode (every boundary bit_exact); then the reference's
 * own contracts, with the default contract for every boundary that declares none.
 */
export function referenceContractSource(choice: ContractChoice, reference: TraceBundle): { source: ContractSource | null; used: ContractsUsed } {
  if (choice.file !== null) {
    const file = choice.file;
    return {
      source: file,
      used: {
        kind: 'file',
        file: file.path,
        sha256: file.sha256,
        description: `contracts file ${file.path} (${file.rules.length} rule(s); boundaries no rule matches keep the reference's own contract)`,
      },
    };
  }
  if (choice.baseline) {
    const why = 'regression mode (--baseline): every boundary bit for bit against the stored baseline';
    return { source: { kind: 'all_bit_exact', why }, used: { kind: 'all_bit_exact', file: null, sha256: null, description: why } };
  }
  if (!declaresNone(reference))
    return {
      source: null,
      used: { kind: 'manifest', file: null, sha256: null, description: `the reference manifest's own contracts (${reference.manifestPath})` },
    };
  const why = `--contract ${choice.defaultContract}: the ${reference.manifest.kind} reference declares no contract for this boundary`;
  return {
    source: { kind: 'default', contract: choice.defaultContract, why },
    used: {
      kind: 'default',
      file: null,
      sha256: null,
      description: `${choice.defaultContract} for every boundary the ${reference.manifest.kind} reference declares no contract for (--contract ${choice.defaultContract})`,
    },
  };
}

/** The oracle's contracts: the reference's source; an oracle that declares none (another engine's capture) is judged like such a reference. */
export function oracleContractSource(referenceSource: ContractSource | null, oracle: TraceBundle, defaultContract: 'bit_exact'): ContractSource | null {
  if (referenceSource !== null) return referenceSource;
  return declaresNone(oracle)
    ? { kind: 'default', contract: defaultContract, why: `--contract ${defaultContract}: the oracle declares no contract for this boundary` }
    : null;
}

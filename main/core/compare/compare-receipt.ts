// The signed receipt of `compare`: the gate's receipt (gate-receipt.ts: the same predicate type,
// seals, verdict table and statistics, so `verify` checks it the same way) whose subjects are what
// was compared — the reference's and the candidate's manifests (which pin every file of each
// bundle by digest), the oracle's when there is one, and the contracts and map files when given —
// and whose predicate says what the comparison was (`comparison`: the bundles, where the
// contracts came from, what the map did).
import type { KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import { gateReceiptPredicate } from '../gate/gate-receipt.ts';
import type { Subject } from '../receipt/in-toto.ts';
import { writeReceipt, type WrittenReceipt } from '../receipt/receipt.ts';
import type { CompareResult } from './compare-run.ts';

export const COMPARE_RECEIPT_FILE_NAME = 'compare.dsse.json';

export function compareReceiptSubjects(result: CompareResult): Subject[] {
  const { comparison } = result;
  const subjects: Subject[] = [];
  const names = new Set<string>();
  const add = (name: string, sha256: string, role: string): string => {
    const unique = names.has(name) ? `${role}/${name}` : name;
    names.add(unique);
    subjects.push({ name: unique, digest: { sha256 } });
    return unique;
  };
  add(comparison.reference.subjectName, comparison.reference.manifestSha256, 'reference');
  add(comparison.candidate.subjectName, comparison.candidate.manifestSha256, 'candidate');
  if (comparison.oracle !== null) add(comparison.oracle.subjectName, comparison.oracle.manifestSha256, 'oracle');
  if (comparison.contracts.file !== null && comparison.contracts.sha256 !== null)
    add(basename(comparison.contracts.file), comparison.contracts.sha256, 'contracts');
  if (comparison.map !== null) add(basename(comparison.map.file), comparison.map.sha256, 'map');
  return subjects;
}

export function compareReceiptPredicate(result: CompareResult): Record<string, unknown> {
  // No engine ran and no engine options exist: the gate's `engine` and `options` would be empty words.
  const { engine: _engine, options: _options, ...gate } = gateReceiptPredicate(result);
  const { comparison } = result;
  const bundle = (summary: CompareResult['comparison']['reference']): Record<string, unknown> => ({
    manifest: summary.subjectName,
    sha256: summary.manifestSha256,
    // The scheme of the digests this manifest lists (its own sha256 above is always plain sha256).
    digestScheme: summary.digestScheme ?? 'sha256',
    kind: summary.kind,
    precision: summary.precision,
    generator: summary.generator,
    runtime: summary.runtime,
    createdAt: summary.createdAt,
  });
  // compare opens no weights: the cases name none (the manifests, which are subjects, say what each run used).
  const cases = (gate['cases'] as Record<string, unknown>[]).map(({ weights: _weights, ...rest }) => rest);
  return {
    ...gate,
    cases,
    mode: 'compare',
    comparison: {
      reference: bundle(comparison.reference),
      candidate: bundle(comparison.candidate),
      oracle: comparison.oracle === null ? null : bundle(comparison.oracle),
      baseline: comparison.baseline,
      contracts: {
        kind: comparison.contracts.kind,
        file: comparison.contracts.file === null ? null : basename(comparison.contracts.file),
        sha256: comparison.contracts.sha256,
        description: comparison.contracts.description,
      },
      map:
        comparison.map === null
          ? null
          : {
              file: basename(comparison.map.file),
              sha256: comparison.map.sha256,
              mapped: comparison.map.mapped.map((row) => ({ candidate: row.candidate, reference: row.reference, transform: row.transform })),
              unmapped: comparison.map.unmapped.map((row) => ({ candidate: row.candidate, reason: row.reason, passes: row.passes })),
              uncovered: comparison.map.uncovered.map((row) => ({ candidate: row.candidate, inReference: row.inReference, passes: row.passes })),
            },
    },
  };
}

/** Signs and writes the receipt of `result` to `file` (never overwriting one). */
export async function writeCompareReceipt(result: CompareResult, file: string, privateKey: KeyObject): Promise<WrittenReceipt> {
  return writeReceipt(file, { subjects: compareReceiptSubjects(result), predicate: compareReceiptPredicate(result), privateKey });
}

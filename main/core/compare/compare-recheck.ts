// Before compare signs anything, the evidence must still be what it judged (as the gate's
// evidence-recheck.ts does for a gate run): each manifest, contracts file and map file against
// the sha256 the receipt will pin, every file the manifests list against its digest — stat'ed
// when the comparison verified it and its identity has not moved, re-hashed otherwise
// (evidence-unchanged.ts). A file changed meanwhile is named, and nothing is signed.
import { bundleChangedSinceOpen, fileStillHashesTo } from '../bundle/evidence-unchanged.ts';
import type { CompareResult } from './compare-run.ts';

export async function compareEvidenceChanged(result: CompareResult): Promise<string | null> {
  const { comparison } = result;
  const bundles = [
    { role: 'reference', summary: comparison.reference },
    { role: 'candidate', summary: comparison.candidate },
    ...(comparison.oracle === null ? [] : [{ role: 'oracle', summary: comparison.oracle }]),
  ];
  for (const { role, summary } of bundles) {
    const changed = await bundleChangedSinceOpen(summary.dir, summary.manifestSha256);
    if (changed !== null) return `the ${role} bundle changed while it was compared: ${changed}`;
  }
  const files = [
    ...(comparison.contracts.file !== null ? [{ what: 'contracts file', path: comparison.contracts.file, sha256: comparison.contracts.sha256 }] : []),
    ...(comparison.map !== null ? [{ what: 'map file', path: comparison.map.file, sha256: comparison.map.sha256 }] : []),
  ];
  for (const file of files)
    if (file.sha256 === null || !(await fileStillHashesTo(file.path, file.sha256))) return `the ${file.what} ${file.path} changed while it was compared`;
  return null;
}

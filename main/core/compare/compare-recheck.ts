// Before compare signs anything, the evidence must still be what it judged (as the gate's
// evidence-recheck.ts does for a gate run): each bundle re-opened with every file re-hashed, each
// manifest, contracts file and map file against the sha256 the receipt will pin. A file changed
// meanwhile is named, and nothing is signed.
import { openBundle } from '../bundle/bundle-reader.ts';
import { sha256File } from '../bundle/digest.ts';
import { BundleError } from '../bundle/errors.ts';
import type { CompareResult } from './compare-run.ts';

export async function compareEvidenceChanged(result: CompareResult): Promise<string | null> {
  const hashOf = async (path: string): Promise<string | null> => {
    try {
      return (await sha256File(path)).sha256;
    } catch {
      return null;
    }
  };
  const { comparison } = result;
  const bundles = [
    { role: 'reference', summary: comparison.reference },
    { role: 'candidate', summary: comparison.candidate },
    ...(comparison.oracle === null ? [] : [{ role: 'oracle', summary: comparison.oracle }]),
  ];
  for (const { role, summary } of bundles) {
    if ((await hashOf(summary.manifestPath)) !== summary.manifestSha256) return `the ${role} manifest ${summary.manifestPath} changed while it was compared`;
    try {
      const reopened = await openBundle(summary.dir, { verify: 'files' });
      await reopened.close();
    } catch (error) {
      if (!(error instanceof BundleError)) throw error;
      return `the ${role} bundle changed while it was compared: ${error.message}`;
    }
  }
  const files = [
    ...(comparison.contracts.file !== null ? [{ what: 'contracts file', path: comparison.contracts.file, sha256: comparison.contracts.sha256 }] : []),
    ...(comparison.map !== null ? [{ what: 'map file', path: comparison.map.file, sha256: comparison.map.sha256 }] : []),
  ];
  for (const file of files) if ((await hashOf(file.path)) !== file.sha256) return `the ${file.what} ${file.path} changed while it was compared`;
  return null;
}

// Before the gate signs anything, it checks that the evidence it judged is still what it read:
// every reference and oracle bundle re-opened with all its files re-hashed against the
// manifest, each manifest against the sha256 the receipt will pin, the engine library and the
// weights against theirs, and each native bundle against its own manifest. A file swapped while
// the gate ran (a pass file replaced, a manifest edited) is caught here, named, and no receipt
// is signed: a signature over digests of files that were not the ones judged would be a lie.
import { openBundle } from '../bundle/bundle-reader.ts';
import { sha256File } from '../bundle/digest.ts';
import { BundleError } from '../bundle/errors.ts';
import type { GateResult } from './gate-types.ts';

/** Why the evidence is no longer what was judged; null when every file still matches. */
export async function evidenceChangedDuringRun(result: GateResult): Promise<string | null> {
  const hashOf = async (path: string): Promise<string | null> => {
    try {
      return (await sha256File(path)).sha256;
    } catch {
      return null;
    }
  };
  const engine = await hashOf(result.engine.library);
  if (engine !== result.engine.sha256) return `the engine library ${result.engine.library} changed while the gate ran`;
  for (const item of result.cases) {
    const bundles = [
      { role: 'reference', dir: item.reference.dir, manifest: item.reference.manifestPath, sha256: item.reference.manifestSha256 as string | null },
      ...(item.oracle === null ? [] : [{ role: 'oracle', dir: item.oracle.dir, manifest: item.oracle.manifestPath, sha256: item.oracle.manifestSha256 as string | null }]),
      ...(item.nativeDir === null ? [] : [{ role: 'native', dir: item.nativeDir, manifest: null, sha256: null }]),
      ...(item.isolatedDir === null ? [] : [{ role: 'isolated native', dir: item.isolatedDir, manifest: null, sha256: null }]),
    ];
    for (const bundle of bundles) {
      if (bundle.manifest !== null && (await hashOf(bundle.manifest)) !== bundle.sha256) {
        return `case ${item.id}: the ${bundle.role} manifest ${bundle.manifest} changed while the gate ran`;
      }
      try {
        const reopened = await openBundle(bundle.dir, { verify: 'files' });
        await reopened.close();
      } catch (error) {
        if (!(error instanceof BundleError)) throw error;
        return `case ${item.id}: the ${bundle.role} bundle changed while the gate ran: ${error.message}`;
      }
    }
    if (item.weights !== null && (await hashOf(item.weights.path)) !== item.weights.sha256) return `case ${item.id}: the weights ${item.weights.path} changed while the gate ran`;
  }
  return null;
}

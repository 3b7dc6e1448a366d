// Before the gate signs anything, it checks that the evidence it judged is still what it read:
// each reference and oracle manifest against the sha256 the receipt will pin, each native
// manifest against the sha256 it had when the gate opened it, every file those manifests list
// against its digest, the engine library and the weights against theirs. A file swapped while the
// gate ran (a pass file replaced, a manifest edited) is caught here, named, and no receipt is
// signed: a signature over digests of files that were not the ones judged would be a lie.
//
// It used to re-hash every file (a full read and sha256 of the whole run, about a third of the
// gate's time on a large trace). Now a file the run verified is stat'ed, and re-hashed only when
// its identity (device, inode, size, mtime, ctime) moved or was never trustworthy
// (file-pins.ts, evidence-unchanged.ts): the same guarantee at the cost of a stat per file.
import { bundleChangedSinceOpen, fileStillHashesTo } from '../bundle/evidence-unchanged.ts';
import type { BundleManifest } from '../bundle/manifest-schema.ts';
import type { GateResult } from './gate-types.ts';
import { verifiesFile } from './pass-evidence.ts';

/** Why the evidence is no longer what was judged; null when every file still matches. */
export async function evidenceChangedDuringRun(result: GateResult): Promise<string | null> {
  if (!(await fileStillHashesTo(result.engine.library, result.engine.sha256))) return `the engine library ${result.engine.library} changed while the gate ran`;
  for (const item of result.cases) {
    const bundles = [
      { role: 'reference', dir: item.reference.dir, sha256: item.reference.manifestSha256 as string | null },
      ...(item.oracle === null ? [] : [{ role: 'oracle', dir: item.oracle.dir, sha256: item.oracle.manifestSha256 as string | null }]),
      ...(item.nativeDir === null ? [] : [{ role: 'native', dir: item.nativeDir, sha256: null }]),
      ...(item.isolatedDir === null ? [] : [{ role: 'isolated native', dir: item.isolatedDir, sha256: null }]),
    ];
    // A pass shard judged only its passes' files of the reference and oracle (pass-evidence.ts).
    const range = item.passRange;
    const filesOf = range === undefined ? undefined : (manifest: BundleManifest) => verifiesFile(manifest, range);
    for (const bundle of bundles) {
      const changed = await bundleChangedSinceOpen(bundle.dir, bundle.sha256, bundle.role === 'reference' || bundle.role === 'oracle' ? filesOf : undefined);
      if (changed !== null) return `case ${item.id}: the ${bundle.role} bundle changed while the gate ran: ${changed}`;
    }
    if (item.weights !== null && !(await fileStillHashesTo(item.weights.path, item.weights.sha256)))
      return `case ${item.id}: the weights ${item.weights.path} changed while the gate ran`;
  }
  return null;
}

// The evidence a pass shard (pass-split.ts) verifies: of its reference and oracle bundles, the
// manifest (always: it pins every file), every file that is not a pass file (the inputs), and the
// files of the passes of its range, with their tensors' and chunks' digests and their padding.
// The other passes' files are neither read nor hashed; what the shard still reads of them (the
// values injected into earlier passes, the PCM records of earlier passes the last range's audio
// streams need) is digest-checked tensor by tensor as it is read. The shard's closing check before
// signing (evidence-recheck.ts) covers the same files.
import { join } from 'node:path';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { checkDeclaredPadding } from '../bundle/padding-check.ts';
import { verifyBundleFiles } from '../bundle/verify-bundle-files.ts';
import { bundleRealPaths } from '../bundle/verify-in-pass-order.ts';
import type { BundleManifest } from '../bundle/manifest-schema.ts';

/** A pass range [from, to); null: the shard judges no pass of the case. */
export type VerifiedPasses = { readonly from: number; readonly to: number } | null;

/** Whether bundle file `path` is one a shard judging `passes` verifies. */
export function verifiesFile(manifest: BundleManifest, passes: VerifiedPasses): (path: string) => boolean {
  const skipped = new Set(manifest.passes.filter((pass) => passes === null || pass.index < passes.from || pass.index >= passes.to).map((pass) => pass.file));
  return (path) => !skipped.has(path);
}

/**
 * Verifies the files of `bundle` (opened with verify 'none') a shard judging `passes` relies on,
 * and, with `checkPadding`, the declared padding of the range's boundaries: E_DIGEST / E_PADDING
 * naming the file and field, as a full open would.
 */
export async function verifyPassEvidence(bundle: TraceBundle, passes: VerifiedPasses, checkPadding: boolean): Promise<void> {
  const { manifest } = bundle;
  const keep = verifiesFile(manifest, passes);
  const realPaths = await bundleRealPaths(bundle, keep);
  const display = (relPath: string): string => join(bundle.dir, relPath);
  await verifyBundleFiles(manifest, realPaths, display);
  if (!checkPadding || manifest.kind === 'native') return;
  // Every pass stays in the view (field paths keep their indices); those outside the range have no boundaries to check.
  await checkDeclaredPadding(
    {
      manifestPath: bundle.manifestPath,
      passes: bundle.passes.map((pass) => (keep(pass.file) ? pass : { ...pass, boundaries: [] })),
      readBoundary: (index, name) => bundle.readBoundary(index, name),
    },
    display,
  );
}

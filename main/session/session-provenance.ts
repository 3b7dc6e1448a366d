// Provenance of a session: for each open bundle (reference, second oracle, the run judged) what it is
// — its manifest's sha256, its provenance verbatim, every file with the size and sha256 the
// manifest pins — and an inventory of the reference's evidence: what the engine was given and
// what was compared, what was not (and why), and what could not be compared (and why).
import type { Provenance } from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { sha256File } from '../core/bundle/digest.ts';
import type { SessionVerdict } from './judge-messages.ts';
import { inventoryOf } from './session-inventory.ts';

export interface ProvenanceInput {
  reference: TraceBundle;
  oracle: TraceBundle | null;
  native: TraceBundle | null;
  /** The session's verdicts so far (the gate's verdict for every judged row, judge-messages.ts SessionVerdict). */
  verdicts: readonly SessionVerdict[];
  /** Pass indices the engine has run in this session, in order. */
  passesRun: readonly number[];
}

type BundleRole = Provenance['bundles'][number]['role'];

async function describeBundle(role: BundleRole, bundle: TraceBundle): Promise<Provenance['bundles'][number]> {
  // Hashed now rather than trusted from memory: the manifest on disk is what a receipt pins.
  const { sha256 } = await sha256File(bundle.manifestPath);
  return {
    role,
    kind: bundle.manifest.kind,
    dir: bundle.dir,
    manifestSha256: sha256,
    provenanceJson: JSON.stringify(bundle.manifest.provenance, null, 2),
    files: bundle.manifest.files.map((file) => ({ path: file.path, bytes: file.bytes, sha256: file.sha256 })),
  };
}

export async function provenanceOf(input: ProvenanceInput): Promise<Provenance> {
  const present: [BundleRole, TraceBundle][] = [['reference', input.reference]];
  if (input.oracle !== null) present.push(['oracle', input.oracle]);
  if (input.native !== null) present.push(['run', input.native]);
  const bundles = await Promise.all(present.map(([role, bundle]) => describeBundle(role, bundle)));
  return {
    bundles,
    inventory: inventoryOf({
      reference: input.reference,
      engineStarted: input.native !== null || input.passesRun.length > 0,
      verdicts: input.verdicts,
      passesRun: input.passesRun,
    }),
  };
}

// What a receipt and a report say of one bundle: its manifest's digest and provenance, and how
// much evidence it holds. The gate and compare summarise their bundles alike.
import { sha256File } from '../bundle/digest.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import type { BundleSummary } from './gate-types.ts';
import { schemeName, schemeOf } from '../bundle/tree-digest.ts';

export async function summarize(bundle: TraceBundle, subjectName: string): Promise<BundleSummary> {
  const { manifest } = bundle;
  return {
    dir: bundle.dir,
    manifestPath: bundle.manifestPath,
    manifestSha256: (await sha256File(bundle.manifestPath)).sha256,
    subjectName,
    kind: manifest.kind,
    caseDescription: manifest.case.description,
    precision: manifest.provenance.precision,
    generator: {
      implementation: manifest.provenance.generator.implementation,
      revision: manifest.provenance.generator.revision,
      dirty: manifest.provenance.generator.dirty,
    },
    runtime: { ...manifest.provenance.runtime },
    createdAt: manifest.provenance.created_at,
    passes: manifest.passes.length,
    boundaries: manifest.passes.reduce((sum, pass) => sum + pass.boundaries.length, 0),
    digestScheme: schemeName(schemeOf(manifest)),
  };
}

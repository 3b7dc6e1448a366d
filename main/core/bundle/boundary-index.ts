// A manifest's boundaries looked up by pass and name, indexed per pass on first use: judging a
// pass of 1,000 boundaries looked each one up by a linear search, a million comparisons per pass
// and side. The first entry of a name wins, as the manifest's rules make names unique per pass.
import type { BoundaryEntry, BundleManifest } from './manifest-schema.ts';

export class BoundaryIndex {
  private readonly byPass = new Map<number, Map<string, BoundaryEntry>>();

  constructor(private readonly manifest: BundleManifest) {}

  get(passIndex: number, name: string): BoundaryEntry | undefined {
    let byName = this.byPass.get(passIndex);
    if (byName === undefined) {
      byName = new Map();
      for (const boundary of this.manifest.passes[passIndex]?.boundaries ?? []) if (!byName.has(boundary.name)) byName.set(boundary.name, boundary);
      this.byPass.set(passIndex, byName);
    }
    return byName.get(name);
  }
}

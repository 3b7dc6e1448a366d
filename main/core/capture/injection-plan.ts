// What a capture injects into the engine on each pass, read from a reference bundle: the shared
// machinery of teacher forcing (token-like boundaries) and layer isolation (every injectable
// boundary). The engine records its own computed value at an injected boundary and continues
// with the injected one (engine/include/trace_abi.h, ti_inject), so the native records stay
// observations of the engine while what flows downstream is the reference's.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import type { TensorData, TraceBundle } from '../bundle/bundle-reader.ts';
import { MANIFEST_FILE_NAME, parseManifest, type BundleManifest } from '../bundle/manifest-schema.ts';
import { replaceManifestFile } from '../bundle/native-manifest.ts';

export type InjectionPurpose = 'teacher_forcing' | 'layer_isolation' | 'rounding_decisions';

export interface PlannedInjection {
  boundary: string;
  tensor: TensorData;
}

export interface InjectionPlan {
  purpose: InjectionPurpose;
  /** The engine boundaries this plan injects, in catalogue order (each when the reference has it for the pass). */
  boundaries: readonly string[];
  /** The reference values to inject before pass `pass` runs. */
  injectionsFor(pass: number): Promise<PlannedInjection[]>;
}

/**
 * A plan that injects, before each pass, the reference's value of every boundary of `boundaries`
 * that the reference recorded in that pass. A boundary the reference lacks in a pass (a text
 * token in an audio pass) is simply not injected.
 */
export function planFromReference(reference: TraceBundle, boundaries: readonly string[], purpose: InjectionPurpose): InjectionPlan {
  return {
    purpose,
    boundaries,
    async injectionsFor(pass: number): Promise<PlannedInjection[]> {
      const planned: PlannedInjection[] = [];
      for (const boundary of boundaries) {
        if (reference.boundary(pass, boundary) === undefined) continue;
        planned.push({ boundary, tensor: await reference.readBoundary(pass, boundary) });
      }
      return planned;
    },
  };
}

/** Injectable boundaries of the engine catalogue, in catalogue order, filtered by `keep`. */
export function injectableBoundaries(description: EngineDescription, keep: (dtype: string) => boolean = () => true): string[] {
  return description.boundaries.filter((boundary) => boundary.injectable && keep(boundary.dtype)).map((boundary) => boundary.name);
}

export type RuntimeValue = string | number | boolean;

/**
 * Adds keys to provenance.runtime of a written native bundle's manifest.json (validated with the
 * reader's rules, then replaced atomically). Used for what is known only after the run, such as
 * the passes where a forced token differed from the engine's own choice. The manifest is not
 * listed in its own files[], so no digest changes.
 */
export async function addRuntimeProvenance(bundleDir: string, extra: Readonly<Record<string, RuntimeValue>>): Promise<void> {
  const path = join(bundleDir, MANIFEST_FILE_NAME);
  const manifest: BundleManifest = parseManifest(JSON.parse(await readFile(path, 'utf8')), path);
  const updated: BundleManifest = {
    ...manifest,
    provenance: { ...manifest.provenance, runtime: { ...manifest.provenance.runtime, ...extra } },
  };
  await replaceManifestFile(bundleDir, updated);
}

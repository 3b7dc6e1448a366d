// Layer isolation: a second capture of the same case in which every injectable boundary of every
// pass receives the reference's value (tokens and codes included). The engine records its own
// computed value at each injected boundary and continues with the reference's, so each segment
// between two injection points runs on reference inputs: its records show the error that segment
// alone adds (the *local* error). The normal capture shows the *accumulated* error. Comparing
// the two, boundary by boundary, separates a layer that is wrong from a layer that only inherits
// the error of an earlier one (local-vs-accumulated.ts compares them).
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { injectableBoundaries, planFromReference, type InjectionPlan, type RuntimeValue } from './injection-plan.ts';

/** Where the isolated bundle of a capture into `outDir` goes by default. */
export function isolatedBundleDir(outDir: string): string {
  return `${outDir.replace(/[/\\]+$/, '')}-isolated`;
}

/** Every injectable boundary of the engine gets the reference value, on every pass. */
export function isolationPlan(reference: TraceBundle, description: EngineDescription): InjectionPlan {
  return planFromReference(reference, injectableBoundaries(description), 'layer_isolation');
}

/** provenance.runtime keys of an isolated native bundle. */
export function isolationRuntime(referenceManifestSha256: string, plan: InjectionPlan): Record<string, RuntimeValue> {
  return {
    layer_isolated: true,
    layer_isolated_from: referenceManifestSha256,
    layer_isolated_boundaries: plan.boundaries.join(','),
  };
}

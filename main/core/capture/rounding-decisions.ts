// Rounding decisions: a boundary whose contract admits a discrete difference (`max_ulp`, e.g.
// features stored as bf16) is a decision point like a token. Two faithful implementations may
// legitimately round one element to neighbouring representable values, and one bf16 ULP
// (2^-8 relative) is far beyond every float32 bound downstream, so a free run would "fail"
// every later boundary for a difference its own contract allows. The f64 oracle is forced on
// the reference's features for the same reason (fixtures/README.md).
//
// So a capture injects the reference value at each such boundary (when the engine accepts
// injection there): the engine records its own value, which is judged under max_ulp, and the
// stages after it are judged on their own arithmetic from the same input.
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { injectableBoundaries, planFromReference, type InjectionPlan, type PlannedInjection } from './injection-plan.ts';

/** Injectable boundaries whose reference contract has a max_ulp, in catalogue order. */
export function roundingDecisionBoundaries(reference: TraceBundle, description: EngineDescription): string[] {
  const withUlpContract = new Set<string>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) {
      if (entry.contract?.kind === 'faithful' && entry.contract.max_ulp !== null) withUlpContract.add(entry.name);
    }
  }
  return injectableBoundaries(description).filter((name) => withUlpContract.has(name));
}

export function roundingDecisionPlan(reference: TraceBundle, description: EngineDescription): InjectionPlan | null {
  const boundaries = roundingDecisionBoundaries(reference, description);
  return boundaries.length === 0 ? null : planFromReference(reference, boundaries, 'rounding_decisions');
}

/** One plan that makes every injection of `plans`, in order (a boundary named twice is injected once). */
export function combinePlans(plans: readonly (InjectionPlan | null)[]): InjectionPlan | null {
  const present = plans.filter((plan): plan is InjectionPlan => plan !== null);
  if (present.length === 0) return null;
  if (present.length === 1) return present[0] as InjectionPlan;
  const boundaries = [...new Set(present.flatMap((plan) => plan.boundaries))];
  return {
    purpose: present[0]?.purpose ?? 'teacher_forcing',
    boundaries,
    async injectionsFor(pass: number): Promise<PlannedInjection[]> {
      const seen = new Set<string>();
      const all: PlannedInjection[] = [];
      for (const plan of present) {
        for (const injection of await plan.injectionsFor(pass)) {
          if (seen.has(injection.boundary)) continue;
          seen.add(injection.boundary);
          all.push(injection);
        }
      }
      return all;
    },
  };
}

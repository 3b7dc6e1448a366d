// What the gate checks between reading the evidence and running the engine, each problem in one
// clear message (exit 2, nothing run), instead of hundreds of rows that only say something
// is off:
//   - an oracle stores every boundary in the dtype and shape the reference declares (an oracle
//     kept as F64 where the reference is F32 would make every row REVIEW_REQUIRED);
//   - the reference (and so its oracle) records each boundary the engine's catalogue declares in
//     the catalogue's dtype and shape (rank, and every fixed extent; a symbol such as "T" takes
//     any extent).
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import type { BundleManifest } from '../bundle/manifest-schema.ts';

/** Problems listed in full; past this, a count. */
const LISTED = 8;

function listed(problems: readonly string[]): string {
  const shown = problems.slice(0, LISTED).map((problem) => `  ${problem}`);
  if (problems.length > LISTED) shown.push(`  ... and ${problems.length - LISTED} more`);
  return shown.join('\n');
}

const shapeText = (shape: readonly (number | string)[]): string => `[${shape.join(', ')}]`;

/**
 * Every (pass, boundary) the oracle stores in another dtype or shape than its reference, or null.
 * (Boundaries the oracle lacks are gaps of the run, judged row by row.)
 */
export function oracleStorageProblem(reference: BundleManifest, referencePath: string, oracle: BundleManifest, oraclePath: string): string | null {
  const problems: string[] = [];
  let widened = false;
  for (const pass of oracle.passes) {
    const referencePass = reference.passes.find((candidate) => candidate.index === pass.index);
    for (const entry of pass.boundaries) {
      const declared = referencePass?.boundaries.find((candidate) => candidate.name === entry.name);
      if (declared === undefined) continue;
      if (entry.dtype !== declared.dtype) {
        if (entry.dtype === 'F64') widened = true;
        problems.push(
          `pass ${pass.index} "${entry.name}": the oracle stores ${entry.dtype} ${shapeText(entry.shape)}, the reference declares ${declared.dtype} ${shapeText(declared.shape)}`,
        );
      } else if (entry.shape.join(',') !== declared.shape.join(',')) {
        problems.push(
          `pass ${pass.index} "${entry.name}": the oracle stores ${entry.dtype} ${shapeText(entry.shape)}, the reference declares ${declared.dtype} ${shapeText(declared.shape)}`,
        );
      }
    }
  }
  if (problems.length === 0) return null;
  const why = widened
    ? 'an oracle stores each boundary in the dtype the reference (and the engine) declares, rounded to nearest from float64, so the comparison judges the same values (the Python kit does this when given reference=)'
    : 'an oracle stores each boundary as its reference does';
  return `oracle ${oraclePath} does not store its boundaries as the reference ${referencePath} does (${problems.length} boundary records); ${why}:\n${listed(problems)}`;
}

/** Every boundary `bundle` records in another dtype or shape than the engine's catalogue declares, or null. */
export function catalogueProblem(bundle: BundleManifest, bundlePath: string, role: string, description: EngineDescription, library: string): string | null {
  const catalogue = new Map(description.boundaries.map((boundary) => [boundary.name, boundary]));
  const problems: string[] = [];
  const named = new Set<string>();
  for (const pass of bundle.passes) {
    for (const entry of pass.boundaries) {
      const declared = catalogue.get(entry.name);
      if (declared === undefined || named.has(entry.name)) continue;
      const shapeAgrees =
        declared.shape.length === entry.shape.length && declared.shape.every((extent, axis) => typeof extent === 'string' || extent === entry.shape[axis]);
      if (declared.dtype === entry.dtype && shapeAgrees) continue;
      named.add(entry.name);
      problems.push(
        `"${entry.name}" (first in pass ${pass.index}): the ${role} records ${entry.dtype} ${shapeText(entry.shape)}, the catalogue declares ${declared.dtype} ${shapeText(declared.shape)}`,
      );
    }
  }
  if (problems.length === 0) return null;
  return (
    `the ${role} ${bundlePath} and the engine's catalogue (${library}) disagree on ${problems.length} boundar${problems.length === 1 ? 'y' : 'ies'}; ` +
    `nothing was run (a boundary's dtype and shape are part of the contract both sides declare):\n${listed(problems)}`
  );
}

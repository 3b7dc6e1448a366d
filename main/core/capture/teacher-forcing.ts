// Teacher forcing: on every pass, the capture injects the reference's value of every token-like
// boundary (an injectable boundary of integer dtype in the engine's catalogue: the text token,
// the audio codes) before the pass runs. The engine records its own choice there — so a token
// that diverges is still judged at that pass — and continues with the reference's, so later
// passes see the same context as the reference and stay comparable.
//
// After the run, the native records tell where the engine's own choice differed from the forced
// value; that list goes into the native bundle's provenance (runtime.teacher_forced_*).
import type { EngineDescription } from '../../engine-host/engine-description.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, isFloatDType, type DType } from '../bundle/dtype.ts';
import { injectableBoundaries, planFromReference, type InjectionPlan, type RuntimeValue } from './injection-plan.ts';

/** Integer element types: what a token, a code or an index is stored as. */
export function isIntegerDType(dtype: DType): boolean {
  return !isFloatDType(dtype) && dtype !== 'BOOL';
}

/** The token-like boundaries of an engine: injectable, integer dtype, in catalogue order. */
export function tokenBoundaries(description: EngineDescription): string[] {
  return injectableBoundaries(description, (dtype) => isIntegerDType(dtype as DType));
}

/**
 * Why teacher forcing would force nothing in `reference`'s case, or null when it forces
 * something: the catalogue declares no token-like boundary (injectable, integer), or the
 * reference records none of those it declares. Asked before anything runs, so
 * `--teacher-force` never silently does nothing.
 */
export function nothingToForce(reference: Pick<TraceBundle, 'passes' | 'manifestPath'>, description: EngineDescription): string | null {
  const tokens = tokenBoundaries(description);
  if (tokens.length === 0) {
    return `--teacher-force: nothing to force: the engine's catalogue declares no token-like boundary (an injectable boundary of integer dtype, such as a sampled token)`;
  }
  const recorded = new Set(reference.passes.flatMap((pass) => pass.boundaries.map((entry) => entry.name)));
  if (tokens.some((name) => recorded.has(name))) return null;
  return `--teacher-force: nothing to force: ${reference.manifestPath} records none of the engine's token-like boundaries (${tokens.map((name) => `"${name}"`).join(', ')})`;
}

export function teacherForcingPlan(reference: TraceBundle, description: EngineDescription): InjectionPlan {
  return planFromReference(reference, tokenBoundaries(description), 'teacher_forcing');
}

/** A pass where the engine's own choice differed from the value forced on it. */
export interface ForcedDifference {
  pass: number;
  boundary: string;
  /** The values as decimal strings (a token is one element; longer tensors are joined with commas). */
  native: string;
  reference: string;
}

export interface TeacherForcingSummary {
  /** The boundaries the capture forced (when the reference had them for the pass). */
  boundaries: string[];
  /** How many injections were made over the run. */
  injections: number;
  /** Every (pass, boundary) where the engine's own recorded value differed from the reference's. */
  differences: ForcedDifference[];
  /** The passes with at least one difference, ascending. */
  differingPasses: number[];
}

function integerText(tensor: { dtype: DType; data: Uint8Array }): string {
  const view = new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  const values: string[] = [];
  const size = DTYPE_SIZE[tensor.dtype];
  for (let at = 0; at + size <= tensor.data.byteLength; at += size) {
    switch (tensor.dtype) {
      case 'I8':
        values.push(String(view.getInt8(at)));
        break;
      case 'U8':
        values.push(String(view.getUint8(at)));
        break;
      case 'I16':
        values.push(String(view.getInt16(at, true)));
        break;
      case 'U16':
        values.push(String(view.getUint16(at, true)));
        break;
      case 'I32':
        values.push(String(view.getInt32(at, true)));
        break;
      case 'U32':
        values.push(String(view.getUint32(at, true)));
        break;
      case 'I64':
        values.push(String(view.getBigInt64(at, true)));
        break;
      default:
        values.push(String(view.getBigUint64(at, true)));
    }
  }
  return values.join(',');
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);
}

/** Reads the forced boundaries of a captured native bundle and lists where the engine chose otherwise. */
export async function summarizeTeacherForcing(
  native: TraceBundle,
  reference: TraceBundle,
  boundaries: readonly string[],
  injections: number,
): Promise<TeacherForcingSummary> {
  const differences: ForcedDifference[] = [];
  for (const pass of native.passes) {
    for (const boundary of boundaries) {
      const nativeEntry = native.boundary(pass.index, boundary);
      const referenceEntry = reference.boundary(pass.index, boundary);
      if (nativeEntry === undefined || referenceEntry === undefined) continue;
      const [mine, theirs] = await Promise.all([native.readBoundary(pass.index, boundary), reference.readBoundary(pass.index, boundary)]);
      if (mine.dtype === theirs.dtype && sameBytes(mine.data, theirs.data)) continue;
      differences.push({ pass: pass.index, boundary, native: integerText(mine), reference: integerText(theirs) });
    }
  }
  const differingPasses = [...new Set(differences.map((difference) => difference.pass))].sort((a, b) => a - b);
  return { boundaries: [...boundaries], injections, differences, differingPasses };
}

/** provenance.runtime keys of a teacher-forced native bundle, known before the run. */
export function teacherForcingRuntimeAtStart(referenceManifestSha256: string): Record<string, RuntimeValue> {
  return { teacher_forced: true, teacher_forced_from: referenceManifestSha256 };
}

/** provenance.runtime keys added after the run, derived from the native records. */
export function teacherForcingRuntimeAfterRun(summary: TeacherForcingSummary): Record<string, RuntimeValue> {
  return {
    teacher_forced_boundaries: summary.boundaries.join(','),
    teacher_forced_injections: summary.injections,
    teacher_forced_differences: summary.differences.length,
    teacher_forced_differing_passes: summary.differingPasses.join(','),
  };
}

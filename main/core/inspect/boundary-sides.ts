// Which records of one boundary the inspector views can use. The views are asked about a
// (pass, boundary) the renderer saw in the table; either side may lack it (a run cut short, an
// engine that does not emit it, a boundary the reference lacks), and the two sides may disagree
// on dtype or shape (then element-wise views have nothing to pair). Every refusal names the pass
// and the boundary, because the message reaches the user as is.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { elementCount, type DType } from '../bundle/dtype.ts';
import type { BoundaryEntry } from '../bundle/manifest-schema.ts';

export function where(pass: number, boundary: string): string {
  return `pass ${pass} boundary "${boundary}"`;
}

export interface BoundarySides {
  readonly pass: number;
  readonly name: string;
  readonly reference: BoundaryEntry | null;
  readonly native: BoundaryEntry | null;
  /** Of the reference when it has the boundary, else of the native record. */
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly elements: number;
  /** Both sides present with the same dtype and shape: elements pair up one to one. */
  readonly paired: boolean;
  /** Why the sides do not pair (null when they do). */
  readonly unpaired: string | null;
}

const shapeText = (shape: readonly number[]): string => `[${shape.join(', ')}]`;

/** The records of (pass, name) on both sides; throws when neither side has one. */
export function boundarySides(native: TraceBundle | null, reference: TraceBundle, pass: number, name: string): BoundarySides {
  const referenceEntry = reference.boundary(pass, name) ?? null;
  const nativeEntry = native?.boundary(pass, name) ?? null;
  const primary = referenceEntry ?? nativeEntry;
  if (primary === null) {
    const nativeWord = native === null ? 'no native run is open' : `the native bundle (${native.dir}) has no record of it either`;
    throw new Error(`${where(pass, name)}: the reference bundle (${reference.dir}) has no record of it and ${nativeWord}`);
  }
  let unpaired: string | null = null;
  if (referenceEntry === null) unpaired = `the reference bundle (${reference.dir}) has no record of it`;
  else if (nativeEntry === null) {
    unpaired = native === null ? 'no native run is open' : `the native bundle (${native.dir}) has no record of it`;
  } else if (nativeEntry.dtype !== referenceEntry.dtype) unpaired = `native is ${nativeEntry.dtype}, the reference ${referenceEntry.dtype}`;
  else if (shapeText(nativeEntry.shape) !== shapeText(referenceEntry.shape)) {
    unpaired = `native has shape ${shapeText(nativeEntry.shape)}, the reference ${shapeText(referenceEntry.shape)}`;
  }
  return {
    pass,
    name,
    reference: referenceEntry,
    native: nativeEntry,
    dtype: primary.dtype,
    shape: primary.shape,
    elements: elementCount(primary.shape),
    paired: unpaired === null,
    unpaired,
  };
}

/** Throws unless both sides are present and pair up; `what` says what needed them. */
export function requirePaired(sides: BoundarySides, what: string): void {
  if (!sides.paired) throw new Error(`${where(sides.pass, sides.name)}: ${what} needs both sides, and ${sides.unpaired ?? 'they do not pair'}`);
}

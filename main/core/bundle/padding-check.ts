// A reference or oracle bundle is the truth a native run is judged against, so its own padding
// must keep the policy it declares: past `valid.length` along `valid.axis`, padding "zero" means
// every element is zero (+0 or -0 for a float). A violation is evidence that contradicts itself,
// refused when the bundle is opened (E_PADDING), naming the boundary and the first offending
// element in logical index order.
import { DTYPE_SIZE, isFloatDType, type DType } from './dtype.ts';
import { BundleError, formatFieldPath } from './errors.ts';
import type { BoundaryEntry } from './manifest-schema.ts';

/** What checkDeclaredPadding needs of a bundle (TraceBundle provides it). */
export interface PaddedBundleView {
  readonly manifestPath: string;
  readonly passes: readonly { readonly index: number; readonly file: string; readonly boundaries: readonly BoundaryEntry[] }[];
  readBoundary(passIndex: number, name: string): Promise<{ readonly data: Uint8Array }>;
}

/** Bytes of one scalar lane: a complex element is two float32 lanes, each may be -0. */
function laneBytes(dtype: DType): number {
  return dtype === 'C64' ? 4 : DTYPE_SIZE[dtype];
}

/** The element at `offset` is zero: every byte 0, or (floats) only the sign bit set in each lane. */
function isZeroElement(data: Uint8Array, offset: number, dtype: DType): boolean {
  const size = DTYPE_SIZE[dtype];
  const lane = laneBytes(dtype);
  const float = isFloatDType(dtype);
  for (let start = offset; start < offset + size; start += lane) {
    for (let byte = 0; byte < lane; byte++) {
      const value = data[start + byte] as number;
      // Little-endian: the sign bit is the top bit of the last byte of a lane.
      const allowed = float && byte === lane - 1 ? value === 0 || value === 0x80 : value === 0;
      if (!allowed) return false;
    }
  }
  return true;
}

function describeElement(data: Uint8Array, offset: number, dtype: DType): string {
  const view = new DataView(data.buffer, data.byteOffset + offset, DTYPE_SIZE[dtype]);
  if (dtype === 'F32') return String(view.getFloat32(0, true));
  if (dtype === 'F64') return String(view.getFloat64(0, true));
  const bytes = [...data.subarray(offset, offset + DTYPE_SIZE[dtype])].map((byte) => byte.toString(16).padStart(2, '0'));
  return `bytes 0x${bytes.reverse().join('')}`;
}

/** The multi-index of flat (row-major) element `flat` of `shape`. */
function indexOf(flat: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length).fill(0);
  let rest = flat;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    const extent = shape[axis] as number;
    index[axis] = rest % extent;
    rest = Math.floor(rest / extent);
  }
  return index;
}

/** The first element past the valid region that is not zero, as a flat index, or null. */
export function firstPaddingViolation(entry: BoundaryEntry, data: Uint8Array): number | null {
  const valid = entry.valid;
  if (valid === null || valid.padding !== 'zero') return null;
  const extent = entry.shape[valid.axis] ?? 0;
  if (valid.length >= extent) return null;
  let inner = 1;
  for (let axis = valid.axis + 1; axis < entry.shape.length; axis++) inner *= entry.shape[axis] as number;
  const period = extent * inner;
  const validSpan = valid.length * inner;
  const size = DTYPE_SIZE[entry.dtype];
  const elements = data.byteLength / size;
  for (let row = 0; row < elements; row += period) {
    for (let flat = row + validSpan; flat < row + period; flat++) {
      if (!isZeroElement(data, flat * size, entry.dtype)) return flat;
    }
  }
  return null;
}

/** Throws E_PADDING for the first boundary (in pass order) whose padding breaks its declared policy. */
export async function checkDeclaredPadding(bundle: PaddedBundleView, display: (relPath: string) => string): Promise<void> {
  for (const [p, pass] of bundle.passes.entries()) {
    for (const [b, entry] of pass.boundaries.entries()) {
      const valid = entry.valid;
      if (valid === null || valid.padding !== 'zero' || valid.length >= (entry.shape[valid.axis] ?? 0)) continue;
      const { data } = await bundle.readBoundary(pass.index, entry.name);
      const flat = firstPaddingViolation(entry, data);
      if (flat === null) continue;
      const index = indexOf(flat, entry.shape);
      throw new BundleError(
        'E_PADDING',
        display(pass.file),
        formatFieldPath(['passes', p, 'boundaries', b, 'valid']),
        `boundary "${entry.name}" of pass ${pass.index}: element [${index.join(', ')}] is ${describeElement(data, flat * DTYPE_SIZE[entry.dtype], entry.dtype)}, ` +
          `past the valid length ${valid.length} on axis ${valid.axis}, where the declared padding "zero" requires zero (${bundle.manifestPath})`,
      );
    }
  }
}

// The bit inspector: one element of one boundary on both sides, its text, bits and fields
// (element-format.ts), and the pair's |diff| and ULP distance under the comparator's conventions
// (element-quantities.ts, so the inspector agrees with the heatmap cell it was opened from).
//
// The element's bytes are read with readBoundaryRange: where the bundle states chunk digests, only
// the chunk that holds the element is read and checked against its digest; otherwise the whole
// tensor is read and its sha256 checked (findFirstSpecial reads to the end for the same reason).
// Either way the inspector shows only verified bytes, even if the file changed after the bundle
// was opened.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, isFloatDType } from '../bundle/dtype.ts';
import type { ElementValue } from './view-values.ts';
import { unravel } from '../compare/compare-kernels.ts';
import { boundarySides, where } from './boundary-sides.ts';
import { elementBits } from './element-format.ts';
import { WindowValues } from './element-quantities.ts';

export interface ElementRequest {
  readonly pass: number;
  readonly boundary: string;
  readonly flatIndex: number;
}

/** The `size` bytes at `byteOffset` of a boundary, verified (readBoundaryRange). */
function readElementBytes(bundle: TraceBundle, pass: number, name: string, byteOffset: number, size: number): Promise<Uint8Array> {
  return bundle.readBoundaryRange(pass, name, byteOffset, byteOffset + size);
}

export async function elementAt(native: TraceBundle | null, reference: TraceBundle, request: ElementRequest): Promise<ElementValue> {
  const { pass, boundary, flatIndex } = request;
  const sides = boundarySides(native, reference, pass, boundary);
  if (sides.native !== null && sides.reference !== null && !sides.paired) {
    throw new Error(`${where(pass, boundary)}: the bit inspector pairs the element on both sides, and ${sides.unpaired ?? 'they do not pair'}`);
  }
  if (!Number.isSafeInteger(flatIndex) || flatIndex < 0 || flatIndex >= sides.elements) {
    throw new Error(`${where(pass, boundary)}: flat index ${flatIndex} is outside [0, ${sides.elements}) of shape [${sides.shape.join(', ')}]`);
  }
  const size = DTYPE_SIZE[sides.dtype];
  const offset = flatIndex * size;
  const [nativeBytes, referenceBytes] = await Promise.all([
    sides.native !== null && native !== null ? readElementBytes(native, pass, boundary, offset, size) : null,
    sides.reference !== null ? readElementBytes(reference, pass, boundary, offset, size) : null,
  ]);

  let absDiff: number | null = null;
  let ulp: number | null = null;
  if (nativeBytes !== null && referenceBytes !== null) {
    const values = new WindowValues(sides.dtype, 1, { native: true, reference: true });
    const out = new Float64Array(1);
    const flags = new Uint8Array(1);
    values.attach(nativeBytes, referenceBytes);
    values.decode(0, 1);
    values.quantity('abs_diff', 0, 1, out, flags);
    absDiff = out[0] as number;
    if (isFloatDType(sides.dtype)) {
      values.quantity('ulp', 0, 1, out, flags);
      ulp = out[0] as number;
    }
  }
  return {
    pass,
    boundary,
    dtype: sides.dtype,
    flatIndex,
    index: unravel(flatIndex, sides.shape),
    reference: referenceBytes === null ? null : elementBits(sides.dtype, referenceBytes, 0),
    native: nativeBytes === null ? null : elementBits(sides.dtype, nativeBytes, 0),
    absDiff,
    ulp,
  };
}

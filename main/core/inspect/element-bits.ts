// The bit inspector: one element of one boundary on both sides, its text, bits and fields
// (element-format.ts), and the pair's |diff| and ULP distance under the comparator's conventions
// (element-quantities.ts, so the inspector agrees with the heatmap cell it was opened from).
//
// The element is copied out of the chunk that holds it, and the rest of the tensor is still read:
// the reader checks a tensor's sha256 only once its last chunk has been delivered, and the
// inspector shows evidence, so what it shows must rest on verified bytes even if the file changed
// after the bundle was opened (findFirstSpecial reads to the end for the same reason). A 64 MB
// tensor costs ~0.1-0.2 s; bundles carry no per-range digest that would allow less.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, isFloatDType } from '../bundle/dtype.ts';
import type { ElementValue } from './view-values.ts';
import { unravel } from '../compare/compare-kernels.ts';
import { boundarySides, where } from './boundary-sides.ts';
import { elementBits } from './element-format.ts';
import { WindowValues } from './element-quantities.ts';

/** Chunk size of the element read (the whole tensor is read to verify its digest). */
const ELEMENT_CHUNK_BYTES = 1024 * 1024;

export interface ElementRequest {
  readonly pass: number;
  readonly boundary: string;
  readonly flatIndex: number;
}

/** The `size` bytes at `byteOffset` of a boundary, from a read of the whole, digest-checked tensor. */
async function readElementBytes(bundle: TraceBundle, pass: number, name: string, byteOffset: number, size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size);
  let at = 0;
  let filled = 0;
  // Chunks are multiples of every element size, so an element never straddles two; the copy
  // below would handle it anyway.
  // No early exit: the digest is checked after the last chunk, and the loop throws E_DIGEST then.
  for await (const chunk of bundle.readBoundaryChunks(pass, name, ELEMENT_CHUNK_BYTES)) {
    const end = at + chunk.byteLength;
    if (filled < size && end > byteOffset + filled) {
      const from = byteOffset + filled - at;
      const take = Math.min(size - filled, chunk.byteLength - from);
      out.set(chunk.subarray(from, from + take), filled);
      filled += take;
    }
    at = end;
  }
  if (filled !== size) throw new Error(`${where(pass, name)}: the tensor ended before byte ${byteOffset + size} of ${bundle.dir}`);
  return out;
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

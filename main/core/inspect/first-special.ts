// "Jump to the first NaN / infinity": walks boundaries in the given execution order and returns
// the first element holding one, on the native side of the first boundary that has one, else
// on its reference side. Integer dtypes cannot hold either and are skipped from the manifest
// alone. The scan tests bit patterns (no decoding) chunk by chunk; once an element is found the
// rest of that tensor is still read, so the answer rests on bytes whose sha256 the reader
// checked. Padding is scanned too: a NaN there is still a NaN the engine wrote.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { isFloatDType, type DType } from '../bundle/dtype.ts';
import type { BoundaryRef, FirstSpecialValue } from './view-values.ts';
import { MAX_READ_BYTES } from '../compare/chunk-stream.ts';

export type SpecialKind = 'nan' | 'inf';

/** Index of the first unit of `chunk` holding `kind` (units: elements, or C64 components), or -1. */
function firstUnit(dtype: DType, chunk: Uint8Array, kind: SpecialKind): number {
  const { buffer, byteOffset, byteLength } = chunk;
  switch (dtype) {
    case 'F32':
    case 'C64': {
      const words = new Int32Array(buffer, byteOffset, byteLength >> 2);
      for (let i = 0; i < words.length; i++) {
        const magnitude = (words[i] as number) & 0x7fffffff;
        if (kind === 'nan' ? magnitude > 0x7f800000 : magnitude === 0x7f800000) return i;
      }
      return -1;
    }
    case 'BF16':
    case 'F16': {
      const exp = dtype === 'BF16' ? 0x7f80 : 0x7c00;
      const halves = new Uint16Array(buffer, byteOffset, byteLength >> 1);
      for (let i = 0; i < halves.length; i++) {
        const magnitude = (halves[i] as number) & 0x7fff;
        if (kind === 'nan' ? magnitude > exp : magnitude === exp) return i;
      }
      return -1;
    }
    case 'F64': {
      const words = new Int32Array(buffer, byteOffset, byteLength >> 2);
      for (let i = 0; i < words.length; i += 2) {
        const high = (words[i + 1] as number) & 0x7fffffff;
        if (high < 0x7ff00000) continue;
        const mantissaZero = high === 0x7ff00000 && words[i] === 0;
        if (kind === 'nan' ? !mantissaZero : mantissaZero) return i >> 1;
      }
      return -1;
    }
    default:
      return -1;
  }
}

/** Flat index of the first element of a boundary holding `kind`, or -1. */
async function scan(bundle: TraceBundle, pass: number, name: string, dtype: DType, kind: SpecialKind): Promise<number> {
  const unitBytes = dtype === 'C64' ? 4 : dtype === 'F64' ? 8 : dtype === 'F32' ? 4 : 2;
  const unitsPerElement = dtype === 'C64' ? 2 : 1;
  let found = -1;
  let unitsBefore = 0;
  // Chunks are whole units (MAX_READ_BYTES is a multiple of 8) and fresh arrays, so aligned.
  for await (const chunk of bundle.readBoundaryChunks(pass, name, MAX_READ_BYTES)) {
    if (found < 0) {
      const unit = firstUnit(dtype, chunk, kind);
      if (unit >= 0) found = Math.floor((unitsBefore + unit) / unitsPerElement);
    }
    unitsBefore += chunk.byteLength / unitBytes;
  }
  return found;
}

export async function findFirstSpecial(
  native: TraceBundle | null,
  reference: TraceBundle,
  order: readonly BoundaryRef[],
  kind: SpecialKind,
): Promise<FirstSpecialValue> {
  for (const { pass, boundary } of order) {
    const sides: ReadonlyArray<readonly [TraceBundle | null, 'native' | 'reference']> = [
      [native, 'native'],
      [reference, 'reference'],
    ];
    for (const [bundle, side] of sides) {
      const entry = bundle?.boundary(pass, boundary);
      if (bundle === null || entry === undefined || !isFloatDType(entry.dtype)) continue;
      const flatIndex = await scan(bundle, pass, boundary, entry.dtype, kind);
      if (flatIndex >= 0) return { pass, boundary, flatIndex, side };
    }
  }
  return null;
}

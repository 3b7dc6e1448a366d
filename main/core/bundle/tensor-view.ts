// Typed-array views of tensor bytes (little-endian, as bundles store them), half-precision
// widening, and gathering a strided buffer into row-major logical order.
import { endianness } from 'node:os';
import { DTYPE_SIZE, elementCount, type DType } from './dtype.ts';

export interface TypedArrayOfDType {
  F32: Float32Array;
  F16: Uint16Array; // raw bits: widen with f16ToF32
  BF16: Uint16Array; // raw bits: widen with bf16ToF32
  F64: Float64Array;
  I8: Int8Array;
  I16: Int16Array;
  I32: Int32Array;
  I64: BigInt64Array;
  U8: Uint8Array;
  U16: Uint16Array;
  U32: Uint32Array;
  U64: BigUint64Array;
  BOOL: Uint8Array;
  C64: Float32Array; // interleaved re, im
}

type TypedArrayConstructorOf<T> = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T;

const CONSTRUCTORS: { [D in DType]: TypedArrayConstructorOf<TypedArrayOfDType[D]> } = {
  F32: Float32Array,
  F16: Uint16Array,
  BF16: Uint16Array,
  F64: Float64Array,
  I8: Int8Array,
  I16: Int16Array,
  I32: Int32Array,
  I64: BigInt64Array,
  U8: Uint8Array,
  U16: Uint16Array,
  U32: Uint32Array,
  U64: BigUint64Array,
  BOOL: Uint8Array,
  C64: Float32Array,
};

/** Bundles are little-endian; typed arrays use the host's order, so a big-endian host is refused. */
function assertLittleEndianHost(): void {
  if (endianness() !== 'LE') throw new Error('trace-inspector reads little-endian tensors and needs a little-endian host');
}

/** Alignment a typed array needs for one scalar of `dtype` (C64 is a pair of float32). */
function scalarBytes(dtype: DType): number {
  return dtype === 'C64' ? 4 : DTYPE_SIZE[dtype];
}

/**
 * A typed-array view of tensor bytes: shares memory when `data` is suitably aligned, copies
 * otherwise (typed arrays cannot start at an unaligned byte offset).
 */
export function typedView<D extends DType>(data: Uint8Array, dtype: D): TypedArrayOfDType[D] {
  assertLittleEndianHost();
  const size = DTYPE_SIZE[dtype];
  if (data.byteLength % size !== 0) {
    throw new RangeError(`${data.byteLength} bytes is not a whole number of ${dtype} elements (${size} bytes each)`);
  }
  const scalar = scalarBytes(dtype);
  const aligned = data.byteOffset % scalar === 0 ? data : data.slice();
  const Ctor = CONSTRUCTORS[dtype] as TypedArrayConstructorOf<TypedArrayOfDType[D]>;
  return new Ctor(aligned.buffer, aligned.byteOffset, aligned.byteLength / scalar);
}

function halfBits(data: Uint16Array | Uint8Array): Uint16Array {
  return data instanceof Uint16Array ? data : typedView(data, 'F16');
}

/** bfloat16 -> float32 (exact: a bf16 is the high half of a float32, NaN payloads kept). */
export function bf16ToF32(data: Uint16Array | Uint8Array): Float32Array {
  const bits = halfBits(data);
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = (bits[i] as number) << 16;
  return new Float32Array(out.buffer);
}

/** IEEE binary16 -> float32 (exact, subnormals normalised, signed zeros and NaN payloads kept). */
export function f16ToF32(data: Uint16Array | Uint8Array): Float32Array {
  const bits = halfBits(data);
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = f16BitsToF32Bits(bits[i] as number);
  return new Float32Array(out.buffer);
}

export function f16BitsToF32Bits(half: number): number {
  const sign = (half & 0x8000) << 16;
  const exponent = (half >> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  if (exponent === 0) {
    if (mantissa === 0) return sign >>> 0;
    // Subnormal: shift until the implicit bit appears, lowering the exponent as we go.
    let shifted = mantissa;
    let lost = -1;
    do {
      lost += 1;
      shifted <<= 1;
    } while ((shifted & 0x400) === 0);
    return (sign | ((127 - 15 - lost) << 23) | ((shifted & 0x3ff) << 13)) >>> 0;
  }
  if (exponent === 0x1f) return (sign | 0x7f800000 | (mantissa << 13)) >>> 0;
  return (sign | ((exponent - 15 + 127) << 23) | (mantissa << 13)) >>> 0;
}

/**
 * Gathers a strided buffer into row-major logical order. `strides` are in elements; element
 * (0, ..., 0) sits at byte 0 of `src`; every addressed element must lie inside `src`. Strides
 * may be 0 (broadcast) but not negative. Returns a fresh array of elements x size bytes.
 */
export function gatherStrided(src: Uint8Array, dtype: DType, shape: readonly number[], strides: readonly number[]): Uint8Array {
  const rank = shape.length;
  if (strides.length !== rank) throw new RangeError(`strides [${strides.join(', ')}] do not match the rank ${rank} of shape [${shape.join(', ')}]`);
  const size = DTYPE_SIZE[dtype];
  const count = elementCount(shape);
  const out = new Uint8Array(count * size);
  if (count === 0) return out;
  let lastElement = 0;
  for (let axis = 0; axis < rank; axis++) {
    const stride = strides[axis] as number;
    const extent = shape[axis] as number;
    if (!Number.isSafeInteger(stride) || stride < 0) throw new RangeError(`strides[${axis}] = ${stride}: strides must be non-negative integers`);
    if (!Number.isSafeInteger(extent) || extent < 0) throw new RangeError(`shape[${axis}] = ${extent}: extents must be non-negative integers`);
    lastElement += (extent - 1) * stride;
  }
  if ((lastElement + 1) * size > src.byteLength) {
    throw new RangeError(
      `shape [${shape.join(', ')}] with strides [${strides.join(', ')}] addresses ${(lastElement + 1) * size} bytes, the buffer holds ${src.byteLength}`,
    );
  }
  if (rank === 0) {
    out.set(src.subarray(0, size));
    return out;
  }

  const innerExtent = shape[rank - 1] as number;
  const innerStride = strides[rank - 1] as number;
  const copyRow = rowCopier(src, out, size, innerExtent, innerStride);
  const index = new Array<number>(rank - 1).fill(0);
  let srcElement = 0;
  let dstElement = 0;
  for (;;) {
    copyRow(srcElement, dstElement);
    dstElement += innerExtent;
    // Advance the odometer over the outer axes.
    let axis = rank - 2;
    for (; axis >= 0; axis--) {
      const next = (index[axis] as number) + 1;
      if (next < (shape[axis] as number)) {
        index[axis] = next;
        srcElement += strides[axis] as number;
        break;
      }
      srcElement -= (next - 1) * (strides[axis] as number);
      index[axis] = 0;
    }
    if (axis < 0) return out;
  }
}

/** Copies one innermost row: a block copy when contiguous, else element by element by bits. */
function rowCopier(src: Uint8Array, out: Uint8Array, size: number, extent: number, stride: number): (srcElement: number, dstElement: number) => void {
  if (stride === 1) {
    return (s, d) => out.set(src.subarray(s * size, (s + extent) * size), d * size);
  }
  const word = size % 4 === 0 ? 4 : size % 2 === 0 ? 2 : 1;
  const aligned = src.byteOffset % word === 0 ? src : src.slice();
  const words = size / word;
  const from =
    word === 4
      ? new Uint32Array(aligned.buffer, aligned.byteOffset, Math.floor(aligned.byteLength / 4))
      : word === 2
        ? new Uint16Array(aligned.buffer, aligned.byteOffset, Math.floor(aligned.byteLength / 2))
        : aligned;
  const to =
    word === 4
      ? new Uint32Array(out.buffer, out.byteOffset, out.byteLength / 4)
      : word === 2
        ? new Uint16Array(out.buffer, out.byteOffset, out.byteLength / 2)
        : out;
  return (s, d) => {
    for (let i = 0; i < extent; i++) {
      const fromWord = (s + i * stride) * words;
      const toWord = (d + i) * words;
      for (let w = 0; w < words; w++) to[toWord + w] = from[fromWord + w] as number;
    }
  };
}

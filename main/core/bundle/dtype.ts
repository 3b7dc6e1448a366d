// Element types shared by bundles (safetensors names), the engine ABI and the comparator.
import { z } from 'zod';

export const DTYPES = ['F32', 'F16', 'BF16', 'F64', 'I8', 'I16', 'I32', 'I64', 'U8', 'U16', 'U32', 'U64', 'BOOL', 'C64'] as const;

export const DTypeSchema = z.enum(DTYPES);
export type DType = z.infer<typeof DTypeSchema>;

/** Bytes per element (C64 is one interleaved float32 re/im pair). */
export const DTYPE_SIZE: Readonly<Record<DType, number>> = {
  F32: 4,
  F16: 2,
  BF16: 2,
  F64: 8,
  I8: 1,
  I16: 2,
  I32: 4,
  I64: 8,
  U8: 1,
  U16: 2,
  U32: 4,
  U64: 8,
  BOOL: 1,
  C64: 8,
};

/** Floating-point kinds are compared by value with tolerance; the rest bit for bit. */
export function isFloatDType(dtype: DType): boolean {
  return dtype === 'F32' || dtype === 'F16' || dtype === 'BF16' || dtype === 'F64' || dtype === 'C64';
}

/** The ti_dtype enum of engine/include/trace_abi.h, by numeric value. */
export const ABI_DTYPE_ORDER: readonly DType[] = ['F32', 'F16', 'BF16', 'F64', 'I8', 'I16', 'I32', 'I64', 'U8', 'U16', 'U32', 'U64', 'BOOL', 'C64'];

export function dtypeFromAbi(code: number): DType | undefined {
  return ABI_DTYPE_ORDER[code];
}

export function abiFromDtype(dtype: DType): number {
  return ABI_DTYPE_ORDER.indexOf(dtype);
}

/** Element count of a shape; a rank-0 tensor holds one element. */
export function elementCount(shape: readonly number[]): number {
  let count = 1;
  for (const extent of shape) count *= extent;
  return count;
}

export function byteLengthOf(dtype: DType, shape: readonly number[]): number {
  return elementCount(shape) * DTYPE_SIZE[dtype];
}

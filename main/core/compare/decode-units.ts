// Element values as doubles, whatever the stored dtype: the oracle errors, the tie analysis and
// the inspector's quantities read values this way (the kernels compare raw bits instead).
import type { DType } from '../bundle/dtype.ts';
import { halfTable } from './compare-kernels.ts';

/** Values of units [from, from + count) of a window, as doubles (C64: components). */
export function decodeUnits(dtype: DType, bytes: Uint8Array, from: number, count: number, out: Float64Array): void {
  const { buffer, byteOffset } = bytes;
  switch (dtype) {
    case 'F32':
    case 'C64': {
      const view = new Float32Array(buffer, byteOffset + from * 4, count);
      for (let k = 0; k < count; k++) out[k] = view[k] as number;
      return;
    }
    case 'F64':
      out.set(new Float64Array(buffer, byteOffset + from * 8, count));
      return;
    case 'BF16':
    case 'F16': {
      const table = halfTable(dtype === 'BF16' ? 'bf16' : 'f16');
      const view = new Uint16Array(buffer, byteOffset + from * 2, count);
      for (let k = 0; k < count; k++) out[k] = table[view[k] as number] as number;
      return;
    }
    case 'I64':
    case 'U64': {
      const view = dtype === 'I64' ? new BigInt64Array(buffer, byteOffset + from * 8, count) : new BigUint64Array(buffer, byteOffset + from * 8, count);
      for (let k = 0; k < count; k++) out[k] = Number(view[k] as bigint);
      return;
    }
    case 'I8':
      out.set(new Int8Array(buffer, byteOffset + from, count));
      return;
    case 'I16':
      out.set(new Int16Array(buffer, byteOffset + from * 2, count));
      return;
    case 'U16':
      out.set(new Uint16Array(buffer, byteOffset + from * 2, count));
      return;
    case 'I32':
      out.set(new Int32Array(buffer, byteOffset + from * 4, count));
      return;
    case 'U32':
      out.set(new Uint32Array(buffer, byteOffset + from * 4, count));
      return;
    default:
      out.set(new Uint8Array(buffer, byteOffset + from, count));
  }
}

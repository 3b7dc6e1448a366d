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

/** Units a decode scratch holds: callers decode a window in blocks of this many. */
export const DECODE_BLOCK_UNITS = 65536;

// The thread's decode scratches, made on first use. A caller decodes into one and reads it back
// before it next awaits, so callers on one thread never use one at once. One per caller was
// 512 KiB allocated and zeroed per boundary (three per boundary judged against the oracle), for
// boundaries that mostly hold a few hundred values: a third of the embedded default gate's CPU,
// with the garbage collection it caused.
const scratches: Float64Array[] = [];

/** Decode scratch `slot` (0 to 2) of this thread: valid until the caller next awaits. */
export function decodeScratch(slot: 0 | 1 | 2): Float64Array {
  let scratch = scratches[slot];
  if (scratch === undefined) {
    scratch = new Float64Array(DECODE_BLOCK_UNITS);
    scratches[slot] = scratch;
  }
  return scratch;
}

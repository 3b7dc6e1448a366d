// The comparator's two bounded second looks, taken only when the values failed: a layout check
// (is native the reference with its axes permuted?) and, for sampler orders, a tie analysis (do
// the differences stay inside groups of tied values?). Both read whole tensors again, so the
// caller skips them above a size limit.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, elementCount, type DType } from '../bundle/dtype.ts';
import { contiguousStrides } from '../bundle/layout.ts';
import { C_NONE, C_TIE_ORDER, C_VALUE, halfTable, type KernelState, ulp64, unitsPerElement } from './compare-kernels.ts';
import type { BoundaryComparison, TieAnalysis } from './comparison-types.ts';
import { decodeUnits } from './decode-units.ts';
import { shapeText } from './shapes.ts';

/** The two bundles a second look reads again. */
interface BundlePair {
  readonly native: TraceBundle;
  readonly reference: TraceBundle;
}

/** Typed views of a whole tensor, for random access in the layout check. */
interface UnitViews {
  readonly bytes: Uint8Array;
  readonly words: Int32Array | null;
  readonly floats: Float32Array | null;
  readonly halves: Uint16Array | null;
  readonly doubles: Float64Array | null;
}

function unitViews(dtype: DType, data: Uint8Array): UnitViews {
  const { buffer, byteOffset, byteLength } = data;
  const wide = dtype === 'F32' || dtype === 'C64' || dtype === 'F64';
  return {
    bytes: data,
    words: wide ? new Int32Array(buffer, byteOffset, byteLength >> 2) : null,
    floats: dtype === 'F32' || dtype === 'C64' ? new Float32Array(buffer, byteOffset, byteLength >> 2) : null,
    halves: dtype === 'BF16' || dtype === 'F16' ? new Uint16Array(buffer, byteOffset, byteLength >> 1) : null,
    doubles: dtype === 'F64' ? new Float64Array(buffer, byteOffset, byteLength >> 3) : null,
  };
}

/** Whether native unit i against reference unit k is inside the contract (no state touched). */
function unitPasses(st: KernelState, dtype: DType, n: UnitViews, r: UnitViews, i: number, k: number): boolean {
  let x: number;
  let y: number;
  let same: boolean;
  let ulp: number;
  switch (dtype) {
    case 'F32':
    case 'C64': {
      const wn = (n.words as Int32Array)[i] as number;
      const wr = (r.words as Int32Array)[k] as number;
      x = (n.floats as Float32Array)[i] as number;
      y = (r.floats as Float32Array)[k] as number;
      same = wn === wr;
      const kn = (wn ^ ((wn >> 31) >>> 1)) - (wn >> 31);
      const kr = (wr ^ ((wr >> 31) >>> 1)) - (wr >> 31);
      ulp = Math.abs(kn - kr);
      break;
    }
    case 'BF16':
    case 'F16': {
      const hn = (n.halves as Uint16Array)[i] as number;
      const hr = (r.halves as Uint16Array)[k] as number;
      const table = halfTable(dtype === 'BF16' ? 'bf16' : 'f16');
      x = table[hn] as number;
      y = table[hr] as number;
      same = hn === hr;
      const kn = hn & 0x8000 ? -(hn & 0x7fff) : hn;
      const kr = hr & 0x8000 ? -(hr & 0x7fff) : hr;
      ulp = Math.abs(kn - kr);
      break;
    }
    case 'F64': {
      const wn = n.words as Int32Array;
      const wr = r.words as Int32Array;
      x = (n.doubles as Float64Array)[i] as number;
      y = (r.doubles as Float64Array)[k] as number;
      same = wn[2 * i] === wr[2 * k] && wn[2 * i + 1] === wr[2 * k + 1];
      ulp = ulp64(wn[2 * i + 1] as number, wn[2 * i] as number, wr[2 * k + 1] as number, wr[2 * k] as number);
      break;
    }
    default: {
      const size = DTYPE_SIZE[dtype];
      for (let b = 0; b < size; b++) if (n.bytes[i * size + b] !== r.bytes[k * size + b]) return false;
      return true;
    }
  }
  if (same) return true;
  if (x - x !== 0 || y - y !== 0) return st.nonFiniteCode(x, y, same) === C_NONE;
  return st.passes(Math.abs(x - y), Math.abs(y), ulp);
}

/** Every permutation of 0..rank-1 except the identity (rank <= 4), or the last-two-axes swap. */
function candidatePermutations(rank: number): number[][] {
  if (rank > 4) {
    const swap = [...Array(rank).keys()];
    [swap[rank - 2], swap[rank - 1]] = [swap[rank - 1] as number, swap[rank - 2] as number];
    return [swap];
  }
  const out: number[][] = [];
  const build = (prefix: number[], rest: number[]): void => {
    if (rest.length === 0) {
      if (prefix.some((axis, i) => axis !== i)) out.push(prefix);
      return;
    }
    rest.forEach((axis, i) => build([...prefix, axis], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  build([], [...Array(rank).keys()]);
  return out;
}

/** Whether a permutation only moves axes of extent 1 (then it reads the data in identity order). */
function isTrivialPermutation(shape: readonly number[], permutation: readonly number[]): boolean {
  const moving = permutation.filter((axis) => (shape[axis] as number) !== 1);
  return moving.every((axis, i) => i === 0 || (moving[i - 1] as number) < axis);
}

export interface LayoutVerdict {
  readonly permutation: number[] | null;
  readonly detail: string;
  readonly note: string | null;
}

export async function layoutCheck(sides: BundlePair, pass: number, name: string, st: KernelState, limit: number): Promise<LayoutVerdict> {
  const { dtype, shape } = st;
  const bytes = elementCount(shape) * DTYPE_SIZE[dtype];
  if (bytes > limit) {
    return { permutation: null, detail: '', note: `layout check skipped: ${bytes} bytes per side exceed the ${limit}-byte limit for a second read` };
  }
  const [native, reference] = await Promise.all([sides.native.readBoundary(pass, name), sides.reference.readBoundary(pass, name)]);
  const n = unitViews(dtype, aligned(native.data));
  const r = unitViews(dtype, aligned(reference.data));
  const units = unitsPerElement(dtype);
  const strides = contiguousStrides(shape);
  const count = elementCount(shape);
  for (const permutation of candidatePermutations(shape.length)) {
    if (isTrivialPermutation(shape, permutation)) continue;
    const permuted = permutation.map((axis) => shape[axis] as number);
    const source = permutation.map((axis) => strides[axis] as number);
    const index = new Array<number>(shape.length).fill(0);
    let src = 0;
    let matches = true;
    for (let j = 0; j < count && matches; j++) {
      for (let u = 0; u < units; u++) {
        if (!unitPasses(st, dtype, n, r, j * units + u, src * units + u)) {
          matches = false;
          break;
        }
      }
      // advance the odometer over the permuted shape
      for (let axis = permuted.length - 1; axis >= 0; axis--) {
        index[axis] = (index[axis] as number) + 1;
        src += source[axis] as number;
        if ((index[axis] as number) < (permuted[axis] as number)) break;
        src -= (index[axis] as number) * (source[axis] as number);
        index[axis] = 0;
      }
    }
    if (matches) {
      return {
        permutation,
        detail:
          `native holds the reference with its axes permuted [${permutation.join(', ')}]: the reference's ` +
          `${shapeText(shape)} laid out as ${shapeText(permuted)} and read back as ${shapeText(shape)} (within the ${st.bitExact ? 'bit_exact' : 'faithful'} contract)`,
        note: null,
      };
    }
  }
  return { permutation: null, detail: '', note: null };
}

function aligned(data: Uint8Array): Uint8Array {
  return data.byteOffset % 8 === 0 ? data : data.slice();
}

async function readValues(bundle: TraceBundle, pass: number, name: string, limit: number): Promise<Float64Array | null> {
  const entry = bundle.boundary(pass, name);
  if (entry === undefined || entry.byte_length > limit) return null;
  const tensor = await bundle.readBoundary(pass, name);
  const count = elementCount(tensor.shape) * unitsPerElement(tensor.dtype);
  const out = new Float64Array(count);
  decodeUnits(tensor.dtype, aligned(tensor.data), 0, count, out);
  return out;
}

/**
 * For `<p>.order` and `<p>.threshold`: the reference threshold, the indices tied with it and
 * whether native ordered them alike. For a failing `<p>.order` whose every difference stays inside
 * groups of equal reference `<p>.scaled` values, the mismatches become 'tie_order'.
 */
export async function tieAnalysis(sides: BundlePair, pass: number, name: string, st: KernelState, result: BoundaryComparison, limit: number): Promise<void> {
  const suffix = name.endsWith('.order') ? '.order' : name.endsWith('.threshold') ? '.threshold' : null;
  if (suffix === null) return;
  const prefix = name.slice(0, -suffix.length);
  const scaled = await readValues(sides.reference, pass, `${prefix}.scaled`, limit);
  if (scaled === null) {
    result.notes.push(`no tie analysis: the reference has no readable ${prefix}.scaled in pass ${pass}`);
    return;
  }
  const referenceOrder = await readValues(sides.reference, pass, `${prefix}.order`, limit);
  const nativeOrder = await readValues(sides.native, pass, `${prefix}.order`, limit);

  if (suffix === '.order' && st.mismatches > 0 && referenceOrder !== null && nativeOrder !== null && nativeOrder.length === referenceOrder.length) {
    const size = scaled.length;
    const seen = new Uint8Array(size);
    let permutation = nativeOrder.length === size;
    for (const index of nativeOrder) {
      if (!Number.isInteger(index) || index < 0 || index >= size || seen[index] === 1) {
        permutation = false;
        break;
      }
      seen[index] = 1;
    }
    const insideTies =
      permutation &&
      st.classCounts.every((count, code) => code === C_NONE || code === C_VALUE || count === 0) &&
      nativeOrder.every((index, j) => scaled[index] === scaled[referenceOrder[j] as number]);
    if (insideTies) {
      st.reclassify(C_VALUE, C_TIE_ORDER);
      result.classes = st.classes();
      result.firstMismatch = st.first;
      result.worst = st.worst;
    }
  }

  const threshold = await readValues(sides.reference, pass, `${prefix}.threshold`, limit);
  if (threshold === null || threshold.length < 1) {
    result.notes.push(`no tie analysis: the reference has no readable ${prefix}.threshold in pass ${pass}`);
    return;
  }
  const value = threshold[0] as number;
  const ordered = referenceOrder ?? Float64Array.from(scaled.keys());
  const group = Array.from(ordered).filter((index) => scaled[index] === value);
  const members = new Set(group);
  let orderAgrees = false;
  if (nativeOrder === null) result.notes.push(`tie order not judged: the native bundle has no readable ${prefix}.order in pass ${pass}`);
  else {
    const nativeGroup = Array.from(nativeOrder).filter((index) => members.has(index));
    orderAgrees = nativeGroup.length === group.length && nativeGroup.every((index, i) => index === group[i]);
  }
  const ties: TieAnalysis = { threshold: value, group, orderAgrees };
  result.ties = ties;
}

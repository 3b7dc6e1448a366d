// Row-major strides and the `layout` field of a boundary: data on disk is always row-major;
// `strides` record how the producer's buffer was laid out, `layout` says whether that was the
// contiguous one.

export type Layout = 'row-major' | 'strided';

/** Contiguous (C order) strides in elements: the last axis varies fastest. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    strides[axis] = step;
    step *= shape[axis] ?? 1;
  }
  return strides;
}

/**
 * True when `strides` address the elements in row-major order. An axis of extent 1 never moves
 * the address, so its stride is free (PyTorch reports such tensors contiguous whatever it holds);
 * a tensor with no elements is trivially row-major.
 */
export function isRowMajor(shape: readonly number[], strides: readonly number[]): boolean {
  if (shape.length !== strides.length) return false;
  if (shape.some((extent) => extent === 0)) return true;
  const expected = contiguousStrides(shape);
  return shape.every((extent, axis) => extent === 1 || strides[axis] === expected[axis]);
}

export function layoutOf(shape: readonly number[], strides: readonly number[]): Layout {
  return isRowMajor(shape, strides) ? 'row-major' : 'strided';
}

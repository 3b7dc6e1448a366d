// Reading a TensorView's binary cells (inspector-api.ts documents the layout): the renderer draws
// from these, and the tests check the core's encoding through the same code, so the argmax
// formula exists once on the reading side. Pure (base64-bytes.ts and DataView), so it runs in
// Node and in browsers alike.
import { base64ToBytes } from './base64-bytes.ts';
import type { TensorView } from './inspector-api.ts';

export interface DecodedCells {
  /** Per cell, the pooled value (NaN: a NaN cell or nothing pooled; nanCells tells them apart). */
  values: Float64Array;
  /** Per cell, the flat element index (row-major over the tensor) of the cell's max. */
  flatIndex: Float64Array;
}

function base64Bytes(base64: string, field: string): DataView {
  const bytes = base64ToBytes(base64);
  // TensorViewSchema refused malformed data already; this only guards a caller that skipped it.
  if (bytes === null) throw new Error(`getTensorView: ${field} is not base64`);
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function decodeValues(values: TensorView['values'], cells: number): Float64Array {
  const view = base64Bytes(values.data, 'values.data');
  const out = new Float64Array(cells);
  if (values.format === 'f32') for (let i = 0; i < cells; i += 1) out[i] = view.getFloat32(i * 4, true);
  else for (let i = 0; i < cells; i += 1) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/** The offset reader of each argmax format; null for flat indices. */
function offsetReader(view: DataView, format: TensorView['argmax']['format']): ((cell: number) => number) | null {
  switch (format) {
    case 'u8_offset':
      return (cell) => view.getUint8(cell);
    case 'u16_offset':
      return (cell) => view.getUint16(cell * 2, true);
    case 'u32_offset':
      return (cell) => view.getUint32(cell * 4, true);
    case 'f64_index':
      return null;
  }
}

function decodeFlatIndex(tensorView: TensorView, cells: number): Float64Array {
  const view = base64Bytes(tensorView.argmax.data, 'argmax.data');
  const out = new Float64Array(cells);
  const offsetOf = offsetReader(view, tensorView.argmax.format);
  if (offsetOf === null) {
    for (let cell = 0; cell < cells; cell += 1) out[cell] = view.getFloat64(cell * 8, true);
    return out;
  }
  const { grid, window, folded } = tensorView;
  for (let cell = 0; cell < cells; cell += 1) {
    const offset = offsetOf(cell);
    const row = window.row0 + Math.floor(cell / grid.cols) * grid.rowStep + Math.floor(offset / grid.colStep);
    const col = window.col0 + (cell % grid.cols) * grid.colStep + (offset % grid.colStep);
    out[cell] = row * folded.cols + col;
  }
  return out;
}

/** Decodes both buffers (the schema has already checked their lengths against the grid). */
export function decodeCells(view: TensorView): DecodedCells {
  const cells = view.grid.rows * view.grid.cols;
  return { values: decodeValues(view.values, cells), flatIndex: decodeFlatIndex(view, cells) };
}

// The wire form of a pooled grid (layouts documented on TensorViewSchema): cell values as
// little-endian float32 — float64 only when some finite value is outside float32's range — and
// argmaxes as offsets inside their cell in the narrowest unsigned width that holds any offset of
// a cell that size. Bytes go through a DataView, so the host's byte order never matters.
import type { EncodedArgmax, EncodedCells } from './view-values.ts';

/** The smallest normal float32: below it float32 keeps fewer than 24 bits, and flushes to 0 at 2^-149. */
const F32_MIN_NORMAL = 2 ** -126;

/** Whether float32 holds `value` with float32's full relative precision (NaN and infinities hold). */
function fitsF32(value: number): boolean {
  if (value === 0 || !Number.isFinite(value)) return true;
  const magnitude = Math.abs(value);
  return magnitude >= F32_MIN_NORMAL && Number.isFinite(Math.fround(value));
}

export function encodeValues(values: Float64Array): EncodedCells {
  const wide = values.some((value) => !fitsF32(value));
  const width = wide ? 8 : 4;
  const bytes = Buffer.alloc(values.length * width);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (wide) for (let i = 0; i < values.length; i++) view.setFloat64(i * 8, values[i] as number, true);
  else for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i] as number, true);
  return { format: wide ? 'f64' : 'f32', data: bytes.toString('base64') };
}

export interface CellGeometry {
  /** Folded columns of the tensor (row length of the flat index). */
  readonly cols: number;
  readonly row0: number;
  readonly col0: number;
  readonly gridCols: number;
  readonly rowStep: number;
  readonly colStep: number;
}

type OffsetFormat = Exclude<EncodedArgmax['format'], 'f64_index'>;
const OFFSET_WIDTHS: readonly { format: OffsetFormat; bytes: 1 | 2 | 4; limit: number }[] = [
  { format: 'u8_offset', bytes: 1, limit: 2 ** 8 },
  { format: 'u16_offset', bytes: 2, limit: 2 ** 16 },
  { format: 'u32_offset', bytes: 4, limit: 2 ** 32 },
];

/**
 * `flatIndex` per cell (NaN: nothing pooled there, sent as the cell's origin). Offsets are
 * dr * colStep + dc < rowStep * colStep, so the width is chosen from the cell size alone.
 */
export function encodeArgmax(flatIndex: Float64Array, geometry: CellGeometry): EncodedArgmax {
  const { cols, row0, col0, gridCols, rowStep, colStep } = geometry;
  const width = OFFSET_WIDTHS.find((candidate) => rowStep * colStep <= candidate.limit);
  if (width === undefined) {
    const bytes = Buffer.alloc(flatIndex.length * 8);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    flatIndex.forEach((index, cell) => view.setFloat64(cell * 8, Number.isNaN(index) ? cellOrigin(cell, geometry) : index, true));
    return { format: 'f64_index', data: bytes.toString('base64') };
  }
  const bytes = Buffer.alloc(flatIndex.length * width.bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let cell = 0; cell < flatIndex.length; cell++) {
    const index = flatIndex[cell] as number;
    let offset = 0;
    if (!Number.isNaN(index)) {
      const dr = Math.floor(index / cols) - row0 - Math.floor(cell / gridCols) * rowStep;
      const dc = (index % cols) - col0 - (cell % gridCols) * colStep;
      // The pooling only ever records an element of the cell itself: anything else is a bug here.
      if (dr < 0 || dr >= rowStep || dc < 0 || dc >= colStep) throw new Error(`internal: argmax ${index} is outside cell ${cell}`);
      offset = dr * colStep + dc;
    }
    if (width.bytes === 1) view.setUint8(cell, offset);
    else if (width.bytes === 2) view.setUint16(cell * 2, offset, true);
    else view.setUint32(cell * 4, offset, true);
  }
  return { format: width.format, data: bytes.toString('base64') };
}

function cellOrigin(cell: number, geometry: CellGeometry): number {
  const row = geometry.row0 + Math.floor(cell / geometry.gridCols) * geometry.rowStep;
  return row * geometry.cols + geometry.col0 + (cell % geometry.gridCols) * geometry.colStep;
}

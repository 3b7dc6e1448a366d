// The pooled grid of a tensor view (tensor-view-pooling.ts says what a cell keeps): the generic
// path pools per-element quantities any dtype's decoder produced; F32 has a fused path that reads
// the window's float32 words directly and computes, flags and pools each element in one loop,
// since 4096 x 4096 F32 is the common large case and the generic path spends most of its time
// copying into Float64Arrays and calling per element (~3x slower on 16M elements).
import { ulp32 } from '../compare/compare-kernels.ts';
import { INF, NAN, type Quantity } from './element-quantities.ts';

/** Float32Array reads the platform's byte order; the bundles are little-endian. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** One side's window as float32 values and as raw 32-bit words (for ULPs). */
export interface F32Side {
  readonly values: Float32Array;
  readonly words: Int32Array;
}

export function f32Side(bytes: Uint8Array | null): F32Side | null {
  if (bytes === null) return null;
  const length = bytes.byteLength >> 2;
  return { values: new Float32Array(bytes.buffer, bytes.byteOffset, length), words: new Int32Array(bytes.buffer, bytes.byteOffset, length) };
}

/** The pooled cells, in typed arrays (a 1024 x 1024 grid is a million cells). */
export class Grid {
  /** Score of the cell's current pick: |value| (or the diff), -1 while empty. */
  private readonly score: Float64Array;
  /** The pick itself (signed, for reference / native); the same as score for diffs. */
  private readonly value: Float64Array;
  /** Flat element index of the pick, or of the cell's first NaN; NaN while nothing was pooled. */
  private readonly arg: Float64Array;
  private readonly flags: Uint8Array;

  constructor(
    readonly cells: number,
    private readonly signed: boolean,
  ) {
    this.score = new Float64Array(cells).fill(-1);
    this.value = signed ? new Float64Array(cells) : this.score;
    this.arg = new Float64Array(cells).fill(Number.NaN);
    this.flags = new Uint8Array(cells);
  }

  /**
   * Pools window elements [from, to) of one row: `first` is the window's flat start, `col` the
   * view column of element `from` (relative to the window's col0), `cellBase` the row's first cell.
   */
  pool(quantity: Float64Array, flags: Uint8Array, from: number, to: number, first: number, col: number, cellBase: number, colStep: number): void {
    const score = this.score;
    const value = this.value;
    const arg = this.arg;
    const cellFlags = this.flags;
    let cell = cellBase + Math.floor(col / colStep);
    let left = colStep - (col % colStep); // elements until the next cell
    for (let i = from; i < to; i++) {
      if (left === 0) {
        cell += 1;
        left = colStep;
      }
      left -= 1;
      const f = flags[i] as number;
      const before = cellFlags[cell] as number;
      if (f !== 0) {
        cellFlags[cell] = before | f;
        if ((f & NAN) !== 0) {
          if ((before & NAN) === 0) arg[cell] = first + i;
          continue;
        }
      }
      if ((before & NAN) !== 0) continue;
      const v = quantity[i] as number;
      const s = v < 0 ? -v : v;
      if (s > (score[cell] as number)) {
        score[cell] = s;
        if (this.signed) value[cell] = v;
        arg[cell] = first + i;
      }
    }
  }

  /**
   * The F32 path of quantity() + pool() for window elements [from, to) of one row, with exactly
   * their conventions (element-quantities.ts): NaN and infinity flags from both sides read, a
   * mismatching non-finite pair an Infinity difference, ULPs on the float32 bits. `shown` is the
   * side whose values a reference / native view shows; `other` the side only flagged (or null).
   */
  poolF32(
    metric: Quantity,
    native: F32Side | null,
    reference: F32Side | null,
    from: number,
    to: number,
    first: number,
    col: number,
    cellBase: number,
    colStep: number,
  ): void {
    const score = this.score;
    const value = this.value;
    const arg = this.arg;
    const cellFlags = this.flags;
    const diff = metric === 'abs_diff' || metric === 'ulp';
    const onBits = metric === 'ulp';
    const shown = metric === 'native' ? native : reference;
    const other = metric === 'native' ? reference : native;
    if (shown === null || (diff && other === null)) throw new Error(`internal: the ${metric} view needs its sides read`);
    if (diff && other !== null) return this.poolF32Diff(onBits, other, shown, from, to, first, col, cellBase, colStep);
    const a = shown.values;
    const b = other === null ? null : other.values;
    const aw = shown.words;
    const bw = other === null ? null : other.words;
    let cell = cellBase + Math.floor(col / colStep);
    let left = colStep - (col % colStep);
    for (let i = from; i < to; i++) {
      if (left === 0) {
        cell += 1;
        left = colStep;
      }
      left -= 1;
      const x = a[i] as number;
      let f = 0;
      let v: number;
      if (diff) {
        // a is the reference and b the native here: |x - y| and ULPs are symmetric.
        const y = (b as Float32Array)[i] as number;
        if (x !== x || y !== y) {
          f = NAN;
          v = x !== x && y !== y ? 0 : Infinity;
        } else if (x - x !== 0 || y - y !== 0) {
          f = INF;
          v = x === y ? 0 : Infinity;
        } else v = onBits ? ulp32((bw as Int32Array)[i] as number, aw[i] as number) : Math.abs(x - y);
      } else {
        if (x !== x) {
          f = NAN;
          v = 0;
        } else {
          if (x - x !== 0) f = INF;
          v = x;
        }
        if (b !== null) {
          const y = b[i] as number;
          if (y !== y) f |= NAN;
          else if (y - y !== 0) f |= INF;
        }
      }
      const before = cellFlags[cell] as number;
      if (f !== 0) {
        cellFlags[cell] = before | f;
        if ((f & NAN) !== 0) {
          if ((before & NAN) === 0) arg[cell] = first + i;
          continue;
        }
      }
      if ((before & NAN) !== 0) continue;
      const s = v < 0 ? -v : v;
      if (s > (score[cell] as number)) {
        score[cell] = s;
        if (this.signed) value[cell] = v;
        arg[cell] = first + i;
      }
    }
  }

  /**
   * abs_diff / ulp over F32, a cell's run of elements at a time: the running max stays in locals
   * and is written once per cell run; a finite pair (its difference is finite) takes the short
   * branch. A NaN cell keeps its first NaN as argmax, as pool() does: `best` becomes Infinity so
   * nothing after it wins, and the run's max is not written over the NaN's index.
   */
  private poolF32Diff(
    onBits: boolean,
    native: F32Side,
    reference: F32Side,
    from: number,
    to: number,
    first: number,
    col: number,
    cellBase: number,
    colStep: number,
  ): void {
    const score = this.score;
    const arg = this.arg;
    const cellFlags = this.flags;
    const n = native.values;
    const r = reference.values;
    const nw = native.words;
    const rw = reference.words;
    let cell = cellBase + Math.floor(col / colStep);
    let left = colStep - (col % colStep);
    let i = from;
    while (i < to) {
      const end = Math.min(to, i + left);
      let cf = cellFlags[cell] as number;
      let best = (cf & NAN) !== 0 ? Infinity : (score[cell] as number);
      let bestAt = -1;
      for (; i < end; i++) {
        const x = n[i] as number;
        const y = r[i] as number;
        const d = x - y;
        if (d - d === 0) {
          // Math.abs, not a sign test: -0 - 0 is -0, and a cell must hold +0 as the generic path does.
          const s = onBits ? ulp32(nw[i] as number, rw[i] as number) : Math.abs(d);
          if (s > best) {
            best = s;
            bestAt = i;
          }
          continue;
        }
        // A NaN or an infinity on a side (a finite pair never gets here: float32 differences
        // cannot overflow a double).
        if (x !== x || y !== y) {
          if ((cf & NAN) === 0) arg[cell] = first + i;
          cf |= NAN;
          best = Infinity;
          continue;
        }
        cf |= INF;
        const s = x === y ? 0 : Infinity;
        if (s > best) {
          best = s;
          bestAt = i;
        }
      }
      cellFlags[cell] = cf;
      if (bestAt >= 0 && (cf & NAN) === 0) {
        score[cell] = best;
        arg[cell] = first + bestAt;
      }
      cell += 1;
      left = colStep;
    }
  }

  /** values: NaN for a NaN cell or an empty one (nanCells tells them apart); argmax: flat indices. */
  result(): { values: Float64Array; argmax: Float64Array; nanCells: number[]; infCells: number[]; max: number } {
    const values = new Float64Array(this.cells);
    const nanCells: number[] = [];
    const infCells: number[] = [];
    let max = 0;
    for (let cell = 0; cell < this.cells; cell++) {
      const f = this.flags[cell] as number;
      if ((f & NAN) !== 0) nanCells.push(cell);
      if ((f & INF) !== 0) infCells.push(cell);
      const s = this.score[cell] as number;
      if ((f & NAN) !== 0 || s < 0) {
        values[cell] = Number.NaN;
        continue;
      }
      values[cell] = this.value[cell] as number;
      if (s !== Infinity && s > max) max = s;
    }
    return { values, argmax: this.arg, nanCells, infCells, max };
  }
}

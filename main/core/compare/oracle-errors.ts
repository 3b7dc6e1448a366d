// The three-way errors against the fp64 oracle: how far native and reference each stray from it
// (max and RMS over the finite values) and the oracle's RMS for the `oracle_rel` bound; plus why an
// oracle entry cannot stand for a boundary.
import type { DType } from '../bundle/dtype.ts';
import type { BoundaryEntry } from '../bundle/manifest-schema.ts';
import type { OracleError } from './comparison-types.ts';
import { DECODE_BLOCK_UNITS, decodeScratch, decodeUnits } from './decode-units.ts';
import { sameShape, shapeText } from './shapes.ts';

export class OracleAccumulator {
  nativeSum = 0;
  nativeCount = 0;
  nativeMax = 0;
  oracleSqOnNative = 0;
  referenceSum = 0;
  referenceCount = 0;
  referenceMax = 0;
  constructor(
    private readonly nativeDtype: DType,
    private readonly oracleDtype: DType,
  ) {}

  /** Units [from, to) of the three windows (all in the same unit indexing). */
  add(native: Uint8Array, reference: Uint8Array, oracle: Uint8Array, from: number, to: number): void {
    // The thread's decode scratches: add never awaits.
    const [n, r, o] = [decodeScratch(0), decodeScratch(1), decodeScratch(2)];
    for (let at = from; at < to; at += DECODE_BLOCK_UNITS) {
      const count = Math.min(DECODE_BLOCK_UNITS, to - at);
      decodeUnits(this.nativeDtype, native, at, count, n);
      decodeUnits(this.nativeDtype, reference, at, count, r);
      decodeUnits(this.oracleDtype, oracle, at, count, o);
      for (let k = 0; k < count; k++) {
        const ov = o[k] as number;
        if (ov - ov !== 0) continue; // oracle not finite
        const nv = n[k] as number;
        if (nv - nv === 0) {
          const d = Math.abs(nv - ov);
          this.nativeSum += d * d;
          this.nativeCount += 1;
          this.oracleSqOnNative += ov * ov;
          if (d > this.nativeMax) this.nativeMax = d;
        }
        const rv = r[k] as number;
        if (rv - rv === 0) {
          const d = Math.abs(rv - ov);
          this.referenceSum += d * d;
          this.referenceCount += 1;
          if (d > this.referenceMax) this.referenceMax = d;
        }
      }
    }
  }

  errors(): { native: OracleError; reference: OracleError } {
    const rmse = (sum: number, count: number): number => (count === 0 ? 0 : Math.sqrt(sum / count));
    return {
      native: { maxAbs: this.nativeMax, rmse: rmse(this.nativeSum, this.nativeCount) },
      reference: { maxAbs: this.referenceMax, rmse: rmse(this.referenceSum, this.referenceCount) },
    };
  }

  oracleRms(): number {
    return this.nativeCount === 0 ? 0 : Math.sqrt(this.oracleSqOnNative / this.nativeCount);
  }
}

const REAL_FLOATS: ReadonlySet<DType> = new Set(['F32', 'F16', 'BF16', 'F64']);

/** Why an oracle entry cannot serve this boundary, or null when it can. */
export function oracleProblem(entry: BoundaryEntry | undefined, dtype: DType, shape: readonly number[]): string | null {
  if (entry === undefined) return 'the oracle bundle has no such boundary';
  if (!sameShape(entry.shape, shape)) return `the oracle's shape ${shapeText(entry.shape)} differs from ${shapeText(shape)}`;
  if (entry.dtype !== dtype && !(REAL_FLOATS.has(entry.dtype) && REAL_FLOATS.has(dtype))) return `the oracle's dtype ${entry.dtype} cannot stand for ${dtype}`;
  return null;
}

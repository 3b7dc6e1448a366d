// The kernels below the I/O: the SIMD module compiles here, the canonical summation order holds
// bit for bit (raw sum of squared errors, not just the rounded RMSE) whatever the window split and
// whichever path ran, and the exact-tolerance helpers are exact.
import { describe, expect, it } from 'vitest';
import type { DType } from '../../main/core/bundle/dtype.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { kernelModule } from '../../main/core/compare/compare-kernels-wasm.ts';
import {
  compareValues,
  KernelState,
  KernelWorkspace,
  minimalRel,
  nextDown,
  nextUp,
  unitBytes,
  type KernelMode,
} from '../../main/core/compare/compare-kernels.ts';
import { bitExact, faithful, randomFloats } from './compare-fixtures.ts';

interface Snapshot {
  /** The running sum after each window (each block dominates the sum at its own step). */
  trace: number[];
  sumSq: number;
  pairs: number;
  maxAbs: number;
  maxUlp: number;
  maxRel: number;
  requiredRel: number;
  mismatches: number;
  census: unknown;
  first: unknown;
  worst: unknown;
}

/** Runs the kernels over `native`/`reference` split into windows of `windowUnits`. */
function run(mode: KernelMode, dtype: DType, native: Uint8Array, reference: Uint8Array, contract: Contract, windowUnits: number): Snapshot {
  const bytesPerUnit = unitBytes(dtype);
  const units = native.byteLength / bytesPerUnit;
  const ws = KernelWorkspace.create(windowUnits * bytesPerUnit, mode);
  const st = new KernelState(ws, { dtype, shape: [dtype === 'C64' ? units / 2 : units], contract });
  const trace: number[] = [];
  for (let base = 0; base < units; base += windowUnits) {
    const count = Math.min(windowUnits, units - base);
    ws.native.set(native.subarray(base * bytesPerUnit, (base + count) * bytesPerUnit));
    ws.reference.set(reference.subarray(base * bytesPerUnit, (base + count) * bytesPerUnit));
    compareValues(st, ws.native.subarray(0, count * bytesPerUnit), ws.reference.subarray(0, count * bytesPerUnit), 0, count, base);
    trace.push(st.sumSq);
  }
  return {
    trace,
    sumSq: st.sumSq,
    pairs: st.pairs,
    maxAbs: st.maxAbs,
    maxUlp: st.maxUlpSeen,
    maxRel: st.maxRel,
    requiredRel: st.requiredRel,
    mismatches: st.mismatches,
    census: [st.census('native'), st.census('reference')],
    first: st.first,
    worst: st.worst,
  };
}

/**
 * float32 data whose squared errors round differently in any other summation order: magnitudes
 * over several decades inside a block, and block scales growing so that the last full block
 * dominates the running sum (a block's low bits would otherwise vanish in it). Records (a NaN for
 * the worst element, the largest relative noise) sit in the first blocks, so the later blocks are
 * clean and committed by the SIMD path.
 */
function ugly(units: number, unitsPerBlock: number, noise: number, decades = 7): { native: Float32Array; reference: Float32Array } {
  const values = randomFloats(units, 71);
  const jitter = randomFloats(units, 72, 1);
  const lastFull = Math.floor(units / unitsPerBlock) - 1;
  const scaleOf = (block: number): number => (block > lastFull ? 1 : 10 ** (2 * block));
  const reference = Float32Array.from(values, (v, i) => v * 10 ** (((i * 13) % decades) - (decades >> 1)) * scaleOf(Math.floor(i / unitsPerBlock)));
  const native = Float32Array.from(reference, (v, i) => v * (1 + (i < unitsPerBlock ? noise : noise / 2) * (jitter[i] as number)));
  native[100] = Number.NaN;
  return { native, reference };
}

describe('the SIMD module', () => {
  it('compiles on this runtime (the fast path is not silently off)', () => {
    expect(kernelModule()).not.toBeNull();
    expect(KernelWorkspace.create(8192).wasm).not.toBeNull();
  });
});

describe('canonical summation order', () => {
  const units = 2048 * 9 + 77;
  const contracts: Array<[string, Contract]> = [
    ['faithful', faithful({ abs: 1e-30, rel: 2 ** -20 })],
    ['faithful max_ulp', faithful({ max_ulp: 16 })],
  ];
  for (const [label, contract] of contracts) {
    it(`F32 ${label}: the raw sum is bit-identical across paths and window splits`, () => {
      const { native, reference } = ugly(units, 2048, 2 ** -22);
      const n = new Uint8Array(native.buffer);
      const r = new Uint8Array(reference.buffer);
      const { trace: _, ...expected } = run('js', 'F32', n, r, contract, units);
      expect(expected.sumSq).toBeGreaterThan(0);
      for (const mode of ['auto', 'js'] as const) {
        for (const window of [2048, 3 * 2048, 8192, units]) {
          const { trace: __, ...got } = run(mode, 'F32', n, r, contract, window);
          expect(got).toEqual(expected);
        }
      }
      expect(run('auto', 'F32', n, r, contract, 2048).trace).toEqual(run('js', 'F32', n, r, contract, 2048).trace);
    });
  }

  it('BF16 and C64 too', () => {
    const half = ugly(4096 * 5 + 40, 4096, 2 ** -6, 19);
    const toBf16 = (values: Float32Array): Uint8Array => new Uint8Array(Uint16Array.from(new Uint32Array(values.buffer), (w) => w >>> 16).buffer);
    const bfN = toBf16(half.native);
    const bfR = toBf16(half.reference);
    const contract = faithful({ abs: 1e-30, rel: 2 ** -4 });
    const bf = run('js', 'BF16', bfN, bfR, contract, 4096);
    expect(bf.sumSq).toBeGreaterThan(0);
    expect(run('auto', 'BF16', bfN, bfR, contract, 4096)).toEqual(bf);
    const { native, reference } = ugly(2048 * 11, 2048, 2 ** -22);
    const cN = new Uint8Array(native.buffer);
    const cR = new Uint8Array(reference.buffer);
    const complexContract = faithful({ abs: 1e-30, rel: 2 ** -20 });
    const c = run('js', 'C64', cN, cR, complexContract, 2048);
    expect(run('auto', 'C64', cN, cR, complexContract, 2048)).toEqual(c);
  });

  it('bit_exact identical blocks add nothing and count every pair', () => {
    const values = Float32Array.from(randomFloats(2048 * 3), (v) => v);
    const bytes = new Uint8Array(values.buffer);
    for (const mode of ['auto', 'js'] as const) {
      const result = run(mode, 'F32', bytes, bytes, bitExact(), 2048);
      expect(result.trace).toEqual([0, 0, 0]);
      expect(result).toMatchObject({ sumSq: 0, pairs: 2048 * 3, maxAbs: 0, mismatches: 0, worst: null });
    }
  });
});

describe('records in blocks the SIMD path would otherwise commit', () => {
  // r = 0x3fe5f2e3 (1.7918972) against n one ULP above: its smallest passing rel is one double
  // above q = fl(d / r). With the record seeded at q (as if an earlier pair had set it), only the
  // exact test d > fl(q * r) sees the new record; both paths must find it.
  it('a required-rel record one double above fl(d / |r|) is still found', () => {
    const units = 2048 * 2;
    const reference = new Uint32Array(units).fill(0x3fc00000);
    const native = reference.slice();
    reference[2048 + 9] = 0x3fe5f2e3;
    native[2048 + 9] = 0x3fe5f2e4;
    const r = new Float32Array(reference.buffer)[2048 + 9] as number;
    const n = new Float32Array(native.buffer)[2048 + 9] as number;
    const q = Math.abs(n - r) / r;
    const required = minimalRel(Math.abs(n - r), r, 0);
    expect(required).toBeGreaterThan(q);
    const results = (['auto', 'js'] as const).map((mode) => {
      const ws = KernelWorkspace.create(units * 4, mode);
      ws.native.set(new Uint8Array(native.buffer));
      ws.reference.set(new Uint8Array(reference.buffer));
      const st = new KernelState(ws, { dtype: 'F32', shape: [units], contract: faithful({ max_ulp: 1 }) });
      st.requiredRel = q;
      st.worstTier = 2; // as after an earlier mismatch: the worst-element test stays out of the way
      st.refreshThresholds();
      compareValues(st, ws.native, ws.reference, 0, units, 0);
      return { maxRel: st.maxRel, requiredRel: st.requiredRel };
    });
    expect(results[0]).toEqual({ maxRel: required, requiredRel: required });
    expect(results[1]).toEqual(results[0]);
  });

  it('exact ties with the record (quantized data) stay on the SIMD path', () => {
    // bf16 values one ULP apart at powers of two: every block ties the max rel 2^-7 exactly.
    const units = 4096 * 8;
    const reference = new Uint16Array(units).map((_, i) => 0x3f80 + ((i % 4) << 7)); // 1, 2, 4, 8
    const native = reference.map((h) => h + 1);
    const ws = KernelWorkspace.create(units * 2);
    ws.native.set(new Uint8Array(native.buffer));
    ws.reference.set(new Uint8Array(reference.buffer));
    const st = new KernelState(ws, { dtype: 'BF16', shape: [units], contract: faithful({ rel: 2 ** -6 }) });
    compareValues(st, ws.native, ws.reference, 0, units, 0);
    expect(st.maxRel).toBe(2 ** -7);
    // only the first block went to JS: its pairs are counted on the JS side, the rest by the kernel
    expect(st.pairsJs).toBe(4096);
    expect(st.pairs).toBe(units);
  });
});

describe('exact tolerance helpers', () => {
  it('nextUp / nextDown step one double', () => {
    expect(nextUp(1)).toBe(1 + 2 ** -52);
    expect(nextDown(1)).toBe(1 - 2 ** -53);
    expect(nextUp(0)).toBe(Number.MIN_VALUE);
    expect(nextDown(Number.MIN_VALUE)).toBe(0);
  });

  it('minimalRel is the smallest rel passing d <= abs + rel * |r| in double arithmetic', () => {
    const cases: Array<[number, number, number]> = [
      [0.1, 3, 0],
      [1e-7, 0.3, 0],
      [2 ** -30, 1 / 3, 1e-12],
      [1 + 2 ** -52, 1, 1], // absorption: far below (d - abs) / |r| would suggest
      [5, 0, 1],
    ];
    for (const [d, ar, abs] of cases) {
      const rel = minimalRel(d, ar, abs);
      if (ar === 0) {
        expect(rel).toBe(d <= abs ? 0 : Infinity);
        continue;
      }
      expect(d <= abs + rel * ar).toBe(true);
      if (rel > 0) expect(d <= abs + nextDown(rel) * ar).toBe(false);
    }
  });
});

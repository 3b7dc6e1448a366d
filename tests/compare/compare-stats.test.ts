// Statistics: first mismatch and worst element, the exact `required` tolerances, the oracle's
// three-way errors and the oracle_rel bound, and the promise that results depend neither on the
// chunk size (streaming), nor on how the producer chunks its reads, nor on which kernel path ran.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import type { DType } from '../../main/core/bundle/dtype.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { compareBoundary, type CompareOptions } from '../../main/core/compare/compare-boundary.ts';
import type { BoundaryComparison } from '../../main/core/compare/comparison-types.ts';
import { bitExact, bits16, c64, cleanupBundles, f32, faithful, makeBundle, pair, randomFloats, stepF32, tensor } from './compare-fixtures.ts';

afterAll(cleanupBundles);

function nextDown(x: number): number {
  const view = new Float64Array([x]);
  const bits = new BigInt64Array(view.buffer);
  bits[0] = (bits[0] as bigint) - 1n;
  return view[0] as number;
}

async function compareF32(
  native: readonly number[],
  reference: readonly number[],
  contract: Contract,
  options: CompareOptions = {},
  shape?: readonly number[],
): Promise<BoundaryComparison> {
  const dims = shape ?? [native.length];
  const sides = await pair([tensor('t.x', 'F32', dims, f32(native))], [tensor('t.x', 'F32', dims, f32(reference), { contract })]);
  return compareBoundary(sides, 0, 't.x', options);
}

describe.each(['auto', 'js'] as const)('witnesses (%s kernels)', (mode) => {
  it('the first mismatch is the first in logical order, with its multi-dimensional index', async () => {
    const reference = randomFloats(60, 11);
    const native = [...reference];
    native[50] = (native[50] as number) + 1;
    native[33] = (native[33] as number) + 0.5;
    const result = await compareF32(native, reference, faithful({ abs: 1e-3 }), { kernels: mode }, [3, 4, 5]);
    expect(result.mismatches).toBe(2);
    expect(result.firstMismatch).toMatchObject({ flatIndex: 33, index: [1, 2, 3], class: 'value', mismatch: true });
    expect(result.firstMismatch?.reference).toBe(Math.fround(reference[33] as number));
    expect(result.worst).toMatchObject({ flatIndex: 50, index: [2, 2, 0] });
  });

  it('the worst element is the largest abs error, and a class mismatch outranks any finite error', async () => {
    const reference = [1, 2, 3, 4, 5, 6, 7, 8];
    const finite = [1, 2.5, 3, 6, 5, 6, 7, 8];
    const byValue = await compareF32(finite, reference, faithful({ abs: 0.1 }), { kernels: mode });
    expect(byValue.worst).toMatchObject({ flatIndex: 3, absError: 2, class: 'value' });
    expect(byValue.maxAbs).toBe(2);
    const withNaN = await compareF32([1, 2.5, 3, 1e30, 5, Number.NaN, 7, 8], reference, faithful({ abs: 0.1 }), { kernels: mode });
    expect(withNaN.worst).toMatchObject({ flatIndex: 5, class: 'nan_vs_number', absError: Infinity });
    expect(withNaN.firstMismatch?.flatIndex).toBe(1);
  });

  it('on a passing boundary the worst element is still shown, marked as not a mismatch', async () => {
    const reference = randomFloats(40, 12);
    const native = reference.map((v, i) => (i === 17 ? stepF32(v, 2) : i === 30 ? stepF32(v, 1) : v));
    const result = await compareF32(native, reference, faithful({ max_ulp: 2 }), { kernels: mode });
    expect(result.passed).toBe(true);
    expect(result.worst).toMatchObject({ flatIndex: 17, mismatch: false, ulp: 2 });
    expect(result.firstMismatch).toBeNull();
  });

  it('identical tensors have no worst element and zero statistics', async () => {
    const values = randomFloats(64, 13);
    const result = await compareF32(values, values, bitExact(), { kernels: mode });
    expect(result).toMatchObject({ passed: true, worst: null, maxAbs: 0, maxRel: 0, maxUlp: 0, rmse: 0, required: { abs: 0, rel: 0, ulp: 0 } });
  });
});

describe.each(['auto', 'js'] as const)('required tolerances (%s kernels)', (mode) => {
  // Several blocks, so most of it runs through the SIMD path in 'auto'.
  const reference = randomFloats(9000, 21).map((v, i) => (i % 97 === 0 ? v * 1e-3 : v));
  const native = reference.map((v, i) => {
    const f = Math.fround(v);
    if (i % 7 === 0) return stepF32(f, (i % 5) - 2);
    if (i === 4321) return f * (1 + 3e-4);
    return f + (i % 13 === 0 ? 1e-5 : 0);
  });

  it('passes exactly at the required abs, rel and ulp (each alone) and fails just below', async () => {
    const measured = await compareF32(native, reference, faithful(), { kernels: mode });
    const { abs, rel, ulp } = measured.required;
    expect(abs).toBe(measured.maxAbs);
    expect(abs).toBeGreaterThan(0);
    expect(rel).toBeGreaterThan(0);
    expect(ulp).toBe(measured.maxUlp);

    const verdict = async (contract: Contract): Promise<boolean> => (await compareF32(native, reference, contract, { kernels: mode })).passed;
    expect(await verdict(faithful({ abs }))).toBe(true);
    expect(await verdict(faithful({ abs: nextDown(abs) }))).toBe(false);
    expect(await verdict(faithful({ rel }))).toBe(true);
    expect(await verdict(faithful({ rel: nextDown(rel) }))).toBe(false);
    expect(await verdict(faithful({ max_ulp: ulp }))).toBe(true);
    expect(await verdict(faithful({ max_ulp: ulp - 1 }))).toBe(false);
  });

  it('required rel is infinite when a reference zero meets a nonzero native', async () => {
    const result = await compareF32([1e-8, 1, 2, 3], [0, 1, 2, 3], faithful({ abs: 1e-6 }), { kernels: mode });
    expect(result.passed).toBe(true);
    expect(result.required.rel).toBe(Infinity);
    expect(result.maxRel).toBe(Infinity);
  });
});

describe('the fp64 oracle', () => {
  const oracleValues = randomFloats(64, 31);
  const referenceValues = oracleValues.map((v, i) => v + (i % 3 === 0 ? 1e-6 : 0));
  const nativeValues = oracleValues.map((v, i) => v + (i % 4 === 0 ? 2e-5 : -1e-6));

  /** RMSE and max abs over pairs finite on both, in float32 values as stored. */
  function expectedError(side: readonly number[]): { rmse: number; maxAbs: number } {
    let sum = 0;
    let max = 0;
    side.forEach((v, i) => {
      const d = Math.abs(Math.fround(v) - Math.fround(oracleValues[i] as number));
      sum += d * d;
      max = Math.max(max, d);
    });
    return { rmse: Math.sqrt(sum / side.length), maxAbs: max };
  }

  async function bundles(oracleRel: number | null): Promise<{ native: TraceBundle; reference: TraceBundle; oracle: TraceBundle }> {
    const contract = faithful({ abs: 1e-3, oracle_rel: oracleRel });
    return {
      native: await makeBundle('native', [[tensor('t.y', 'F32', [8, 8], f32(nativeValues))]]),
      reference: await makeBundle('reference', [[tensor('t.y', 'F32', [8, 8], f32(referenceValues), { contract })]]),
      oracle: await makeBundle('oracle-f64', [[tensor('t.y', 'F32', [8, 8], f32(oracleValues), { contract })]]),
    };
  }

  it('reports the three-way errors of native and of the reference against the oracle', async () => {
    const sides = await bundles(null);
    const result = await compareBoundary(sides, 0, 't.y');
    const native = expectedError(nativeValues);
    const reference = expectedError(referenceValues);
    expect(result.oracle?.native.maxAbs).toBe(native.maxAbs);
    expect(result.oracle?.native.rmse).toBeCloseTo(native.rmse, 15);
    expect(result.oracle?.reference.maxAbs).toBe(reference.maxAbs);
    expect(result.oracle?.reference.rmse).toBeCloseTo(reference.rmse, 15);
    expect(result.oracleRel).toBeNull();
    expect(result.passed).toBe(true);
  });

  it('oracle_rel: RMS(native - oracle) <= oracle_rel x RMS(oracle) passes, above it fails', async () => {
    const rms = Math.sqrt(oracleValues.reduce((sum, v) => sum + Math.fround(v) ** 2, 0) / oracleValues.length);
    const ratio = expectedError(nativeValues).rmse / rms;
    const loose = await compareBoundary(await bundles(ratio * 1.01), 0, 't.y');
    expect(loose.oracleRel?.passed).toBe(true);
    expect(loose.oracleRel?.oracleRms).toBeCloseTo(rms, 12);
    expect(loose.outcome).toBe('pass');
    const tight = await compareBoundary(await bundles(ratio * 0.99), 0, 't.y');
    expect(tight.oracleRel).toMatchObject({ passed: false, bound: ratio * 0.99 });
    expect(tight.mismatches).toBe(0);
    expect(tight.passed).toBe(false);
    expect(tight.outcome).toBe('fail');
  });

  it('oracle_rel without an oracle (or one lacking the boundary) is a gap', async () => {
    const { native, reference, oracle } = await bundles(1e-3);
    const none = await compareBoundary({ native, reference }, 0, 't.y');
    expect(none.outcome).toBe('gap');
    expect(none.gap).toContain('no oracle bundle was given');
    expect(none.passed).toBe(false);
    const lacking = await makeBundle('oracle-f64', [[tensor('t.other', 'F32', [1], f32([0]), { contract: faithful() })]]);
    const missing = await compareBoundary({ native, reference, oracle: lacking }, 0, 't.y');
    expect(missing.outcome).toBe('gap');
    expect(missing.gap).toContain('no such boundary');
    expect((await compareBoundary({ native, reference, oracle }, 0, 't.y')).gap).toBeNull();
  });

  it('native against the oracle under the oracle contracts: pass the oracle as the reference', async () => {
    const { native, oracle } = await bundles(null);
    const result = await compareBoundary({ native, reference: oracle }, 0, 't.y');
    expect(result.maxAbs).toBe(expectedError(nativeValues).maxAbs);
    expect(result.passed).toBe(true);
  });
});

/** A TraceBundle whose chunks come in odd sizes (another producer's chunking). */
function oddlyChunked(bundle: TraceBundle, sizes: readonly number[]): TraceBundle {
  return {
    get manifest() {
      return bundle.manifest;
    },
    get dir() {
      return bundle.dir;
    },
    get manifestPath() {
      return bundle.manifestPath;
    },
    get passes() {
      return bundle.passes;
    },
    boundary: (pass, name) => bundle.boundary(pass, name),
    readBoundary: (pass, name) => bundle.readBoundary(pass, name),
    readBoundaryRange: (pass, name, begin, end) => bundle.readBoundaryRange(pass, name, begin, end),
    async *readBoundaryChunks(pass, name) {
      const whole = (await bundle.readBoundary(pass, name)).data;
      let at = 0;
      for (let k = 0; at < whole.byteLength; k++) {
        const size = sizes[k % sizes.length] as number;
        yield whole.slice(at, at + size);
        at += size;
      }
    },
    input: (name) => bundle.input(name),
    readInput: (name) => bundle.readInput(name),
    close: () => bundle.close(),
  };
}

describe('streaming', () => {
  const rows = 300;
  const columns = 1000;
  const reference = randomFloats(rows * columns, 41);
  const native = reference.map((v, i) => {
    if (i === 123_457) return Number.NaN;
    if (i === 200_001) return -0;
    if (i % 1013 === 0) return Math.fround(v) + 1e-3;
    return i % 3 === 0 ? v * (1 + 1e-6 * Math.sin(i)) : v;
  });
  reference[200_001] = 0;
  reference[77_777] = 1e-40;
  native[77_777] = 1e-40;

  async function sides(valid: boolean) {
    const contract = faithful({ abs: 1e-4, signed_zero: 'must_match' });
    const extra = valid ? { valid: { axis: 1, length: 777, padding: 'zero' as const } } : {};
    return pair([tensor('t.big', 'F32', [rows, columns], f32(native))], [tensor('t.big', 'F32', [rows, columns], f32(reference), { contract, ...extra })]);
  }

  it('a tensor of many chunks, chunk boundaries not aligned to rows, gives the one-chunk result exactly', async () => {
    const both = await sides(false);
    const whole = await compareBoundary(both, 0, 't.big', { chunkBytes: 8 * 1024 * 1024 });
    expect(whole.mismatches).toBeGreaterThan(100);
    expect(whole.classes).toMatchObject({ nan_vs_number: 1, signed_zero: 1 });
    expect(whole.census.native.subnormal).toBe(1);
    for (const chunkBytes of [8192, 3 * 8192, 40_000, 123_456]) {
      expect(await compareBoundary(both, 0, 't.big', { chunkBytes })).toEqual(whole);
    }
    expect(await compareBoundary(both, 0, 't.big', { chunkBytes: 8192, kernels: 'js' })).toEqual(whole);
  });

  it('with a valid region along the rows, every chunking agrees', async () => {
    const both = await sides(true);
    const whole = await compareBoundary(both, 0, 't.big');
    expect(whole.padded).toBe(rows * (columns - 777));
    expect(whole.classes.padding).toBeGreaterThan(0);
    expect(await compareBoundary(both, 0, 't.big', { chunkBytes: 5 * 8192 })).toEqual(whole);
    expect(await compareBoundary(both, 0, 't.big', { chunkBytes: 8192, kernels: 'js' })).toEqual(whole);
  });

  it("a producer's odd chunk sizes change nothing", async () => {
    const both = await sides(false);
    const whole = await compareBoundary(both, 0, 't.big');
    const odd = { native: oddlyChunked(both.native, [1000, 7777, 3]), reference: oddlyChunked(both.reference, [65536, 12345]) };
    expect(await compareBoundary(odd, 0, 't.big', { chunkBytes: 16384 })).toEqual(whole);
  });
});

describe('the SIMD path and the JS path agree exactly', () => {
  // Blocks are 8 KiB: 2048 float32 units, 4096 bf16. Most blocks below are clean for the SIMD path
  // (so it commits them), a few hold specials or mismatches (so JS classifies them), and the
  // noise is relative, so squared errors round and their summation order matters.
  const specials = [Number.NaN, Infinity, -Infinity, 0, -0, 1e-40, -3e-42];

  // Magnitudes over 20 decades, so squared errors span a range no sum holds exactly.
  function dataset(
    kind: 'identical' | 'noisy',
    units: number,
    unitsPerBlock: number,
    seed: number,
    noiseScale: number,
  ): { native: number[]; reference: number[] } {
    const reference = randomFloats(units, seed).map((v, i) => v * 10 ** (((i * 7) % 21) - 10));
    const noise = randomFloats(units, seed + 1, 1);
    const native = reference.map((v, i) => (kind === 'identical' ? v : v * (1 + noiseScale * (noise[i] as number))));
    const block = (i: number): number => Math.floor(i / unitsPerBlock);
    for (let i = 0; i < units; i++) {
      if (block(i) === 1 && i % 37 === 0) {
        // same special on both sides: census work in a block that stays clean unless non-finite
        const value = specials[3 + ((i / 37) % 4)] as number;
        reference[i] = value;
        native[i] = value;
      }
      if (block(i) === 3 && i % 401 === 0) native[i] = specials[(i / 401) % specials.length] as number;
      if (block(i) === 4 && i % 97 === 0) native[i] = (reference[i] as number) * 1.5;
    }
    return { native, reference };
  }

  function encode(dtype: DType, values: number[]): Uint8Array {
    if (dtype === 'BF16') return bits16(values.map((v) => (new Uint32Array(Float32Array.from([v]).buffer)[0] as number) >>> 16));
    if (dtype === 'C64') return c64(values.flatMap((v, i) => (i % 2 === 0 ? [[v, values[i + 1] ?? 0] as [number, number]] : [])));
    return f32(values);
  }

  // Tolerances in units of the format's epsilon; the noise is about 2.5 of them.
  const contracts = (eps: number): Array<[string, Contract]> => [
    ['bit_exact', bitExact()],
    ['bit_exact, zero signs ignored, payloads matter', bitExact({ signed_zero: 'ignore', nan_policy: 'positions_and_payload' })],
    ['faithful abs/rel', faithful({ abs: 1e-30, rel: 8 * eps })],
    ['faithful max_ulp, signed zeros must match', faithful({ max_ulp: 8, signed_zero: 'must_match' })],
    ['faithful tight', faithful({ abs: 1e-30, rel: eps / 4 })],
  ];
  for (const dtype of ['F32', 'BF16', 'C64'] as DType[]) {
    const perBlock = dtype === 'BF16' ? 4096 : 2048;
    const units = perBlock * 6 + 98;
    const eps = dtype === 'BF16' ? 2 ** -8 : 2 ** -24;
    for (const kind of ['identical', 'noisy'] as const) {
      for (const [label, contract] of contracts(eps)) {
        it(`${dtype}, ${kind} blocks, ${label}`, async () => {
          const data = dataset(kind, units, perBlock, dtype.length * 7 + label.length, 2.5 * eps);
          const shape = [dtype === 'C64' ? units / 2 : units];
          const sides = await pair(
            [tensor('t.z', dtype, shape, encode(dtype, data.native))],
            [tensor('t.z', dtype, shape, encode(dtype, data.reference), { contract })],
          );
          const simd = await compareBoundary(sides, 0, 't.z', { chunkBytes: 16384 });
          const js = await compareBoundary(sides, 0, 't.z', { kernels: 'js' });
          expect(simd).toEqual(js);
          expect(simd.mismatches).toBeGreaterThan(0);
          expect(simd.census.native.negZero + simd.census.native.subnormal).toBeGreaterThan(0);
        });
      }
    }
  }

  it('a passing element in a late block with a larger abs error but a smaller rel error becomes the worst', async () => {
    const reference = randomFloats(2048 * 4, 61, 0.01).map((v) => Math.fround(v));
    const native = reference.map((v, i) => (i % 3 === 0 ? stepF32(v, 1) : v));
    reference[2048 * 3 + 5] = 1e6;
    native[2048 * 3 + 5] = stepF32(1e6, 1);
    const sides = await pair(
      [tensor('t.w', 'F32', [reference.length], f32(native))],
      [tensor('t.w', 'F32', [reference.length], f32(reference), { contract: faithful({ max_ulp: 1 }) })],
    );
    const simd = await compareBoundary(sides, 0, 't.w');
    expect(simd.passed).toBe(true);
    expect(simd.worst?.flatIndex).toBe(2048 * 3 + 5);
    expect(simd).toEqual(await compareBoundary(sides, 0, 't.w', { kernels: 'js' }));
  });

  it('F16 under bit_exact (SIMD census) and faithful (JS only)', async () => {
    const patterns = Array.from({ length: 4096 * 3 }, (_, i) => (i * 2654435761) & 0xffff);
    const moved = patterns.map((p, i) => (i > 8192 && i % 101 === 0 ? p ^ 1 : p));
    for (const contract of [bitExact(), faithful({ max_ulp: 1 })]) {
      const sides = await pair(
        [tensor('t.h', 'F16', [patterns.length], bits16(moved))],
        [tensor('t.h', 'F16', [patterns.length], bits16(patterns), { contract })],
      );
      expect(await compareBoundary(sides, 0, 't.h')).toEqual(await compareBoundary(sides, 0, 't.h', { kernels: 'js' }));
    }
  });
});

describe('unreadable evidence', () => {
  it('a tensor whose bytes changed after the bundle was opened throws E_DIGEST instead of returning a result', async () => {
    const values = randomFloats(64, 51);
    const sides = await pair([tensor('t.x', 'F32', [64], f32(values))], [tensor('t.x', 'F32', [64], f32(values))]);
    const file = join(sides.native.dir, 'pass-000.safetensors');
    const reopened = await openBundle(sides.native.dir, { verify: 'none' });
    const bytes = readFileSync(file);
    bytes[bytes.byteLength - 1] = (bytes[bytes.byteLength - 1] as number) ^ 0x01;
    writeFileSync(file, bytes);
    let caught: unknown;
    try {
      await compareBoundary({ native: reopened, reference: sides.reference }, 0, 't.x');
    } catch (error) {
      caught = error;
    }
    await reopened.close();
    expect(caught).toBeInstanceOf(BundleError);
    expect((caught as BundleError).code).toBe('E_DIGEST');
  });
});

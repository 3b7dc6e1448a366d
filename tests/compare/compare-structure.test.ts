// Structure before values: missing / dtype / shape, gaps (no reference entry, no contract), a
// transposed or permuted buffer reported as a layout error, the valid region and its padding
// rule, and the tie analysis of sampler orders.
import { afterAll, describe, expect, it } from 'vitest';
import type { DType } from '../../main/core/bundle/dtype.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import type { KernelMode } from '../../main/core/compare/compare-kernels.ts';
import { bitExact, cleanupBundles, f32, f64, faithful, i32, makeBundle, pair, randomFloats, tensor } from './compare-fixtures.ts';

afterAll(cleanupBundles);

/** Row-major data of the reference permuted by `permutation`, read back under the original shape. */
function permuted(values: readonly number[], shape: readonly number[], permutation: readonly number[]): number[] {
  const strides: number[] = [];
  let step = 1;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    strides[axis] = step;
    step *= shape[axis] as number;
  }
  const outShape = permutation.map((axis) => shape[axis] as number);
  const out: number[] = [];
  const index = outShape.map(() => 0);
  for (let j = 0; j < values.length; j++) {
    let src = 0;
    index.forEach((position, k) => (src += position * (strides[permutation[k] as number] as number)));
    out.push(values[src] as number);
    for (let axis = outShape.length - 1; axis >= 0; axis--) {
      index[axis] = (index[axis] as number) + 1;
      if ((index[axis] as number) < (outShape[axis] as number)) break;
      index[axis] = 0;
    }
  }
  return out;
}

describe('structural problems', () => {
  it('a boundary the native run lacks is structural missing, with zero statistics', async () => {
    const native = await makeBundle('native', [[tensor('t.other', 'F32', [2], f32([1, 2]))]]);
    const reference = await makeBundle('reference', [[tensor('t.x', 'F32', [2], f32([1, 2])), tensor('t.other', 'F32', [2], f32([1, 2]))]]);
    const result = await compareBoundary({ native, reference }, 0, 't.x');
    expect(result.structural).toEqual({ problem: 'missing', detail: expect.stringContaining('no boundary "t.x"') });
    expect(result.passed).toBe(false);
    expect(result.outcome).toBe('fail');
    expect(result.gap).toBeNull();
    expect(result.mismatches).toBe(0);
    expect(result.elements).toBe(2);
  });

  it('dtype is checked before shape, shape before values', async () => {
    const dtype = await pair([tensor('t.x', 'F64', [2], f64([1, 2]))], [tensor('t.x', 'F32', [2], f32([1, 2]))]);
    expect((await compareBoundary(dtype, 0, 't.x')).structural).toEqual({ problem: 'dtype', detail: 'native F64 vs reference F32' });
    const shape = await pair([tensor('t.x', 'F32', [2, 3], f32([1, 2, 3, 4, 5, 6]))], [tensor('t.x', 'F32', [3, 2], f32([1, 2, 3, 4, 5, 6]))]);
    const result = await compareBoundary(shape, 0, 't.x');
    expect(result.structural).toEqual({ problem: 'shape', detail: 'native [2, 3] vs reference [3, 2]' });
    expect(result.census.native.finite).toBe(0);
  });

  it('a boundary the reference lacks is a gap, not a failure', async () => {
    const sides = await pair([tensor('t.extra', 'F32', [1], f32([1]))], [tensor('t.x', 'F32', [1], f32([1]))]);
    const result = await compareBoundary(sides, 0, 't.extra');
    expect(result.gap).toContain('has no boundary "t.extra"');
    expect(result.outcome).toBe('gap');
    expect(result.passed).toBe(false);
  });

  it('a reference entry without contract (a native bundle as reference) is a gap unless a contract is given', async () => {
    const left = await makeBundle('native', [[tensor('t.x', 'F32', [2], f32([1, 2]))]]);
    const right = await makeBundle('native', [[tensor('t.x', 'F32', [2], f32([1, 2.5]))]]);
    const without = await compareBoundary({ native: left, reference: right }, 0, 't.x');
    expect(without.outcome).toBe('gap');
    expect(without.gap).toContain('declares no contract (a native bundle): supply one (--contracts FILE');
    const withContract = await compareBoundary({ native: left, reference: right }, 0, 't.x', { contract: faithful({ abs: 0.5 }) });
    expect(withContract.outcome).toBe('pass');
    expect(withContract.contract.kind).toBe('faithful');
  });

  it('an override contract is validated', async () => {
    const sides = await pair([tensor('t.x', 'F32', [1], f32([1]))], [tensor('t.x', 'F32', [1], f32([1]))]);
    const invalid = { kind: 'faithful', abs: -1 } as unknown as Contract;
    await expect(compareBoundary(sides, 0, 't.x', { contract: invalid })).rejects.toThrow();
  });
});

describe.each(['auto', 'js'] as const)('layout (%s kernels)', (mode: KernelMode) => {
  it('a transposed 2-D buffer is structural layout [1, 0], not noise', async () => {
    const shape = [3, 5];
    const values = randomFloats(15, 3);
    const sides = await pair(
      [tensor('t.w', 'F32', shape, f32(permuted(values, shape, [1, 0])))],
      [tensor('t.w', 'F32', shape, f32(values), { contract: faithful({ abs: 1e-6 }) })],
    );
    const result = await compareBoundary(sides, 0, 't.w', { kernels: mode });
    expect(result.structural?.problem).toBe('layout');
    expect(result.structural?.detail).toContain('[1, 0]');
    expect(result.structural?.detail).toContain('[5, 3]');
    expect(result.passed).toBe(false);
    expect(result.mismatches).toBe(0);
    expect(result.firstMismatch).toBeNull();
    expect(result.census.native.finite).toBe(15);
  });

  it('a square transposed buffer too', async () => {
    const shape = [4, 4];
    const values = randomFloats(16, 4);
    const sides = await pair([tensor('t.w', 'F32', shape, f32(permuted(values, shape, [1, 0])))], [tensor('t.w', 'F32', shape, f32(values))]);
    expect((await compareBoundary(sides, 0, 't.w', { kernels: mode })).structural?.problem).toBe('layout');
  });

  it('a 3-D buffer with permuted axes names the permutation', async () => {
    const shape = [2, 3, 4];
    const values = randomFloats(24, 5);
    const sides = await pair([tensor('t.k', 'F32', shape, f32(permuted(values, shape, [2, 0, 1])))], [tensor('t.k', 'F32', shape, f32(values))]);
    const result = await compareBoundary(sides, 0, 't.k', { kernels: mode });
    expect(result.structural?.problem).toBe('layout');
    expect(result.structural?.detail).toContain('[2, 0, 1]');
  });

  it('rank 5: only the last-two-axes swap is tried', async () => {
    const shape = [2, 1, 2, 3, 2];
    const values = randomFloats(24, 6);
    const swapped = await pair([tensor('t.r', 'F32', shape, f32(permuted(values, shape, [0, 1, 2, 4, 3])))], [tensor('t.r', 'F32', shape, f32(values))]);
    expect((await compareBoundary(swapped, 0, 't.r', { kernels: mode })).structural?.detail).toContain('[0, 1, 2, 4, 3]');
    const other = await pair([tensor('t.r', 'F32', shape, f32(permuted(values, shape, [2, 1, 0, 3, 4])))], [tensor('t.r', 'F32', shape, f32(values))]);
    const result = await compareBoundary(other, 0, 't.r', { kernels: mode });
    expect(result.structural).toBeNull();
    expect(result.mismatches).toBeGreaterThan(0);
  });

  it('unrelated values stay value mismatches; a large tensor skips the check and says so', async () => {
    const shape = [4, 4];
    const sides = await pair([tensor('t.w', 'F32', shape, f32(randomFloats(16, 7)))], [tensor('t.w', 'F32', shape, f32(randomFloats(16, 8)))]);
    const result = await compareBoundary(sides, 0, 't.w', { kernels: mode });
    expect(result.structural).toBeNull();
    expect(result.classes.value).toBe(16);
    const skipped = await compareBoundary(sides, 0, 't.w', { kernels: mode, secondLookLimitBytes: 32 });
    expect(skipped.notes.join(' ')).toContain('layout check skipped');
  });
});

describe.each(['auto', 'js'] as const)('valid region (%s kernels)', (mode: KernelMode) => {
  const shape = [4, 3];
  const reference = [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0];

  it("padding 'zero': native must hold zeros past the valid rows; padding stays out of the value statistics", async () => {
    const native = [1, 2, 3, 4, 5, 6.5, 0, 7, 0, -0, 0, 0];
    const sides = await pair(
      [tensor('t.v', 'F32', shape, f32(native))],
      [tensor('t.v', 'F32', shape, f32(reference), { contract: faithful({ abs: 1 }), valid: { axis: 0, length: 2, padding: 'zero' } })],
    );
    const result = await compareBoundary(sides, 0, 't.v', { kernels: mode });
    expect(result.classes.padding).toBe(1);
    expect(result.mismatches).toBe(1);
    expect(result.firstMismatch).toMatchObject({ flatIndex: 7, index: [2, 1], class: 'padding', native: 7 });
    expect(result.maxAbs).toBe(0.5);
    expect(result.compared).toBe(6);
    expect(result.padded).toBe(6);
    expect(result.census.native.finite).toBe(6);
  });

  it("padding 'zero' with signed zeros that must match: -0 is not +0", async () => {
    const native = [1, 2, 3, 4, 5, 6, 0, 0, 0, -0, 0, 0];
    const sides = await pair(
      [tensor('t.v', 'F32', shape, f32(native))],
      [tensor('t.v', 'F32', shape, f32(reference), { contract: bitExact({ signed_zero: 'must_match' }), valid: { axis: 0, length: 2, padding: 'zero' } })],
    );
    const result = await compareBoundary(sides, 0, 't.v', { kernels: mode });
    expect(result.classes.padding).toBe(1);
    expect(result.firstMismatch?.index).toEqual([3, 0]);
  });

  it("padding 'any' is never compared, not even a NaN", async () => {
    const native = [1, 2, 3, 4, 5, 6, Number.NaN, 7, 1e30, -0, 0, Infinity];
    const sides = await pair(
      [tensor('t.v', 'F32', shape, f32(native))],
      [tensor('t.v', 'F32', shape, f32(reference), { contract: bitExact(), valid: { axis: 0, length: 2, padding: 'any' } })],
    );
    const result = await compareBoundary(sides, 0, 't.v', { kernels: mode });
    expect(result.passed).toBe(true);
    expect(result.census.native.nan).toBe(0);
    expect(result.padded).toBe(6);
  });

  it('a valid region along an inner axis splits every row', async () => {
    const native = [1, 2, 9, 4, 5, 0, 7, 8, 0, 1, 1, 0];
    const reference2 = [1, 2, 0, 4, 5, 0, 7, 8, 0, 1, 1, 0];
    const sides = await pair(
      [tensor('t.v', 'F32', shape, f32(native))],
      [tensor('t.v', 'F32', shape, f32(reference2), { contract: bitExact(), valid: { axis: 1, length: 2, padding: 'zero' } })],
    );
    const result = await compareBoundary(sides, 0, 't.v', { kernels: mode });
    expect(result.classes.padding).toBe(1);
    expect(result.firstMismatch?.index).toEqual([0, 2]);
    expect(result.compared).toBe(8);
    expect(result.padded).toBe(4);
  });
});

describe('tie analysis', () => {
  // scaled: indices 1 and 2 tie at 3 (the threshold); index 0 leads.
  const scaled = f64([5, 3, 3, 1]);
  async function sampler(nativeOrder: number[]) {
    const reference = await makeBundle('reference', [
      [
        tensor('sampler.text.scaled', 'F64', [4], scaled, { contract: faithful({ abs: 1e-9 }) }),
        tensor('sampler.text.order', 'I32', [4], i32([0, 1, 2, 3]), { contract: bitExact() }),
        tensor('sampler.text.threshold', 'F64', [1], f64([3]), { contract: faithful({ abs: 1e-9 }) }),
      ],
    ]);
    const native = await makeBundle('native', [
      [
        tensor('sampler.text.scaled', 'F64', [4], scaled),
        tensor('sampler.text.order', 'I32', [4], i32(nativeOrder)),
        tensor('sampler.text.threshold', 'F64', [1], f64([3])),
      ],
    ]);
    return { native, reference };
  }

  it('an order differing only inside a group of equal scaled values is tie_order (still a failure)', async () => {
    const sides = await sampler([0, 2, 1, 3]);
    const result = await compareBoundary(sides, 0, 'sampler.text.order');
    expect(result.classes.tie_order).toBe(2);
    expect(result.classes.value).toBe(0);
    expect(result.firstMismatch?.class).toBe('tie_order');
    expect(result.passed).toBe(false);
    expect(result.ties).toEqual({ threshold: 3, group: [1, 2], orderAgrees: false });
  });

  it('an order differing across different scaled values stays value', async () => {
    const sides = await sampler([1, 0, 2, 3]);
    const result = await compareBoundary(sides, 0, 'sampler.text.order');
    expect(result.classes.value).toBe(2);
    expect(result.classes.tie_order).toBe(0);
    expect(result.ties).toEqual({ threshold: 3, group: [1, 2], orderAgrees: true });
  });

  it('the threshold boundary reports the tie group and whether native ordered it alike', async () => {
    const agreeing = await compareBoundary(await sampler([0, 1, 2, 3]), 0, 'sampler.text.threshold');
    expect(agreeing.passed).toBe(true);
    expect(agreeing.ties).toEqual({ threshold: 3, group: [1, 2], orderAgrees: true });
    const swapped = await compareBoundary(await sampler([0, 2, 1, 3]), 0, 'sampler.text.threshold');
    expect(swapped.passed).toBe(true);
    expect(swapped.ties?.orderAgrees).toBe(false);
  });

  it('other boundaries get no tie analysis', async () => {
    const sides = await sampler([0, 1, 2, 3]);
    expect((await compareBoundary(sides, 0, 'sampler.text.scaled')).ties).toBeNull();
  });
});

describe('edge shapes', () => {
  it('an empty tensor passes with nothing compared', async () => {
    const sides = await pair([tensor('t.e', 'F32', [0, 3], f32([]))], [tensor('t.e', 'F32', [0, 3], f32([]))]);
    const result = await compareBoundary(sides, 0, 't.e');
    expect(result).toMatchObject({ outcome: 'pass', elements: 0, compared: 0, mismatches: 0, mismatchShare: 0 });
  });

  it('a rank-0 scalar has the empty index', async () => {
    const sides = await pair([tensor('t.s', 'F64', [], f64([1.5]))], [tensor('t.s', 'F64', [], f64([2]), { contract: faithful({ abs: 0.1 }) })]);
    const result = await compareBoundary(sides, 0, 't.s');
    expect(result.firstMismatch).toMatchObject({ flatIndex: 0, index: [], native: 1.5, reference: 2, absError: 0.5 });
  });
});

describe('dtype coverage of structure checks', () => {
  it.each(['F32', 'I32'] as DType[])('%s: equal tensors pass with no notes', async (dtype) => {
    const data = dtype === 'F32' ? f32([1, 2, 3, 4]) : i32([1, 2, 3, 4]);
    const sides = await pair([tensor('t.x', dtype, [2, 2], data)], [tensor('t.x', dtype, [2, 2], data)]);
    const result = await compareBoundary(sides, 0, 't.x');
    expect(result.passed).toBe(true);
    expect(result.notes).toEqual([]);
  });
});

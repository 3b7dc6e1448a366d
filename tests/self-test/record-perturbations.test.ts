// Host-side record perturbations: a copy of a captured native bundle with exactly one record
// changed, in a precise way, and the digests rewritten so the copy still opens as valid evidence.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { captureRun } from '../../main/core/capture/capture-run.ts';
import { applyRecordPerturbation, copyBundle, RecordPerturbationError, type RecordPerturbation } from '../../main/core/gate/record-perturbations.ts';
import { REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const root = freshTempDir('record-perturbations');
const cleanDir = join(root, 'clean');
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(async () => {
  const result = await captureRun({
    library: REFERENCE_ENGINE,
    referenceDir: referenceBundle('greedy'),
    outDir: cleanDir,
    command: 'test record perturbations',
  });
  await result.reference.close();
  expect(result.run.status).toBe('completed');
});

/** Every record of both bundles: which (pass, boundary) differ in bytes. */
async function changedRecords(a: TraceBundle, b: TraceBundle): Promise<string[]> {
  const changed: string[] = [];
  for (const pass of a.passes) {
    for (const entry of pass.boundaries) {
      const [x, y] = await Promise.all([a.readBoundary(pass.index, entry.name), b.readBoundary(pass.index, entry.name)]);
      if (Buffer.compare(Buffer.from(x.data), Buffer.from(y.data)) !== 0) changed.push(`${pass.index} ${entry.name}`);
    }
  }
  return changed;
}

let copies = 0;
async function perturbed(spec: RecordPerturbation): Promise<{ before: Uint8Array; after: Uint8Array; shape: readonly number[]; detail: string }> {
  const dir = join(root, `copy-${(copies += 1)}`);
  await copyBundle(cleanDir, dir);
  const applied = await applyRecordPerturbation(dir, spec);
  const [clean, copy] = await Promise.all([openBundle(cleanDir), openBundle(dir)]); // digests verified on open
  try {
    expect(await changedRecords(clean, copy)).toEqual([`${spec.pass} ${spec.boundary}`]);
    const [before, after] = await Promise.all([clean.readBoundary(spec.pass, spec.boundary), copy.readBoundary(spec.pass, spec.boundary)]);
    return { before: before.data, after: after.data, shape: before.shape, detail: applied.detail };
  } finally {
    await Promise.all([clean.close(), copy.close()]);
  }
}

const f32 = (bytes: Uint8Array): Float32Array => new Float32Array(bytes.slice().buffer);
const u32 = (bytes: Uint8Array): Uint32Array => new Uint32Array(bytes.slice().buffer);

describe('record perturbations of a copy of a native bundle', () => {
  it('transpose_2d writes the record in column-major memory order under its declared row-major shape', async () => {
    const { before, after, shape } = await perturbed({ kind: 'transpose_2d', pass: 6, boundary: 'depth.in' });
    expect(shape).toEqual([8, 32]);
    const [rows, cols] = [8, 32];
    const original = f32(before);
    const changed = f32(after);
    for (let i = 0; i < rows; i += 1) for (let j = 0; j < cols; j += 1) expect(changed[j * rows + i]).toBe(original[i * cols + j]);
  });

  it('round_bf16 rounds every element to nearest-even bf16', async () => {
    const { before, after } = await perturbed({ kind: 'round_bf16', pass: 3, boundary: 'backbone.final_norm' });
    const original = f32(before);
    const rounded = f32(after);
    for (const bits of u32(after)) expect(bits & 0xffff).toBe(0);
    original.forEach((value, i) => expect(Math.abs((rounded[i] as number) - value)).toBeLessThanOrEqual(Math.abs(value) * 2 ** -8));
    expect(rounded.some((value, i) => value !== original[i])).toBe(true);
  });

  it('flip_bit flips exactly one bit of one element (by default the top mantissa bit of the largest)', async () => {
    const { before, after, detail } = await perturbed({ kind: 'flip_bit', pass: 2, boundary: 'backbone.l1.mixer_out' });
    const original = u32(before);
    const flipped = u32(after);
    const differing = [...original.keys()].filter((i) => original[i] !== flipped[i]);
    expect(differing).toHaveLength(1);
    const index = differing[0] as number;
    expect(((original[index] as number) ^ (flipped[index] as number)) >>> 0).toBe(1 << 22);
    const magnitudes = [...f32(before)].map(Math.abs);
    expect(magnitudes[index]).toBe(Math.max(...magnitudes));
    expect(detail).toBe(`bit 22 of element ${index} flipped`);
  });

  it('swap_token replaces the token id', async () => {
    const { before, after } = await perturbed({ kind: 'swap_token', pass: 4, boundary: 'sampler.text.token', token: 7 });
    expect(new Int32Array(after.slice().buffer)[0]).toBe(7);
    expect(new Int32Array(before.slice().buffer)[0]).not.toBe(7);
  });

  it('refuses what it cannot do, and never writes over a folder', async () => {
    await expect(applyRecordPerturbation(cleanDir, { kind: 'transpose_2d', pass: 0, boundary: 'backbone.logits' })).rejects.toBeInstanceOf(
      RecordPerturbationError,
    );
    await expect(applyRecordPerturbation(cleanDir, { kind: 'round_bf16', pass: 0, boundary: 'sampler.text.token' })).rejects.toThrow(/needs an F32 record/);
    await expect(applyRecordPerturbation(cleanDir, { kind: 'flip_bit', pass: 0, boundary: 'no.such.boundary' })).rejects.toThrow(
      /has no record no\.such\.boundary/,
    );
    const occupied = join(root, 'occupied');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'keep.txt'), 'mine');
    await expect(copyBundle(cleanDir, occupied)).rejects.toThrow(/not empty/);
    expect(readFileSync(join(occupied, 'keep.txt'), 'utf8')).toBe('mine');
    // The refused perturbations left the clean bundle intact.
    const clean = await openBundle(cleanDir);
    await clean.close();
  });
});

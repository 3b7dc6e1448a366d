// Teacher forcing (captureRun teacherForce): the reference's tokens and codes are injected on
// every pass; the native records keep the engine's own choices, so a token that diverges is still
// judged where it diverges, while later passes stay comparable.
//
// perturb.prng_double_advance in the interleaved case makes the sampler draw the wrong uniform
// on every stochastic call. Its first token flip is an audio code in pass 6 (the text draws of
// passes 0-5 change target but land on the same tokens). Without forcing, every pass after that
// embeds a different frame and the whole backbone diverges; with forcing, only what the
// perturbation itself touches differs: the draws (target), the PRNG states and the sampled
// tokens themselves.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { typedView } from '../../main/core/bundle/tensor-view.ts';
import { diffCapture, type BoundaryDiffRow } from '../../main/core/capture/capture-diff.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { captureRun, recordTeacherForcing, type CaptureResult } from '../../main/core/capture/capture-run.ts';
import { planFromReference } from '../../main/core/capture/injection-plan.ts';
import { REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { flipTensorByte } from '../helpers/tensor-tamper.ts';

const outRoot = freshTempDir('teacher-forcing');
afterAll(() => rmSync(outRoot, { recursive: true, force: true }));

const failing = (row: BoundaryDiffRow): boolean => !['identical', 'within'].includes(row.status);
/** What prng_double_advance touches by itself in every sampler call: the draw and the PRNG state. */
const TOUCHED = /^(sampler\.text|depth\.cb\d\.sampler)\.(prng_before|target|prng_after|token)$|^gen\.prng$/;

interface Run {
  result: CaptureResult;
  rows: BoundaryDiffRow[];
  runtime: Record<string, string | number | boolean>;
  modes: (string | null)[];
}

async function capture(name: string, options: Record<string, string>, teacherForce: boolean): Promise<Run> {
  const outDir = join(outRoot, name);
  const result = await captureRun({
    library: REFERENCE_ENGINE,
    referenceDir: referenceBundle('interleaved'),
    outDir,
    options,
    teacherForce,
    command: `test teacher forcing ${name}`,
  });
  const native = await openBundle(outDir);
  try {
    return {
      result,
      rows: await diffCapture(native, result.reference),
      runtime: { ...native.manifest.provenance.runtime },
      modes: native.manifest.passes.map((pass) => pass.mode),
    };
  } finally {
    await native.close();
    await result.reference.close();
  }
}

describe('teacher forcing with perturb.prng_double_advance (interleaved)', () => {
  let free: Run;
  let forced: Run;
  beforeAll(async () => {
    [free, forced] = await Promise.all([
      capture('free', { 'perturb.prng_double_advance': '1' }, false),
      capture('forced', { 'perturb.prng_double_advance': '1' }, true),
    ]);
  });

  it("first flips a token at pass 6 (an audio code) in both runs, and the forced record shows the engine's own code", async () => {
    const firstTokenFlip = (rows: BoundaryDiffRow[]): string => {
      const row = rows.find((candidate) => candidate.boundary.endsWith('.token') && failing(candidate));
      return row === undefined ? 'none' : `${row.pass} ${row.boundary}`;
    };
    expect(firstTokenFlip(free.rows)).toBe('6 depth.cb1.sampler.token');
    expect(firstTokenFlip(forced.rows)).toBe('6 depth.cb1.sampler.token');
    // The forced record keeps the engine's own code; the reference's is the committed one.
    const reference = await openBundle(referenceBundle('interleaved'));
    const committed = await reference.readBoundary(6, 'depth.cb1.sampler.token').finally(() => reference.close());
    const referenceCode = String(typedView(committed.data, 'I32')[0]);
    const difference = forced.result.teacherForcing?.differences[0];
    expect(difference).toMatchObject({ pass: 6, boundary: 'depth.cb1.sampler.token', reference: referenceCode });
    expect(difference?.native).not.toBe(referenceCode);
  });

  it('without forcing, every pass after the flip diverges across the backbone', () => {
    for (let pass = 7; pass <= 20; pass += 1) {
      const backbone = free.rows.filter((row) => row.pass === pass && row.boundary.startsWith('backbone.') && failing(row));
      expect(backbone.length, `pass ${pass}`).toBeGreaterThanOrEqual(20);
      expect(free.rows.find((row) => row.pass === pass && row.boundary === 'backbone.embed')?.status).toBe('differs');
    }
  });

  it('with forcing, passes after the flip stay within contract except what the perturbation itself touches', () => {
    const after = forced.rows.filter((row) => row.pass >= 6);
    const outsideTouched = after.filter((row) => failing(row) && !TOUCHED.test(row.boundary));
    expect(outsideTouched.map((row) => `pass ${row.pass} ${row.boundary} ${row.status}`)).toEqual([]);
    // The network itself is untouched: every backbone and Depthformer activation, every feedback row and code.
    const network = after.filter((row) => /^backbone\.|^depth\.(in|codes)$|^depth\.cb\d\.(in|l\d\.out|logits|feedback)$/.test(row.boundary));
    // 15 passes x 25 backbone boundaries + 12 audio passes x (depth.in, depth.codes, 8 x 5 per codebook)
    expect(network.length).toBe(15 * 25 + 12 * 42);
    expect(network.filter(failing)).toEqual([]);
    // ...while the draws keep failing in every stochastic call, so the perturbation is still judged.
    for (let pass = 6; pass <= 20; pass += 1) {
      const target = forced.rows.find((row) => row.pass === pass && /\.target$/.test(row.boundary));
      expect(target?.status, `pass ${pass}`).toBe('outside');
    }
    // The forced run keeps the reference's modes (text 0-5, audio 6-17, text 18-20).
    expect(forced.modes.join('')).toBe(forced.result.reference.passes.map((pass) => pass.mode).join(''));
  });

  it('records in provenance that the run was forced and where the engine chose otherwise', () => {
    const summary = forced.result.teacherForcing;
    expect(summary).toBeDefined();
    if (summary === undefined) return;
    const tokenRowsThatDiffer = forced.rows.filter((row) => row.boundary.endsWith('sampler.token') || row.boundary === 'sampler.text.token').filter(failing);
    expect(summary.differences.map((d) => `${d.pass} ${d.boundary}`)).toEqual(tokenRowsThatDiffer.map((row) => `${row.pass} ${row.boundary}`));
    expect(summary.differingPasses).toEqual([...new Set(tokenRowsThatDiffer.map((row) => row.pass))]);
    expect(summary.differingPasses[0]).toBe(6);
    expect(summary.injections).toBe(9 + 12 * 8); // a token in each of the 9 text passes, 8 codes in each of the 12 audio passes
    expect(forced.runtime).toMatchObject({
      teacher_forced: true,
      teacher_forced_differing_passes: summary.differingPasses.join(','),
      teacher_forced_differences: summary.differences.length,
      teacher_forced_injections: summary.injections,
    });
    expect(String(forced.runtime['teacher_forced_boundaries']).split(',')).toEqual([
      'sampler.text.token',
      ...Array.from({ length: 8 }, (_, i) => `depth.cb${i}.sampler.token`),
    ]);
    expect(forced.runtime['teacher_forced_from']).toMatch(/^[0-9a-f]{64}$/);
    expect(free.runtime['teacher_forced']).toBeUndefined();
  });
});

describe('teacher forcing a clean engine', () => {
  it('changes nothing: every boundary within contract, no differing pass', async () => {
    const clean = await capture('clean', {}, true);
    expect(clean.result.run.status).toBe('completed');
    expect(clean.rows.filter(failing)).toEqual([]);
    expect(clean.result.teacherForcing?.differences).toEqual([]);
    expect(clean.runtime['teacher_forced_differing_passes']).toBe('');
  });
});

describe('the teacher-forcing summary', () => {
  it('reads the forced values verified: a changed forced token fails it, naming the file and the boundary', async () => {
    const outDir = join(outRoot, 'summary-tampered');
    const result = await captureRun({ library: REFERENCE_ENGINE, referenceDir: referenceBundle('interleaved'), outDir, teacherForce: true, command: 'test' });
    const reference = result.reference;
    try {
      // The run is not verified whole again after it is written (the gate verifies it for
      // judging); the summary's own reads still check each forced tensor's digest.
      const native = await openBundle(outDir, { verify: 'none' });
      const file = await flipTensorByte(native, 3, 'sampler.text.token');
      await native.close();
      const forcing = planFromReference(reference, ['sampler.text.token'], 'teacher_forcing');
      const error = await rejectionOf(recordTeacherForcing(outDir, reference, { forcing, rounding: null, plan: forcing, runtime: {} }, 21), BundleError);
      expect(error.code).toBe('E_DIGEST');
      expect(error.message).toContain(file);
      expect(error.message).toContain('sampler.text.token');
    } finally {
      await reference.close();
    }
  });
});

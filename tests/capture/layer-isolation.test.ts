// Layer isolation (captureRun isolate): a second capture in which every injectable boundary of
// every pass receives the reference value. Its records show what each segment alone adds (local
// error); the normal capture shows what has built up (accumulated error).
//
// perturb.kv_position_off_by_one rotates and appends decode keys one position too far in the two
// attention layers (l2, l4). Under isolation every layer gets the reference input, so the local
// error is large exactly in the attention layers and stays at float32 rounding in every conv layer
// and after; the accumulated error of the normal run grows downstream of l2.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { captureRun, type CaptureResult } from '../../main/core/capture/capture-run.ts';
import { compareLocalVsAccumulated, formatLocalVsAccumulated, type LocalVsAccumulatedRow } from '../../main/core/capture/local-vs-accumulated.ts';
import { REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const outRoot = freshTempDir('layer-isolation');
afterAll(() => rmSync(outRoot, { recursive: true, force: true }));

interface IsolatedRun {
  result: CaptureResult;
  rows: LocalVsAccumulatedRow[];
  isolatedRuntime: Record<string, string | number | boolean>;
}

async function captureIsolated(name: string, options: Record<string, string>): Promise<IsolatedRun> {
  const outDir = join(outRoot, name);
  const result = await captureRun({
    library: REFERENCE_ENGINE,
    referenceDir: referenceBundle('interleaved'),
    outDir,
    options,
    isolate: true,
    command: `test isolation ${name}`,
  });
  const isolatedDir = result.isolated?.dir ?? '';
  const [native, isolated] = await Promise.all([openBundle(outDir), openBundle(isolatedDir)]);
  try {
    return {
      result,
      rows: await compareLocalVsAccumulated(native, isolated, result.reference),
      isolatedRuntime: { ...isolated.manifest.provenance.runtime },
    };
  } finally {
    await Promise.all([native.close(), isolated.close(), result.reference.close()]);
  }
}

const row = (rows: readonly LocalVsAccumulatedRow[], pass: number, boundary: string): LocalVsAccumulatedRow => {
  const found = rows.find((candidate) => candidate.pass === pass && candidate.boundary === boundary);
  if (found === undefined) throw new Error(`no row for pass ${pass} ${boundary}`);
  return found;
};
const ATTENTION = /^backbone\.l[24]\.(k_append|mixer_out|out)$/;
const isFloat = (candidate: LocalVsAccumulatedRow): boolean => candidate.dtype === 'F32' || candidate.dtype === 'F64';

describe('layer isolation of the clean engine (interleaved)', () => {
  it('writes <out>-isolated, marked in provenance, whose every record is within contract', async () => {
    const clean = await captureIsolated('clean', {});
    expect(clean.result.run.status).toBe('completed');
    expect(clean.result.isolated).toMatchObject({ dir: join(outRoot, 'clean-isolated'), skipped: null, run: { status: 'completed' } });
    expect(clean.isolatedRuntime).toMatchObject({ layer_isolated: true });
    expect(String(clean.isolatedRuntime['layer_isolated_boundaries']).split(',')).toContain('backbone.l3.out');
    expect(clean.rows.length).toBeGreaterThan(1500);
    expect(
      clean.rows.filter((candidate) => candidate.local?.passed !== true).map((candidate) => `${candidate.pass} ${candidate.boundary} ${candidate.note}`),
    ).toEqual([]);
  });
});

describe('layer isolation with perturb.kv_position_off_by_one (interleaved)', () => {
  let run: IsolatedRun;
  beforeAll(async () => {
    run = await captureIsolated('kv', { 'perturb.kv_position_off_by_one': '1' });
  });

  it('leaves the prefill alone: pass 0 is within contract on both sides', () => {
    const pass0 = run.rows.filter((candidate) => candidate.pass === 0);
    expect(pass0.filter((candidate) => candidate.local?.passed !== true || candidate.accumulated?.passed !== true)).toEqual([]);
  });

  it('shows the local error outside contract only in the attention layers of every decode pass', () => {
    for (let pass = 1; pass <= 20; pass += 1) {
      const rows = run.rows.filter((candidate) => candidate.pass === pass && isFloat(candidate));
      const localOutside = rows.filter((candidate) => candidate.local?.passed === false).map((candidate) => candidate.boundary);
      // The keys (rotated at the wrong position), the attention output and the layer output of l2 and l4; nothing else.
      expect(localOutside, `pass ${pass}`).toEqual([
        'backbone.l2.k_append',
        'backbone.l2.mixer_out',
        'backbone.l2.out',
        'backbone.l4.k_append',
        'backbone.l4.mixer_out',
        'backbone.l4.out',
      ]);
      // Every other segment, given reference inputs, adds float32 rounding only: three orders of magnitude less.
      const attentionLocal = Math.min(...rows.filter((candidate) => ATTENTION.test(candidate.boundary)).map((candidate) => candidate.local?.maxAbs ?? 0));
      const otherLocal = Math.max(...rows.filter((candidate) => !ATTENTION.test(candidate.boundary)).map((candidate) => candidate.local?.maxAbs ?? Infinity));
      expect(otherLocal, `pass ${pass}`).toBeLessThan(1e-4);
      expect(attentionLocal, `pass ${pass}`).toBeGreaterThan(1000 * otherLocal);
    }
  });

  it('shows the accumulated error carried through every layer after l2 and growing over the passes', () => {
    const BEFORE_L2 = /^backbone\.(embed|l[01]\.)/;
    for (let pass = 1; pass <= 20; pass += 1) {
      const rows = run.rows.filter((candidate) => candidate.pass === pass && isFloat(candidate) && candidate.boundary.startsWith('backbone.'));
      // Up to pass 6 every pass embeds the reference's own token: before l2 nothing has gone wrong yet.
      if (pass <= 6)
        expect(
          rows.filter((candidate) => BEFORE_L2.test(candidate.boundary) && candidate.accumulated?.passed !== true),
          `pass ${pass}`,
        ).toEqual([]);
      // From l2 on, every backbone boundary of the normal run is outside contract, although the conv
      // layers, the final norm and the logits add nothing by themselves: their error is inherited.
      // (l2's values come from its input, which is still right: only its keys are rotated wrongly.)
      const fromL2 = rows.filter((candidate) => !BEFORE_L2.test(candidate.boundary) && candidate.boundary !== 'backbone.l2.v_append');
      expect(
        fromL2.filter((candidate) => candidate.accumulated?.passed !== false).map((candidate) => candidate.boundary),
        `pass ${pass}`,
      ).toEqual([]);
      const inherited = fromL2.filter((candidate) => !ATTENTION.test(candidate.boundary));
      expect(
        inherited.filter((candidate) => candidate.local?.passed !== true).map((candidate) => candidate.boundary),
        `pass ${pass}`,
      ).toEqual([]);
      // What reaches the last layer exceeds what any single attention layer adds by itself.
      const attentionLocal = Math.max(
        row(run.rows, pass, 'backbone.l2.out').local?.maxAbs ?? Infinity,
        row(run.rows, pass, 'backbone.l4.out').local?.maxAbs ?? Infinity,
      );
      expect(row(run.rows, pass, 'backbone.l5.out').accumulated?.maxAbs, `pass ${pass}`).toBeGreaterThan(attentionLocal);
    }
    // Over the passes it snowballs: once a sampled code differs (pass 6), later passes embed other
    // frames, and the error at the last layer grows by an order of magnitude.
    const lastLayer = (pass: number): number => row(run.rows, pass, 'backbone.l5.out').accumulated?.maxAbs ?? Number.NaN;
    const early = Math.max(...[1, 2, 3, 4, 5, 6].map(lastLayer));
    for (let pass = 7; pass <= 20; pass += 1) expect(lastLayer(pass), `pass ${pass}`).toBeGreaterThan(5 * early);
  });

  it('formats a table that names where the error enters', () => {
    const table = formatLocalVsAccumulated(run.rows, { passes: [1] });
    expect(table).toMatch(/backbone\.l2\.out \*.*<- adds error/);
    expect(table).toMatch(/backbone\.l3\.out \*.*inherited/);
    expect(table.split('\n')[0]).toMatch(/^pass\s+boundary\s+local max\|err\|/);
  });
});

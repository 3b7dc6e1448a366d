// The gate's audio line: the native PCM stream (cut by the reference's valid regions) against
// the reference stream. The clean engine is far above any audible difference; a missing
// envelope division is plainly caught by every metric.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatAudioSummary, summarizeAudio, type AudioSummary } from '../../main/core/audio/audio-summary.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { captureRun } from '../../main/core/capture/capture-run.ts';
import { REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';

/** The reference's PCM stream length: the valid samples of every detok.pcm of the committed speech manifest. */
const REFERENCE_SAMPLES = (() => {
  const Manifest = z.looseObject({
    passes: z.array(z.looseObject({ boundaries: z.array(z.looseObject({ name: z.string(), valid: z.looseObject({ length: z.number() }).nullable() })) })),
  });
  const manifest = Manifest.parse(JSON.parse(readFileSync(join(referenceBundle('speech'), 'manifest.json'), 'utf8')));
  return manifest.passes
    .flatMap((pass) => pass.boundaries)
    .reduce((sum, boundary) => sum + (boundary.name === 'detok.pcm' ? (boundary.valid?.length ?? 0) : 0), 0);
})();

async function captureSpeech(options: Record<string, string>): Promise<AudioSummary> {
  const outDir = join(freshTempDir('audio-summary'), 'native');
  const result = await captureRun({ library: REFERENCE_ENGINE, referenceDir: referenceBundle('speech'), outDir, options, command: 'test audio summary' });
  expect(result.run.status).toBe('completed');
  const native = await openBundle(outDir);
  try {
    const summary = await summarizeAudio(native, result.reference);
    expect(summary).not.toBeNull();
    return summary as AudioSummary;
  } finally {
    await native.close();
    await result.reference.close();
  }
}

describe('audio summary of a captured run', () => {
  it('aligns native and reference on the reference valid regions: the clean engine is near-identical', async () => {
    const clean = await captureSpeech({});
    expect(REFERENCE_SAMPLES).toBeGreaterThan(1440);
    expect(clean.samples).toBe(REFERENCE_SAMPLES);
    expect(clean.nullOffset).toBe(0);
    expect(clean.snrDb).toBeGreaterThan(100);
    expect(clean.esr).toBeLessThan(1e-9);
    const seconds = (REFERENCE_SAMPLES / 24000).toFixed(3).replace('.', '\\.');
    expect(formatAudioSummary('speech', clean)).toMatch(new RegExp(`^audio {4}speech detok\\.pcm: ${REFERENCE_SAMPLES} samples \\(${seconds} s\\) ESR `));
  });

  it('shows a skipped envelope division in every metric', async () => {
    const broken = await captureSpeech({ 'perturb.skip_envelope_division': '1' });
    expect(broken.snrDb).toBeLessThan(20);
    expect(broken.esr).toBeGreaterThan(1e-2);
    expect(broken.mrStft).toBeGreaterThan(0.1);
  });
});

// session-audio: the PCM streams, metrics and WAV files the app's audio pane shows, on a
// committed audio case (speech) against a native run of the reference engine captured here.
// The expected streams are rebuilt from the manifest and the raw tensors independently of
// pcm-stream.ts: per pass in order, the first valid.length samples of detok.pcm.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../../main/core/audio/wav.ts';
import { nullTest } from '../../main/core/audio/audio-metrics.ts';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { captureRun } from '../../main/core/capture/capture-run.ts';
import { audioOf, nullResidual, wavOf } from '../../main/session/session-audio.ts';
import { AudioSchema, fromWire } from '../../protocol/inspector-api.ts';
import { REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const root = freshTempDir('session-audio');
let reference: TraceBundle;
let native: TraceBundle;

beforeAll(async () => {
  const outDir = join(root, 'native');
  const capture = await captureRun({ library: REFERENCE_ENGINE, referenceDir: referenceBundle('speech'), outDir, command: 'test session-audio' });
  expect(capture.run.status).toBe('completed');
  await capture.reference.close();
  [reference, native] = await Promise.all([openBundle(referenceBundle('speech')), openBundle(outDir)]);
});
afterAll(async () => {
  await Promise.all([reference?.close(), native?.close()]);
  rmSync(root, { recursive: true, force: true });
});

interface ManifestPcm {
  passes: { index: number; boundaries: { name: string; shape: number[]; valid: { length: number } | null }[] }[];
}

/** Passes recording detok.pcm and their valid lengths, read from the manifest JSON directly. */
function referencePcmLayout(): { passes: number[]; lengths: number[] } {
  const manifest = JSON.parse(readFileSync(join(referenceBundle('speech'), 'manifest.json'), 'utf8')) as ManifestPcm;
  const passes: number[] = [];
  const lengths: number[] = [];
  for (const pass of manifest.passes) {
    const entry = pass.boundaries.find((boundary) => boundary.name === 'detok.pcm');
    if (entry === undefined) continue;
    passes.push(pass.index);
    lengths.push(entry.valid?.length ?? (entry.shape[0] as number));
  }
  return { passes, lengths };
}

/** The expected stream of `bundle`, cut by the reference's valid lengths. */
async function expectedStream(bundle: TraceBundle): Promise<Float32Array> {
  const { passes, lengths } = referencePcmLayout();
  const out: number[] = [];
  for (const [i, pass] of passes.entries()) {
    const tensor = await bundle.readBoundary(pass, 'detok.pcm');
    const view = new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
    for (let k = 0; k < (lengths[i] as number); k++) out.push(view.getFloat32(k * 4, true));
  }
  return Float32Array.from(out);
}

function decodePcm(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

const bitsOf = (samples: Float32Array): Uint32Array => new Uint32Array(Float32Array.from(samples).buffer);

describe('audioOf on the speech case', () => {
  it('concatenates the valid samples of every pass, bit for bit, on each side, at 24 kHz', async () => {
    const audio = AudioSchema.parse(await audioOf(native, reference, 'detok.pcm'));
    const layout = referencePcmLayout();
    expect(audio.sampleRate).toBe(24000);
    expect(audio.passes).toEqual(layout.passes);
    const referenceSamples = decodePcm(audio.reference);
    expect(referenceSamples.length).toBe(layout.lengths.reduce((a, b) => a + b, 0));
    expect(bitsOf(referenceSamples)).toEqual(bitsOf(await expectedStream(reference)));
    expect(bitsOf(decodePcm(audio.native))).toEqual(bitsOf(await expectedStream(native)));
  });

  it('measures the native stream against the reference: float32-rounding small, aligned at offset 0', async () => {
    const audio = await audioOf(native, reference, 'detok.pcm');
    const metrics = audio.metrics;
    expect(metrics).not.toBeNull();
    if (metrics === null) return;
    expect(metrics.nullOffset).toBe(0);
    expect(fromWire(metrics.esr)).toBeGreaterThan(0); // the engine is faithful, not bit-identical to PyTorch
    expect(fromWire(metrics.esr)).toBeLessThan(1e-9);
    expect(fromWire(metrics.snrDb)).toBeCloseTo(-10 * Math.log10(fromWire(metrics.esr)), 6);
    expect(fromWire(metrics.nullResidualDbfs)).toBeLessThan(-140);
    expect(fromWire(metrics.mrStft)).toBeLessThan(1e-4);
  });

  it('without a native run: the reference stream, an empty native stream, no metrics', async () => {
    const audio = AudioSchema.parse(await audioOf(null, reference, 'detok.pcm'));
    expect(audio.native).toBe('');
    expect(audio.metrics).toBeNull();
    expect(decodePcm(audio.reference).length).toBe(referencePcmLayout().lengths.reduce((a, b) => a + b, 0));
  });

  it('refuses a boundary that is not PCM, naming it', async () => {
    // Only what the reference declares audio (its detok.pcm, for a bundle without an "audio" map).
    await expect(audioOf(native, reference, 'depth.codes')).rejects.toThrow(
      /"depth\.codes" is not a PCM boundary: .* does not declare it audio \(declared audio boundaries: "detok\.pcm"\)/,
    );
    await expect(audioOf(native, reference, 'backbone.l0.out')).rejects.toThrow(/"backbone\.l0\.out" is not a PCM boundary/);
    await expect(audioOf(native, reference, 'no.such.boundary')).rejects.toThrow(/"no\.such\.boundary" is not a PCM boundary/);
    await expect(wavOf(native, reference, 'depth.codes', 'reference')).rejects.toThrow(/depth\.codes/);
  });
});

describe('wavOf', () => {
  it('writes each side as a 24 kHz float WAV holding exactly the stream', async () => {
    for (const side of ['reference', 'native'] as const) {
      const wav = await wavOf(native, reference, 'detok.pcm', side);
      expect(wav.fileName).toBe(`speech-detok.pcm-${side}.wav`);
      const decoded = decodeWav(Buffer.from(wav.bytes, 'base64'));
      expect(decoded).toMatchObject({ format: 3, channels: 1, sampleRate: 24000, bitsPerSample: 32 });
      expect(bitsOf(decoded.samples)).toEqual(bitsOf(await expectedStream(side === 'reference' ? reference : native)));
    }
  });

  it('writes the residual native - reference at the null-test offset, whose level is the metric', async () => {
    const wav = await wavOf(native, reference, 'detok.pcm', 'residual');
    const residual = decodeWav(Buffer.from(wav.bytes, 'base64')).samples;
    const n = await expectedStream(native);
    const r = await expectedStream(reference);
    expect(residual.length).toBe(r.length); // offset 0: the whole common length
    expect(residual.some((value) => value !== 0)).toBe(true);
    for (let i = 0; i < r.length; i += 997) expect(residual[i]).toBe(Math.fround((n[i] as number) - (r[i] as number)));
    const rms = Math.sqrt(residual.reduce((sum, value) => sum + value * value, 0) / residual.length);
    const metrics = (await audioOf(native, reference, 'detok.pcm')).metrics;
    expect(20 * Math.log10(rms)).toBeCloseTo(fromWire(metrics?.nullResidualDbfs ?? 'NaN'), 2);
  });

  it('has no native or residual WAV before the native run has samples', async () => {
    await expect(wavOf(null, reference, 'detok.pcm', 'native')).rejects.toThrow(/no native audio for "detok\.pcm"/);
    await expect(wavOf(null, reference, 'detok.pcm', 'residual')).rejects.toThrow(/no residual audio/);
    expect((await wavOf(null, reference, 'detok.pcm', 'reference')).fileName).toBe('speech-detok.pcm-reference.wav');
  });
});

describe('the sample rate', () => {
  it('is the one the reference declares in its "audio" map, when it declares one', async () => {
    const copy = join(root, 'speech-16k');
    cpSync(referenceBundle('speech'), copy, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8')) as { audio?: Record<string, { sample_rate: number }> };
    manifest.audio = { 'detok.pcm': { sample_rate: 16000 } };
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
    const declared = await openBundle(copy);
    try {
      expect((await audioOf(null, declared, 'detok.pcm')).sampleRate).toBe(16000);
      expect(decodeWav(Buffer.from((await wavOf(null, declared, 'detok.pcm', 'reference')).bytes, 'base64')).sampleRate).toBe(16000);
    } finally {
      await declared.close();
    }
  });
});

describe('nullResidual', () => {
  it('aligns a delayed copy at its delay and cancels it exactly', () => {
    const r = Float32Array.from({ length: 4000 }, (_, i) => Math.sin(i * 0.05) * Math.exp(-i / 3000));
    const delay = 7;
    const n = new Float32Array(4000);
    n.set(r.subarray(0, 4000 - delay), delay); // n[i + 7] = r[i]
    const { offset, samples } = nullResidual(n, r);
    expect(offset).toBe(nullTest(n, r).offset);
    expect(offset).toBe(delay);
    expect(samples.length).toBe(4000 - delay);
    expect(samples.every((value) => value === 0)).toBe(true);
  });
});

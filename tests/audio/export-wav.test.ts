// readPcmStream and `trace-inspector export-wav` on the committed speech reference bundle
// (read only), and bad usage refused with exit 2 naming the file and field.
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { readPcmStream } from '../../main/core/audio/pcm-stream.ts';
import { decodeWav } from '../../main/core/audio/wav.ts';
import { runCli } from '../../main/cli/run-cli.ts';
import type { CliIO } from '../../main/cli/cli-io.ts';
import { REPO_ROOT, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const work = freshTempDir('export-wav');
const speech = referenceBundle('speech');

interface ManifestLike {
  passes: { index: number; boundaries: { name: string; shape: number[]; valid: { length: number } | null }[] }[];
}
const manifest = JSON.parse(readFileSync(join(speech, 'manifest.json'), 'utf8')) as ManifestLike;
const pcmPasses = manifest.passes.filter((pass) => pass.boundaries.some((b) => b.name === 'detok.pcm'));
const validTotal = pcmPasses.reduce((sum, pass) => {
  const entry = pass.boundaries.find((b) => b.name === 'detok.pcm')!;
  return sum + (entry.valid?.length ?? entry.shape[0]!);
}, 0);

async function run(args: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), stderrIsTTY: false, cwd: REPO_ROOT, env: {} };
  const status = await runCli(args, io);
  return { status, stdout, stderr };
}

describe('readPcmStream', () => {
  it('concatenates the valid region of every audio pass in pass order', async () => {
    const bundle = await openBundle(speech);
    try {
      const stream = await readPcmStream(bundle);
      expect(stream.sampleRate).toBe(24000);
      expect(stream.passes).toEqual(pcmPasses.map((pass) => pass.index));
      expect(stream.samples.length).toBe(validTotal);
      // The first pass's valid region is a strict prefix of its frame; the next pass follows it.
      const first = await bundle.readBoundary(stream.passes[0]!, 'detok.pcm');
      const firstFrame = new Float32Array(first.data.slice().buffer);
      const firstValid = pcmPasses[0]!.boundaries.find((b) => b.name === 'detok.pcm')!.valid!.length;
      expect(firstValid).toBeLessThan(firstFrame.length);
      expect(stream.samples.subarray(0, firstValid)).toEqual(firstFrame.subarray(0, firstValid));
      const second = await bundle.readBoundary(stream.passes[1]!, 'detok.pcm');
      expect(stream.samples[firstValid]).toBe(new Float32Array(second.data.slice().buffer)[0]);
      // Only a declared audio boundary is read (the committed bundles predate the "audio" map:
      // their detok.pcm is declared for them, at 24 kHz).
      expect(stream.sampleRate).toBe(24000);
      await expect(readPcmStream(bundle, 'no.such.boundary')).rejects.toThrow(
        /"no\.such\.boundary" is not declared audio \(declared audio boundaries: "detok\.pcm"\)/,
      );
    } finally {
      await bundle.close();
    }
  });
});

describe('trace-inspector export-wav', () => {
  it('writes the speech stream as a float WAV whose sample count is the sum of valid lengths', async () => {
    const before = readdirSync(speech).sort();
    const out = join(work, 'speech.wav');
    const result = await run(['export-wav', '--bundle', speech, '--out', out]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`${validTotal} samples`);
    expect(result.stdout).toContain(`${(validTotal / 24000).toFixed(3)} s at 24000 Hz`);
    const wav = decodeWav(readFileSync(out), out);
    expect(wav.samples.length).toBe(validTotal);
    expect(wav.factSampleLength).toBe(validTotal);
    expect(wav.sampleRate).toBe(24000);
    const bundle = await openBundle(speech);
    try {
      expect(wav.samples).toEqual((await readPcmStream(bundle)).samples);
    } finally {
      await bundle.close();
    }
    expect(readdirSync(speech).sort()).toEqual(before); // the fixture is read only
  });

  it('is listed in help', async () => {
    expect((await run(['help'])).stdout).toContain('export-wav');
    expect((await run(['help', 'export-wav'])).stdout).toContain('--bundle <dir>');
  });

  it.each([
    [['export-wav', '--out', 'x.wav'], /--bundle: required/],
    [['export-wav', '--bundle', speech], /--out: required/],
    [['export-wav', '--bundle', speech, '--out', 'x.txt'], /ending in \.wav/],
    [['export-wav', '--bundle', speech, '--out', 'x.wav', '--loud'], /Unknown option '--loud'/],
    [['export-wav', '--bundle', speech, '--out', 'x.wav', 'extra'], /positional/i],
    [['export-wav', '--bundle', speech, '--out', 'x.wav', '--boundary', ''], /--boundary/],
  ])('bad usage %j → exit 2', async (args, message) => {
    const result = await run(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(existsSync(join(REPO_ROOT, 'x.wav'))).toBe(false);
  });

  it('a boundary no pass records → exit 2 naming it, nothing written', async () => {
    const out = join(work, 'none.wav');
    const result = await run(['export-wav', '--bundle', speech, '--boundary', 'detok.pcmx', '--out', out]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('"detok.pcmx"');
    expect(result.stderr).toContain(speech);
    expect(existsSync(out)).toBe(false);
  });

  it('a boundary that is not declared audio → exit 2 naming the manifest field and the declared ones', async () => {
    const result = await run(['export-wav', '--bundle', speech, '--boundary', 'sampler.text.token', '--out', join(work, 'int.wav')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/manifest\.json: audio: "sampler\.text\.token" is not declared audio \(declared audio boundaries: "detok\.pcm"\)/);
    expect(existsSync(join(work, 'int.wav'))).toBe(false);
  });

  it('a missing bundle folder → exit 2', async () => {
    const result = await run(['export-wav', '--bundle', join(work, 'nowhere'), '--out', join(work, 'nowhere.wav')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(join(work, 'nowhere'));
  });

  it('a corrupt bundle → exit 2 naming the file and the field', async () => {
    const copy = join(work, 'corrupt-bundle');
    cpSync(speech, copy, { recursive: true });
    const text = readFileSync(join(copy, 'manifest.json'), 'utf8');
    const parsed = JSON.parse(text) as ManifestLike;
    const p = parsed.passes.findIndex((pass) => pass.boundaries.some((b) => b.name === 'detok.pcm'));
    const b = parsed.passes[p]!.boundaries.findIndex((entry) => entry.name === 'detok.pcm');
    parsed.passes[p]!.boundaries[b]!.valid!.length = 5000;
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(parsed, null, 2));
    const result = await run(['export-wav', '--bundle', copy, '--out', join(work, 'corrupt.wav')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(join(copy, 'manifest.json'));
    expect(result.stderr).toContain(`passes[${p}].boundaries[${b}].valid.length`);
    expect(existsSync(join(work, 'corrupt.wav'))).toBe(false);
  });

  it('refuses an existing output file (exit 2) and leaves it untouched', async () => {
    const out = join(work, 'taken.wav');
    writeFileSync(out, 'precious');
    const result = await run(['export-wav', '--bundle', speech, '--out', out]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${out}: already exists`);
    expect(readFileSync(out, 'utf8')).toBe('precious');
  });
});

// Audio bounds in a contract: the manifest accepts them on a faithful PCM contract only, names
// the file and the field of every bad bound, and leaves manifests without them unchanged; the
// pure judging functions break a bound exactly when the metric is outside it (NaN included).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { audioViolations, describeViolation, formatAudioMetrics } from '../../main/core/audio/audio-bounds.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { parseManifest, type AudioBounds } from '../../main/core/bundle/manifest-schema.ts';
import type { AudioMetricValues } from '../../main/core/compare/comparison-types.ts';
import { loosestBounds, passRanges } from '../../main/core/gate/audio-stream-verdicts.ts';
import { referenceBundle } from '../helpers/paths.ts';

const FILE = 'speech/reference/manifest.json';

type RawManifest = { passes: { boundaries: { name: string; contract: Record<string, unknown> }[] }[] };

/** The committed speech manifest, parsed afresh (never written back). */
function speechManifest(): RawManifest {
  return JSON.parse(readFileSync(join(referenceBundle('speech'), 'manifest.json'), 'utf8')) as RawManifest;
}

/** The first pass holding `name` (detok.pcm only on decoded frames) and the boundary's index in it. */
function boundaryAt(manifest: RawManifest, name: string): { p: number; b: number } {
  const p = manifest.passes.findIndex((pass) => pass.boundaries.some((boundary) => boundary.name === name));
  if (p < 0) throw new Error(`no ${name} in any pass`);
  const b = manifest.passes[p]?.boundaries.findIndex((boundary) => boundary.name === name) ?? -1;
  return { p, b };
}

const BOUNDS: AudioBounds = {
  max_esr: 3e-7,
  min_snr_db: 65,
  max_mr_stft: null,
  max_null_residual_dbfs: -50,
  max_null_offset: 0,
  derivation: 'from the faithful element bound: sum (n - r)^2 <= sum (abs + rel|r|)^2',
};

/** The manifest with `audio` set on the first `name` contract, parsed; the error when it is refused. */
function parseWith(audio: unknown, name = 'detok.pcm'): { error: BundleError | null; field: string } {
  const manifest = speechManifest();
  const { p, b } = boundaryAt(manifest, name);
  const contract = manifest.passes[p]?.boundaries[b]?.contract as Record<string, unknown>;
  contract['audio'] = audio;
  try {
    parseManifest(manifest, FILE);
    return { error: null, field: `passes[${p}].boundaries[${b}].contract.audio` };
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    return { error, field: `passes[${p}].boundaries[${b}].contract.audio` };
  }
}

describe('audio bounds in the manifest', () => {
  it('a committed manifest parses unchanged: no contract gains an audio field', () => {
    const parsed = parseManifest(speechManifest(), FILE);
    const contracts = parsed.passes.flatMap((pass) => pass.boundaries.map((boundary) => boundary.contract));
    expect(contracts.length).toBeGreaterThan(1000);
    expect(contracts.every((contract) => contract !== null && !('audio' in contract))).toBe(true);
  });

  it('accepts bounds on a faithful one-dimensional F32 PCM contract and keeps them as written', () => {
    const manifest = speechManifest();
    const { p, b } = boundaryAt(manifest, 'detok.pcm');
    (manifest.passes[p]?.boundaries[b]?.contract as Record<string, unknown>)['audio'] = BOUNDS;
    const contract = parseManifest(manifest, FILE).passes[p]?.boundaries[b]?.contract;
    expect(contract?.kind === 'faithful' ? contract.audio : undefined).toEqual(BOUNDS);
  });

  it.each([
    ['a negative max_esr', { ...BOUNDS, max_esr: -1e-7 }, 'max_esr', /greater than or equal to 0|>=0/],
    ['a NaN min_snr_db', { ...BOUNDS, min_snr_db: Number.NaN }, 'min_snr_db', /number|NaN/],
    ['an infinite max_null_residual_dbfs', { ...BOUNDS, max_null_residual_dbfs: Number.POSITIVE_INFINITY }, 'max_null_residual_dbfs', /finite|number/],
    ['a fractional max_null_offset', { ...BOUNDS, max_null_offset: 1.5 }, 'max_null_offset', /int/],
    ['a negative max_mr_stft', { ...BOUNDS, max_mr_stft: -0.5 }, 'max_mr_stft', /greater than or equal to 0|>=0/],
    ['an empty derivation', { ...BOUNDS, derivation: '' }, 'derivation', /non-empty/],
    ['an unknown bound', { ...BOUNDS, max_lufs: 3 }, 'max_lufs', /unknown field/],
  ])('refuses %s, naming the file and the field', (_label, audio, leaf, message) => {
    const { error, field } = parseWith(audio);
    expect(error).not.toBeNull();
    expect(error?.code).toBe('E_MANIFEST_SCHEMA');
    expect(error?.file).toBe(FILE);
    const issue = error?.issues.find((candidate) => candidate.field === `${field}.${leaf}`);
    expect(issue, error?.message).toBeDefined();
    expect(issue?.message).toMatch(message);
    expect(error?.message).toContain(`${FILE}: `);
  });

  it('refuses bounds without a derivation: the derivation is required', () => {
    const { derivation: _dropped, ...withoutDerivation } = BOUNDS;
    const { error, field } = parseWith(withoutDerivation);
    expect(error?.issues).toContainEqual({ code: 'E_MANIFEST_SCHEMA', field: `${field}.derivation`, message: 'missing (string required)' });
  });

  it('refuses bounds that bound nothing (E_CONTRACT)', () => {
    const { error, field } = parseWith({ ...BOUNDS, max_esr: null, min_snr_db: null, max_null_residual_dbfs: null, max_null_offset: null });
    expect(error?.code).toBe('E_CONTRACT');
    expect(error?.field).toBe(field);
    expect(error?.message).toMatch(/bounds nothing/);
  });

  it('refuses bounds on a boundary that is not one-dimensional F32 PCM (E_CONTRACT)', () => {
    const { error, field } = parseWith(BOUNDS, 'frontend.frames');
    expect(error?.code).toBe('E_CONTRACT');
    expect(error?.field).toBe(field);
    expect(error?.message).toMatch(/one-dimensional F32 PCM boundary; "frontend.frames" is F32 \[51, 512\]/);
  });

  it('refuses bounds on a bit_exact contract: identical samples make them redundant', () => {
    const { error, field } = parseWith(BOUNDS, 'frontend.valid_frames');
    expect(error?.field).toBe(field);
    expect(error?.message).toMatch(/bit_exact contract already requires identical samples .* belong on a faithful contract/);
  });
});

const METRICS: AudioMetricValues = { esr: 0.25, snrDb: 6.02, mrStft: 1.06, nullResidualDbfs: -25.3, nullOffset: -2 };
const NO_BOUNDS = { max_esr: null, min_snr_db: null, max_mr_stft: null, max_null_residual_dbfs: null, max_null_offset: null };

describe('judging metrics against bounds', () => {
  it('a bound breaks only when its metric is outside it, and a bound equal to the value holds', () => {
    expect(audioViolations(METRICS, { max_esr: 0.25, min_snr_db: 6.02, max_mr_stft: 1.06, max_null_residual_dbfs: -25.3, max_null_offset: 2 })).toEqual([]);
    expect(audioViolations(METRICS, { ...NO_BOUNDS, max_esr: 0.2 })).toEqual([{ bound: 'max_esr', value: 0.25, limit: 0.2 }]);
    expect(audioViolations(METRICS, { ...NO_BOUNDS, min_snr_db: 7 })).toEqual([{ bound: 'min_snr_db', value: 6.02, limit: 7 }]);
    expect(audioViolations(METRICS, { ...NO_BOUNDS, max_mr_stft: 1 })).toEqual([{ bound: 'max_mr_stft', value: 1.06, limit: 1 }]);
    expect(audioViolations(METRICS, { ...NO_BOUNDS, max_null_residual_dbfs: -30 })).toEqual([{ bound: 'max_null_residual_dbfs', value: -25.3, limit: -30 }]);
    // The offset is bounded in magnitude: -2 breaks 1, not 2.
    expect(audioViolations(METRICS, { ...NO_BOUNDS, max_null_offset: 1 })).toEqual([{ bound: 'max_null_offset', value: -2, limit: 1 }]);
  });

  it('a NaN metric (NaN samples) breaks every bound on it: fail closed', () => {
    const nan: AudioMetricValues = { esr: Number.NaN, snrDb: Number.NaN, mrStft: Number.NaN, nullResidualDbfs: Number.NaN, nullOffset: 0 };
    const broken = audioViolations(nan, { max_esr: 1, min_snr_db: -100, max_mr_stft: 100, max_null_residual_dbfs: 0, max_null_offset: 0 }).map((v) => v.bound);
    expect(broken).toEqual(['max_esr', 'min_snr_db', 'max_mr_stft', 'max_null_residual_dbfs']);
  });

  it('identical signals (ESR 0, SNR Infinity, residual -Infinity) are inside any bound', () => {
    const identical: AudioMetricValues = { esr: 0, snrDb: Number.POSITIVE_INFINITY, mrStft: 0, nullResidualDbfs: Number.NEGATIVE_INFINITY, nullOffset: 0 };
    expect(audioViolations(identical, { max_esr: 0, min_snr_db: 200, max_mr_stft: 0, max_null_residual_dbfs: -300, max_null_offset: 0 })).toEqual([]);
  });

  it('says the metric, its value and the bound', () => {
    expect(describeViolation({ bound: 'max_esr', value: 0.25, limit: 0.2 })).toBe('ESR 0.25 exceeds max_esr 0.2');
    expect(describeViolation({ bound: 'min_snr_db', value: 6.02, limit: 7 })).toBe('SNR 6.02 dB is below min_snr_db 7');
    expect(describeViolation({ bound: 'max_null_offset', value: -2, limit: 1 })).toBe('null-test offset -2 samples exceeds in magnitude max_null_offset 1');
    expect(formatAudioMetrics(METRICS, { ...NO_BOUNDS, max_esr: 0.3 })).toMatch(/^ESR 0\.25 \(max 0\.3\), SNR 6\.02 dB, MR-STFT distance 1\.06, /);
  });

  it('a stream is held to the loosest bound of its passes; a metric some pass leaves unbounded is unbounded', () => {
    const a: AudioBounds = { ...BOUNDS, max_esr: 1e-7, min_snr_db: 70, max_null_offset: 0 };
    const b: AudioBounds = { ...BOUNDS, max_esr: 3e-7, min_snr_db: 65, max_null_offset: 2, max_null_residual_dbfs: null };
    expect(loosestBounds([a, b])).toEqual({ max_esr: 3e-7, min_snr_db: 65, max_mr_stft: null, max_null_residual_dbfs: null, max_null_offset: 2 });
    expect(passRanges([0, 1, 2, 3, 5, 7, 8])).toBe('0-3, 5, 7-8');
  });
});

// The comparator judges a PCM record's audio metrics against its contract's audio bounds: a
// hand-built reference bounds every metric, and a native whose samples all sit inside the
// element tolerance but break exactly one audio bound fails, naming that metric, its value and
// the bound; inside every bound it passes, and a contract without bounds measures nothing.
import { afterAll, describe, expect, it } from 'vitest';
import type { AudioBounds, FaithfulContract } from '../../main/core/bundle/manifest-schema.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import { failureKind, judgeBoundary } from '../../main/core/gate/verdicts.ts';
import { cleanupBundles, f32, faithful, makeBundle, tensor } from './compare-fixtures.ts';

afterAll(cleanupBundles);

const FRAME = 1920;
const VALID = 1440;

/** A voiced-speech-like frame: three harmonics under a slow envelope, peak about 0.3. */
function speechLike(length: number): number[] {
  return Array.from({ length }, (_, i) => {
    const t = i / 24000;
    const voice = 0.5 * Math.sin(2 * Math.PI * 220 * t) + 0.3 * Math.sin(2 * Math.PI * 587 * t + 1) + 0.2 * Math.sin(2 * Math.PI * 1361 * t + 2);
    return Math.fround(0.3 * Math.sin(2 * Math.PI * 5 * t + 1) * voice);
  });
}

const REFERENCE = speechLike(VALID);
/** Half the amplitude: ESR 0.25, SNR 6.02 dB, MR-STFT ~1.06, residual ~-25.3 dBFS, offset 0. */
const HALF = REFERENCE.map((value) => Math.fround(value * 0.5));
/** Delayed by two samples: the null test aligns it at offset 2 with no residual. */
const DELAYED = REFERENCE.map((_, i) => (i < 2 ? 0 : (REFERENCE[i - 2] as number)));

const frame = (valid: readonly number[]): Uint8Array => f32([...valid, ...new Array<number>(FRAME - valid.length).fill(0)]);

/** Wide element tolerance (every sample of these natives is inside it): only the audio bounds can fail. */
function contract(audio: Partial<AudioBounds> | null): FaithfulContract {
  const base = faithful({ abs: 1, rel: 0 });
  if (audio === null) return base;
  return {
    ...base,
    audio: {
      max_esr: null,
      min_snr_db: null,
      max_mr_stft: null,
      max_null_residual_dbfs: null,
      max_null_offset: null,
      derivation: 'test bounds around the known metrics of a half-amplitude and a two-sample-delayed native',
      ...audio,
    },
  };
}

async function comparePcm(native: readonly number[], audio: Partial<AudioBounds> | null) {
  const valid = { axis: 0, length: VALID, padding: 'zero' as const };
  const nativeBundle = await makeBundle('native', [[tensor('detok.pcm', 'F32', [FRAME], frame(native))]]);
  const referenceBundle = await makeBundle('reference', [[tensor('detok.pcm', 'F32', [FRAME], frame(REFERENCE), { contract: contract(audio), valid })]]);
  return compareBoundary({ native: nativeBundle, reference: referenceBundle }, 0, 'detok.pcm');
}

/** Bounds every metric of HALF holds. */
const HALF_INSIDE: Partial<AudioBounds> = { max_esr: 0.3, min_snr_db: 5, max_mr_stft: 1.2, max_null_residual_dbfs: -24, max_null_offset: 0 };
const DELAYED_INSIDE: Partial<AudioBounds> = { max_esr: 0.1, min_snr_db: 10, max_mr_stft: 0.5, max_null_residual_dbfs: -60, max_null_offset: 2 };

describe('audio bounds on a PCM record', () => {
  it('inside every bound: PASS, and the result carries the record metrics over the valid samples', async () => {
    const result = await comparePcm(HALF, HALF_INSIDE);
    expect(result.mismatches).toBe(0);
    expect(result.outcome).toBe('pass');
    expect(result.audio).toMatchObject({ samples: VALID, passed: true, violations: [], bounds: { max_esr: 0.3, max_null_offset: 0 } });
    expect(result.audio?.metrics.esr).toBeCloseTo(0.25, 6);
    expect(result.audio?.metrics.snrDb).toBeCloseTo(6.0206, 3);
    expect(result.audio?.metrics.nullOffset).toBe(0);
    // Half gain leaves a residual of half the reference: 20·log10(RMS(r) / 2) dBFS, computed here.
    const referenceRms = Math.sqrt(REFERENCE.reduce((sum, value) => sum + value * value, 0) / REFERENCE.length);
    expect(result.audio?.metrics.nullResidualDbfs).toBeCloseTo(20 * Math.log10(referenceRms / 2), 3);
    const delayed = await comparePcm(DELAYED, DELAYED_INSIDE);
    expect(delayed.outcome).toBe('pass');
    expect(delayed.audio?.metrics).toMatchObject({ nullOffset: 2, nullResidualDbfs: Number.NEGATIVE_INFINITY });
  });

  it.each([
    ['max_esr', HALF, { ...HALF_INSIDE, max_esr: 0.2 }, /^ESR 0\.25 exceeds max_esr 0\.2$/],
    ['min_snr_db', HALF, { ...HALF_INSIDE, min_snr_db: 7 }, /^SNR 6\.02\d* dB is below min_snr_db 7$/],
    ['max_mr_stft', HALF, { ...HALF_INSIDE, max_mr_stft: 1 }, /^MR-STFT distance 1\.0\d* exceeds max_mr_stft 1$/],
    ['max_null_residual_dbfs', HALF, { ...HALF_INSIDE, max_null_residual_dbfs: -26 }, /^null-test residual -25\.\d+ dBFS exceeds max_null_residual_dbfs -26$/],
    ['max_null_offset', DELAYED, { ...DELAYED_INSIDE, max_null_offset: 1 }, /^null-test offset 2 samples exceeds in magnitude max_null_offset 1$/],
  ] as const)('breaking only %s: FAIL of kind audio at detok.pcm naming the metric, its value and the bound', async (bound, native, bounds, phrase) => {
    const result = await comparePcm(native, bounds);
    expect(result.mismatches).toBe(0);
    expect(result.outcome).toBe('fail');
    expect(result.audio?.violations.map((violation) => violation.bound)).toEqual([bound]);
    expect(failureKind(result)).toBe('audio');
    const judgement = judgeBoundary({
      caseId: 'compare-test',
      pass: 0,
      boundary: 'detok.pcm',
      inReference: true,
      inNative: true,
      catalogue: 'emitted',
      unreachedBecause: null,
      unreadable: null,
      reference: result,
      oracleSide: 'absent',
      oracle: null,
      ledger: null,
    });
    expect(judgement).toMatchObject({ verdict: 'FAIL', kind: 'audio' });
    const told = /audio of this record \(1440 samples\): (.*)$/.exec(judgement.reason)?.[1] ?? '';
    expect(told).toMatch(phrase);
  });

  it('elements failing only by degree with a broken audio bound: kind audio; a NaN sample keeps its own kind', async () => {
    const tight = { ...contract({ max_esr: 0.2 }), abs: 1e-6 };
    const valid = { axis: 0, length: VALID, padding: 'zero' as const };
    const referenceBundle = await makeBundle('reference', [[tensor('detok.pcm', 'F32', [FRAME], frame(REFERENCE), { contract: tight, valid })]]);
    const half = await makeBundle('native', [[tensor('detok.pcm', 'F32', [FRAME], frame(HALF))]]);
    const byDegree = await compareBoundary({ native: half, reference: referenceBundle }, 0, 'detok.pcm');
    expect(byDegree.mismatches).toBeGreaterThan(0);
    expect(byDegree.audio?.violations.map((violation) => violation.bound)).toEqual(['max_esr']);
    expect(failureKind(byDegree)).toBe('audio');
    const withNan = await makeBundle('native', [[tensor('detok.pcm', 'F32', [FRAME], frame(HALF.map((value, i) => (i === 0 ? Number.NaN : value))))]]);
    const nan = await compareBoundary({ native: withNan, reference: referenceBundle }, 0, 'detok.pcm');
    expect(failureKind(nan)).toBe('nan_vs_number');
    // NaN samples make the metrics NaN: every bound on them breaks (fail closed).
    expect(nan.audio?.passed).toBe(false);
    expect(nan.audio?.metrics.esr).toBeNaN();
    expect(nan.audio?.violations).toEqual([{ bound: 'max_esr', value: Number.NaN, limit: 0.2 }]);
  });

  it('a contract without audio bounds measures nothing: audio is null', async () => {
    const result = await comparePcm(HALF, null);
    expect(result.audio).toBeNull();
    expect(result.outcome).toBe('pass');
  });
});

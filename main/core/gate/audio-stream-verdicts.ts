// The stream-level audio judgement. A contract's audio bounds hold for each record (the
// comparator judges one pass's valid samples) and for the whole stream, which only the gate
// sees: the valid samples of every bounded pass, concatenated in pass order on both sides.
//
// The stream is held, metric by metric, to the loosest bound of its passes. ESR, SNR and the
// residual at offset 0 of a concatenation are energy- or length-weighted means of its records',
// so the loosest bound is exactly what the records' bounds imply for them; what the stream adds
// is what no single record can see: the MR-STFT's frames that straddle passes (and its 2048
// resolution, longer than a 1920-sample frame) and a delay the null test finds across passes.
//
// A broken stream bound becomes a FAIL of kind 'audio' on the boundary's row of the stream's
// last pass (where the stream is complete), its reason naming the metric, value, bound and the
// pass range.
import { describeViolation, judgeAudio, measureAudio, type AudioBoundValues } from '../audio/audio-bounds.ts';
import { readPcmFrame } from '../audio/pcm-stream.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { BundleError } from '../bundle/errors.ts';
import { type AUDIO_BOUND_NAMES, audioBoundsOf, type AudioBounds } from '../bundle/manifest-schema.ts';
import { pcmRecordLength } from '../compare/compare-audio.ts';
import type { AudioStreamJudgement, BoundaryVerdict, VerdictCounts } from './gate-types.ts';

/** What the stream judgement reads of a row (the app keeps its verdicts without the comparison details). */
export type StreamRow = Pick<BoundaryVerdict, 'pass' | 'boundary' | 'inNative' | 'verdict' | 'kind'> & { reference: object | null };
/** What a broken stream bound changes on a row. */
export type StreamVerdictRow = Pick<BoundaryVerdict, 'pass' | 'boundary' | 'verdict' | 'kind' | 'reason' | 'gapId'>;

/** "0-11, 18-20": consecutive pass indices as ranges. */
export function passRanges(passes: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < passes.length;) {
    let j = i;
    while (j + 1 < passes.length && (passes[j + 1] as number) === (passes[j] as number) + 1) j++;
    parts.push(i === j ? String(passes[i]) : `${passes[i]}-${passes[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

/** Per metric the loosest bound of `bounds`; null as soon as one of them leaves the metric unbounded. */
export function loosestBounds(bounds: readonly AudioBounds[]): AudioBoundValues {
  const pick = (name: (typeof AUDIO_BOUND_NAMES)[number]): number | null => {
    const values = bounds.map((bound) => bound[name]);
    if (values.length === 0 || values.some((value) => value === null)) return null;
    const numbers = values as number[];
    return name === 'min_snr_db' ? Math.min(...numbers) : Math.max(...numbers);
  };
  return {
    max_esr: pick('max_esr'),
    min_snr_db: pick('min_snr_db'),
    max_mr_stft: pick('max_mr_stft'),
    max_null_residual_dbfs: pick('max_null_residual_dbfs'),
    max_null_offset: pick('max_null_offset'),
  };
}

interface StreamPart {
  pass: number;
  length: number;
  bounds: AudioBounds;
}

/**
 * The records of `name` that make up its stream: reference passes whose contract bounds the
 * audio and whose row compared a native record of the same PCM shape. Records the ledger
 * declares broken (KNOWN_GAP) are left out, so a declared gap is not failed a second time
 * through the stream; unreadable ones are already FAIL.
 */
function streamParts(reference: TraceBundle, native: TraceBundle, verdicts: readonly StreamRow[], name: string): StreamPart[] {
  const parts: StreamPart[] = [];
  for (const pass of reference.passes) {
    const entry = pass.boundaries.find((boundary) => boundary.name === name);
    const bounds = audioBoundsOf(entry?.contract);
    if (entry === undefined || bounds === null) continue;
    const row = verdicts.find((verdict) => verdict.pass === pass.index && verdict.boundary === name);
    if (row === undefined || !row.inNative || row.reference === null || row.verdict === 'KNOWN_GAP' || row.kind === 'unreadable') continue;
    const length = pcmRecordLength(native.boundary(pass.index, name), entry);
    if (length !== null) parts.push({ pass: pass.index, length, bounds });
  }
  return parts;
}

async function concatenate(bundle: TraceBundle, name: string, parts: readonly StreamPart[]): Promise<Float32Array> {
  const samples = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    samples.set(await readPcmFrame(bundle, part.pass, name, part.length), offset);
    offset += part.length;
  }
  return samples;
}

/** Judges the stream of every boundary whose reference contracts bound the audio. */
export async function judgeAudioStreams(reference: TraceBundle, native: TraceBundle, verdicts: readonly StreamRow[]): Promise<AudioStreamJudgement[]> {
  const names = new Set<string>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) if (audioBoundsOf(entry.contract) !== null) names.add(entry.name);
  }
  const judgements: AudioStreamJudgement[] = [];
  for (const name of names) {
    const parts = streamParts(reference, native, verdicts, name);
    if (parts.length === 0) continue;
    let nativeSamples: Float32Array;
    let referenceSamples: Float32Array;
    try {
      [nativeSamples, referenceSamples] = await Promise.all([concatenate(native, name, parts), concatenate(reference, name, parts)]);
    } catch (error) {
      // A record that cannot be read is already a FAIL (unreadable) on its own row.
      if (error instanceof BundleError) continue;
      throw error;
    }
    if (referenceSamples.length === 0) continue;
    const passes = parts.map((part) => part.pass);
    const judged = judgeAudio(referenceSamples.length, measureAudio(nativeSamples, referenceSamples), loosestBounds(parts.map((part) => part.bounds)));
    judgements.push({ boundary: name, passes, passRange: passRanges(passes), ...judged, verdictPass: passes[passes.length - 1] as number });
  }
  return judgements;
}

export function describeStreamFailure(judgement: AudioStreamJudgement): string {
  return (
    `audio stream of ${judgement.boundary} over passes ${judgement.passRange} (${judgement.samples} samples): ` +
    `${judgement.violations.map(describeViolation).join('; ')} (each bound the loosest of those passes')`
  );
}

/**
 * Puts a broken stream bound on the row of the stream's last pass (mutating `verdicts` and
 * `counts`): a PASS, GAP or REVIEW_REQUIRED row becomes FAIL of kind 'audio' (a broken contract
 * outranks a gap or an open question), a FAIL row keeps its kind and gains the stream's reason.
 * (The last pass is never a KNOWN_GAP row: those are left out of the stream.)
 */
export function applyAudioStream(verdicts: StreamVerdictRow[], counts: VerdictCounts, judgement: AudioStreamJudgement): void {
  if (judgement.passed) return;
  const row = verdicts.find((verdict) => verdict.pass === judgement.verdictPass && verdict.boundary === judgement.boundary);
  if (row === undefined) return;
  const reason = describeStreamFailure(judgement);
  if (row.verdict === 'FAIL' || row.verdict === 'KNOWN_GAP') {
    row.reason = `${row.reason}; and the ${reason}`;
    return;
  }
  counts[row.verdict] -= 1;
  counts.FAIL += 1;
  row.reason = row.verdict === 'PASS' ? reason : `${reason}; besides, ${row.verdict}: ${row.reason}`;
  row.verdict = 'FAIL';
  row.kind = 'audio';
  row.gapId = null;
}

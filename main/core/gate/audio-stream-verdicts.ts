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
//
// The metrics are measured record by record (stream-accumulator.ts: measureAudio's over the whole
// stream, bit for bit). A run judged pass by pass (the app's live run) carries each stream's
// measurement from one judgement to the next (StreamCarry): a stream whose records so far are the
// ones measured before — the same passes, lengths and sha256 on both sides — reads and measures
// only its new records, so a step costs its own pass's PCM, not every earlier pass's again. Those
// earlier samples are the ones read, verified against the same sha256, when they were measured.
import { describeViolation, judgeAudio, type AudioBoundValues } from '../audio/audio-bounds.ts';
import { readPcmFrame } from '../audio/pcm-stream.ts';
import { AudioStreamAccumulator } from '../audio/stream-accumulator.ts';
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
  /** The sha256 of the record on each side: the evidence a carried measurement was made of. */
  nativeSha256: string;
  referenceSha256: string;
}

/** A stream measured so far: its records, in order, and their measurement. */
interface CarriedStream {
  readonly parts: readonly StreamPart[];
  readonly measured: AudioStreamAccumulator;
}

/** Each boundary's stream as measured by the last judgement of the same run (judgeAudioStreams' carry). */
export type StreamCarry = Map<string, CarriedStream>;

/** Whether `carried` was measured of the first records of `parts`, record for record. */
function measuredOfPrefix(carried: CarriedStream, parts: readonly StreamPart[]): boolean {
  return (
    carried.parts.length <= parts.length &&
    carried.parts.every((part, i) => {
      const now = parts[i];
      return (
        now !== undefined &&
        now.pass === part.pass &&
        now.length === part.length &&
        now.nativeSha256 === part.nativeSha256 &&
        now.referenceSha256 === part.referenceSha256
      );
    })
  );
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
    const nativeEntry = native.boundary(pass.index, name);
    const length = pcmRecordLength(nativeEntry, entry);
    if (length !== null && nativeEntry !== undefined) {
      parts.push({ pass: pass.index, length, bounds, nativeSha256: nativeEntry.sha256, referenceSha256: entry.sha256 });
    }
  }
  return parts;
}

/** The stream of `parts` measured, from `carried` when it measured their first records (only the rest is read). */
async function measure(
  reference: TraceBundle,
  native: TraceBundle,
  name: string,
  parts: readonly StreamPart[],
  carried: CarriedStream | undefined,
): Promise<AudioStreamAccumulator> {
  const known = carried !== undefined && measuredOfPrefix(carried, parts);
  const measured = known ? carried.measured : new AudioStreamAccumulator();
  for (const part of parts.slice(known ? carried.parts.length : 0)) {
    const [n, r] = await Promise.all([readPcmFrame(native, part.pass, name, part.length), readPcmFrame(reference, part.pass, name, part.length)]);
    measured.append(n, r);
  }
  return measured;
}

/**
 * Judges the stream of every boundary whose reference contracts bound the audio. `carry`, kept by
 * the caller between judgements of the same run as it grows, holds each stream's measurement.
 */
export async function judgeAudioStreams(
  reference: TraceBundle,
  native: TraceBundle,
  verdicts: readonly StreamRow[],
  carry: StreamCarry = new Map(),
): Promise<AudioStreamJudgement[]> {
  const names = new Set<string>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) if (audioBoundsOf(entry.contract) !== null) names.add(entry.name);
  }
  const judgements: AudioStreamJudgement[] = [];
  for (const name of names) {
    const parts = streamParts(reference, native, verdicts, name);
    const carried = carry.get(name);
    // Taken out while it is measured on: a measurement interrupted half way is not carried.
    carry.delete(name);
    if (parts.length === 0) continue;
    let measured: AudioStreamAccumulator;
    try {
      measured = await measure(reference, native, name, parts, carried);
    } catch (error) {
      // A record that cannot be read is already a FAIL (unreadable) on its own row.
      if (error instanceof BundleError) continue;
      throw error;
    }
    carry.set(name, { parts, measured });
    if (measured.samples === 0) continue;
    const passes = parts.map((part) => part.pass);
    const judged = judgeAudio(measured.samples, measured.metrics(), loosestBounds(parts.map((part) => part.bounds)));
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

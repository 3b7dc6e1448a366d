// Judges one case once its run is captured: walks every (pass, boundary) of the reference in
// execution order, plus the native records the reference lacks, compares one boundary at a
// time (bounded memory: compareBoundary streams both sides in chunks) and turns the facts into
// verdicts (verdicts.ts).
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { isEmittedIn, type EngineBoundary, type EngineDescription, type PassFacts } from '../../engine-host/engine-description.ts';
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { BundleError } from '../bundle/errors.ts';
import type { Contract, PassEntry } from '../bundle/manifest-schema.ts';
import { compareBoundary } from '../compare/compare-boundary.ts';
import type { BoundaryComparison } from '../compare/comparison-types.ts';
import { canonicalJson } from '../receipt/canonical-json.ts';
import { applyAudioStream, judgeAudioStreams } from './audio-stream-verdicts.ts';
import {
  emptyCounts,
  type AudioStreamJudgement,
  type BoundaryVerdict,
  type ComparisonRecord,
  type LedgerEntry,
  type OracleSide,
  type VerdictCounts,
} from './gate-types.ts';
import { findLedgerEntry } from './ledger.ts';
import { PASS_ROW_BOUNDARY, passStructureFindings } from './pass-structure.ts';
import { SharedRecordParts } from './shared-record-parts.ts';
import { judgeBoundary, type CatalogueStance } from './verdicts.ts';

/** Where the run stopped, when it did not complete. */
export interface RunStop {
  /** The pass the engine was in when it stopped (every later pass was never run). */
  pass: number;
  /** One sentence: what happened, in which pass, after which boundary. */
  description: string;
}

export interface CaseJudgeInput {
  caseId: string;
  reference: TraceBundle;
  /** Null when the capture left nothing readable (then every boundary is unreached or unreadable). */
  native: TraceBundle | null;
  oracle: TraceBundle | null;
  description: EngineDescription;
  ledger: readonly LedgerEntry[];
  /** Null when the run completed. */
  stop: RunStop | null;
  /** Why the native bundle could not be read at all, when it could not. */
  nativeUnreadable: string | null;
  /** Contracts used, by id; filled in as comparisons are made. */
  contracts: Record<string, Contract>;
  chunkBytes?: number;
  /**
   * Judge only these passes (default: every pass of either bundle). The app judges a run pass by
   * pass as it steps; rows of different passes never depend on each other, so the union of the
   * per-pass judgements equals the judgement of the whole case.
   */
  passes?: readonly number[];
  /**
   * With exactly one pass in `passes`: judge only its rows [from, to) in execution order (the app
   * judges a long pass in parts on several threads; the parts, concatenated in order, are the
   * pass's rows). Pass-level findings go with the part that starts at 0.
   */
  slotRange?: { readonly from: number; readonly to: number };
  /**
   * Judge the audio streams of the judged passes (default true). The app turns this off and
   * judges each stream over every pass judged so far instead (main/session/session-judge.ts).
   */
  audioStreams?: boolean;
  /** Judge only these boundaries of the judged passes (default every one): the stream rows a pass shard needs of earlier passes. */
  boundaries?: ReadonlySet<string>;
  /**
   * Which pass-level findings (pass-structure.ts) this judgement reports, by the pass they go on
   * (default: those of the judged passes). A pass shard reports those of its range, and the last
   * shard also those past the reference's passes, so every finding of the case is reported once.
   */
  reportsFindingAt?: (pass: number) => boolean;
  /** Whether the native run's pass count is judged (default: when the whole case is judged and the run ended on its own). */
  judgeNativeCount?: boolean;
  onCompared?: (done: number, total: number) => void;
}

export interface CaseJudgement {
  verdicts: BoundaryVerdict[];
  counts: VerdictCounts;
  compared: number;
  /** The first evidence read failure (a digest mismatch, a truncated file), if any. */
  unreadable: string | null;
  /** PCM boundaries whose contracts bound the audio, judged over their stream (of the judged passes). */
  audio: AudioStreamJudgement[];
}

export function contractIdOf(contract: Contract): string {
  return createHash('sha256').update(canonicalJson(contract)).digest('hex').slice(0, 16);
}

/**
 * The comparison as the gate keeps it, its contract stored once. Written out field by field, not
 * as `{ ...rest, contractId }` of an object rest: V8 gave every record made that way a hidden class
 * of its own (a map and a descriptor array, about 1 KB a row), 40 MB of the gate's heap at 40,899
 * rows, the largest thing in it after the last pass of the 10 GiB scale trace.
 */
function recordOf(comparison: BoundaryComparison, contracts: Record<string, Contract>, shared: SharedRecordParts): ComparisonRecord {
  const c = comparison;
  const contractId = contractIdOf(c.contract);
  contracts[contractId] ??= c.contract;
  return {
    pass: c.pass,
    boundary: c.boundary,
    stage: c.stage,
    dtype: c.dtype,
    shape: shared.array(c.shape),
    structural: c.structural,
    elements: c.elements,
    mismatches: c.mismatches,
    mismatchShare: c.mismatchShare,
    classes: shared.numbers(c.classes),
    census: shared.census(c.census),
    firstMismatch: c.firstMismatch,
    worst: c.worst,
    maxAbs: c.maxAbs,
    maxRel: c.maxRel,
    maxUlp: c.maxUlp,
    rmse: c.rmse,
    required: shared.numbers(c.required),
    oracle: c.oracle,
    ties: c.ties,
    passed: c.passed,
    gap: c.gap ?? null,
    outcome: c.outcome,
    compared: c.compared,
    padded: c.padded,
    maxAbsExact: c.maxAbsExact,
    oracleRel: c.oracleRel,
    audio: c.audio,
    notes: shared.notes(c.notes),
    contractId,
  };
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

interface Slot {
  pass: PassEntry;
  name: string;
  stage: string;
  inReference: boolean;
  inNative: boolean;
  catalogueIndex: number | null;
  /** Position among the pass's rows before sorting (keeps undeclared rows in their order). */
  order: number;
}

function catalogueStance(boundary: EngineBoundary | undefined, pass: PassEntry, facts: PassFacts): CatalogueStance {
  if (boundary === undefined) return 'undeclared';
  if (boundary.emit === 'engine_decides') return 'engine_decides';
  return isEmittedIn(boundary, pass.kind, pass.mode ?? '', facts) ? 'emitted' : 'not_emitted';
}

/** The reference model's end-of-audio code (docs/reference-model.md): code 0 == 32 ends an audio run. */
const END_OF_AUDIO_CODE = 32;
/** detok.frame_status (docs/reference-model-audio.md): 0 decoded, 1 end-of-audio, 2 refused (EOA in another codebook). */
const FRAME_DECODED = 0;

/** The first I32 of a boundary of `pass`, or null when it is absent, not I32, empty or unreadable now. */
async function firstInt32(reference: TraceBundle, pass: number, name: string): Promise<number | null> {
  const entry = reference.boundary(pass, name);
  if (entry === undefined || entry.dtype !== 'I32' || entry.byte_length < 4) return null;
  try {
    const tensor = await reference.readBoundary(pass, name);
    return new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength).getInt32(0, true);
  } catch (error) {
    // Unreadable now (changed since it was verified): the comparison of the boundary itself
    // reports it as unreadable; here the caller falls back (fail closed).
    if (!(error instanceof BundleError)) throw error;
    return null;
  }
}

/**
 * What the emit kinds `prefill_audio_in` and `audio_frame` depend on, read from the reference
 * (the case's truth): whether its inputs include `pcm_in`, and whether a pass's audio frame was
 * left undecoded. The recorded `detok.frame_status` says it (0 decoded; 1 end-of-audio and 2
 * refused, EOA in another codebook, are not decoded); a reference without it falls back to
 * `depth.codes[0] == 32`. When the reference cannot tell, a frame counts as decoded, so an
 * `audio_frame` boundary native failed to emit is a FAIL, never a gap.
 */
export async function passFactsOf(reference: TraceBundle, description: EngineDescription, only: ReadonlySet<number> | null): Promise<Map<number, PassFacts>> {
  const pcmIn = reference.input('pcm_in') !== undefined;
  const needsFrames = description.boundaries.some((boundary) => boundary.emit === 'audio_frame');
  const facts = new Map<number, PassFacts>();
  for (const pass of reference.passes) {
    if (only !== null && !only.has(pass.index)) continue;
    let endOfAudio = false;
    if (needsFrames && pass.mode === 'audio') {
      const status = await firstInt32(reference, pass.index, 'detok.frame_status');
      if (status !== null) endOfAudio = status !== FRAME_DECODED;
      else endOfAudio = (await firstInt32(reference, pass.index, 'depth.codes')) === END_OF_AUDIO_CODE;
    }
    facts.set(pass.index, { pcmIn, endOfAudio });
  }
  return facts;
}

/** Every row of the case, in execution order: pass, then catalogue order. */
function slotsOf(input: CaseJudgeInput, catalogue: ReadonlyMap<string, number>, only: ReadonlySet<number> | null): Slot[] {
  const slots: Slot[] = [];
  const passes = new Map<number, PassEntry>();
  for (const pass of input.reference.passes) passes.set(pass.index, pass);
  for (const pass of input.native?.passes ?? []) if (!passes.has(pass.index)) passes.set(pass.index, pass);
  if (only !== null) for (const index of [...passes.keys()]) if (!only.has(index)) passes.delete(index);
  for (const index of [...passes.keys()].sort((a, b) => a - b)) {
    const referencePass = input.reference.passes.find((pass) => pass.index === index);
    const nativePass = input.native?.passes.find((pass) => pass.index === index);
    const pass = referencePass ?? (nativePass as PassEntry);
    const rows: Slot[] = [];
    const seen = new Set<string>();
    const wanted = input.boundaries;
    for (const entry of referencePass?.boundaries ?? []) {
      seen.add(entry.name);
      if (wanted !== undefined && !wanted.has(entry.name)) continue;
      rows.push({
        pass,
        name: entry.name,
        stage: entry.stage,
        inReference: true,
        inNative: nativePass?.boundaries.some((other) => other.name === entry.name) ?? false,
        catalogueIndex: catalogue.get(entry.name) ?? null,
        order: rows.length,
      });
    }
    for (const entry of nativePass?.boundaries ?? []) {
      if (seen.has(entry.name) || (wanted !== undefined && !wanted.has(entry.name))) continue;
      rows.push({
        pass,
        name: entry.name,
        stage: entry.stage,
        inReference: false,
        inNative: true,
        catalogueIndex: catalogue.get(entry.name) ?? null,
        order: rows.length,
      });
    }
    const key = (slot: Slot): number => slot.catalogueIndex ?? Number.MAX_SAFE_INTEGER;
    rows.sort((a, b) => key(a) - key(b) || a.order - b.order);
    slots.push(...rows);
  }
  return slots;
}

export async function judgeCase(input: CaseJudgeInput): Promise<CaseJudgement> {
  const catalogue = new Map(input.description.boundaries.map((boundary, index) => [boundary.name, index]));
  const catalogueByName = new Map(input.description.boundaries.map((boundary) => [boundary.name, boundary]));
  const only = input.passes === undefined ? null : new Set(input.passes);
  const range = input.slotRange;
  if (range !== undefined && input.passes?.length !== 1) throw new Error('internal: judgeCase slotRange needs exactly one pass');
  const slots = range === undefined ? slotsOf(input, catalogue, only) : slotsOf(input, catalogue, only).slice(range.from, range.to);
  const passFacts = await passFactsOf(input.reference, input.description, only);
  const verdicts: BoundaryVerdict[] = [];
  const counts = emptyCounts();
  let compared = 0;
  let unreadable: string | null = input.nativeUnreadable;
  const { native, reference, oracle } = input;
  // The records' small parts, held once per distinct content (the table goes with this call, the rows keep the parts).
  const shared = new SharedRecordParts();

  for (const [done, slot] of slots.entries()) {
    const started = performance.now();
    const passIndex = slot.pass.index;
    let referenceComparison: BoundaryComparison | null = null;
    let oracleComparison: BoundaryComparison | null = null;
    let oracleSide: OracleSide = 'not_compared';
    let slotUnreadable: string | null = null;

    if (input.nativeUnreadable !== null && slot.inReference) {
      slotUnreadable = `the native bundle cannot be read: ${input.nativeUnreadable}`;
    } else if (slot.inReference && slot.inNative && native !== null) {
      const oracleHas = oracle !== null && oracle.boundary(passIndex, slot.name) !== undefined;
      try {
        referenceComparison = await compareBoundary(
          { native, reference, oracle: oracleHas ? oracle : null },
          passIndex,
          slot.name,
          input.chunkBytes !== undefined ? { chunkBytes: input.chunkBytes } : {},
        );
        compared += 1;
        if (oracle === null) {
          oracleSide = 'absent';
        } else if (!oracleHas) {
          oracleSide = 'lacks';
        } else {
          oracleComparison = await compareBoundary(
            { native, reference: oracle },
            passIndex,
            slot.name,
            input.chunkBytes !== undefined ? { chunkBytes: input.chunkBytes } : {},
          );
          oracleSide = 'compared';
        }
      } catch (error) {
        if (!(error instanceof BundleError)) throw error;
        slotUnreadable = describeError(error);
      }
    } else if (oracle === null) {
      oracleSide = 'absent';
    }
    if (slotUnreadable !== null && unreadable === null) unreadable = slotUnreadable;

    const stop = input.stop;
    const unreached = !slot.inNative && stop !== null && passIndex >= stop.pass ? stop.description : null;
    const ledger = slot.inReference ? findLedgerEntry(input.ledger, input.caseId, passIndex, slot.name) : null;
    const stance = catalogueStance(
      catalogueByName.get(slot.name),
      slot.pass,
      passFacts.get(passIndex) ?? { pcmIn: input.reference.input('pcm_in') !== undefined, endOfAudio: false },
    );
    if (stance === 'engine_decides' && slot.inReference && !slot.inNative && unreached === null && slotUnreadable === null) {
      // The engine chose not to emit it in this pass, which its catalogue allows: no row.
      input.onCompared?.(done + 1, slots.length);
      continue;
    }
    const judgement = judgeBoundary({
      caseId: input.caseId,
      pass: passIndex,
      boundary: slot.name,
      inReference: slot.inReference,
      inNative: slot.inNative,
      catalogue: stance,
      unreachedBecause: unreached,
      unreadable: slotUnreadable,
      reference: referenceComparison,
      oracleSide,
      oracle: oracleComparison,
      ledger,
    });
    counts[judgement.verdict] += 1;
    verdicts.push({
      case: input.caseId,
      pass: passIndex,
      boundary: slot.name,
      stage: slot.stage,
      catalogueIndex: slot.catalogueIndex,
      verdict: judgement.verdict,
      kind: judgement.kind,
      reason: judgement.reason,
      gapId: judgement.gapId,
      ledgerId: ledger?.id ?? null,
      inReference: slot.inReference,
      inNative: slot.inNative,
      reference: referenceComparison === null ? null : recordOf(referenceComparison, input.contracts, shared),
      oracleSide,
      oracle: oracleComparison === null ? null : recordOf(oracleComparison, input.contracts, shared),
      durationMs: performance.now() - started,
    });
    input.onCompared?.(done + 1, slots.length);
  }
  // The passes themselves (count, kind, mode) must agree before their rows mean anything.
  const findings = passStructureFindings({
    reference,
    oracle,
    native: input.nativeUnreadable === null ? native : null,
    judgeNativeCount: input.judgeNativeCount ?? (only === null && input.stop === null),
  }).filter(
    (finding) =>
      (input.reportsFindingAt === undefined ? only === null || only.has(finding.pass) : input.reportsFindingAt(finding.pass)) &&
      (range === undefined || range.from === 0),
  );
  for (const finding of findings) {
    const row: BoundaryVerdict = {
      case: input.caseId,
      pass: finding.pass,
      boundary: PASS_ROW_BOUNDARY,
      stage: 'pass',
      catalogueIndex: null,
      verdict: 'FAIL',
      kind: 'pass',
      reason: finding.reason,
      gapId: null,
      ledgerId: null,
      inReference: finding.inReference,
      inNative: finding.inNative,
      reference: null,
      oracleSide: 'not_compared',
      oracle: null,
      durationMs: 0,
    };
    // First among its pass's rows: execution order puts the pass before its boundaries.
    const at = verdicts.findIndex((verdict) => verdict.pass > finding.pass || (verdict.pass === finding.pass && verdict.boundary !== PASS_ROW_BOUNDARY));
    verdicts.splice(at === -1 ? verdicts.length : at, 0, row);
    counts.FAIL += 1;
  }
  // Audio bounds hold over the whole stream too, which no single row sees (audio-stream-verdicts.ts).
  const audio = native === null || input.nativeUnreadable !== null || input.audioStreams === false ? [] : await judgeAudioStreams(reference, native, verdicts);
  for (const judgement of audio) applyAudioStream(verdicts, counts, judgement);
  return { verdicts, counts, compared, unreadable, audio };
}

// `--gate --shard K/N --shard-by passes`: the passes of each case split into contiguous ranges,
// so one long case (a real-model trace: a long prefill, hundreds of decode passes, 10+ GB) is
// judged by N CI jobs. A shard unit is (case, pass range [from, to)). Each case's passes are cut
// into min(N, passes) ranges of about equal reference bytes (what a shard reads, hashes and
// compares scales with them; a long prefill is worth many decode passes), range j going to shard
// j + 1. The split is computed from the reference manifests alone, so every shard computes the
// same one, and it is part of the plan digest: a shard of another split is foreign.
//
// The engine of every shard runs from pass 0 through the end of its range (decode state needs the
// earlier passes) but captures, hashes, writes and judges only its range. What belongs to the
// whole case stays whole: the shard whose range ends the case (the last) judges the native pass
// count and the pass-count findings past the reference's passes, and the audio streams, for
// which it also keeps the records of the audio-bounded boundaries of every earlier pass (a few
// KiB of PCM per pass). `merge` (gate-merge.ts) proves every pass of every case was judged exactly
// once (passCoverageProblems).
import { audioBoundsOf, type BundleManifest } from '../bundle/manifest-schema.ts';
import { passRanges } from './audio-stream-verdicts.ts';
import type { PassRange } from './pass-range.ts';

/** What a case-level judgement of a pass range needs to know about it. */
export interface CasePassRange {
  readonly from: number;
  readonly to: number;
  /** The range ends the case: it judges what belongs to the whole case. */
  readonly last: boolean;
}

/** Bytes of each pass of a reference (its boundaries' byte lengths), the weights of the split. */
export function passBytesOf(manifest: BundleManifest): number[] {
  return manifest.passes.map((pass) => pass.boundaries.reduce((sum, boundary) => sum + boundary.byte_length, 0));
}

/**
 * Cuts passes 0..P-1 into `parts` contiguous non-empty ranges of about equal weight (each pass
 * weighs its bytes + 1, so passes without records still count): cut k goes where the running
 * total comes nearest k/parts of the whole (on a tie, the later). Returns [from, to) pairs in order.
 */
export function splitPasses(passBytes: readonly number[], parts: number): [number, number][] {
  const count = passBytes.length;
  if (parts < 1 || parts > Math.max(1, count)) throw new Error(`internal: cannot split ${count} passes into ${parts} ranges`);
  if (count === 0) return [[0, 0]];
  const running = [0];
  for (const bytes of passBytes) running.push((running.at(-1) as number) + bytes + 1);
  const total = running.at(-1) as number;
  const cuts = [0];
  for (let k = 1; k < parts; k++) {
    const target = (k * total) / parts;
    let best = (cuts.at(-1) as number) + 1;
    // Each later range keeps at least one pass. A tie goes to the later cut: a later shard's
    // engine already runs every earlier pass.
    for (let j = best; j <= count - (parts - k); j++) {
      if (Math.abs((running[j] as number) - target) <= Math.abs((running[best] as number) - target)) best = j;
    }
    cuts.push(best);
  }
  cuts.push(count);
  return cuts.slice(0, -1).map((from, k) => [from, cuts[k + 1] as number]);
}

/** Every case's ranges in plan order (case id, then pass): range j of a case goes to shard j + 1. */
export function planPassRanges(cases: readonly { id: string; passBytes: readonly number[] }[], count: number): PassRange[] {
  const sorted = [...cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const ranges: PassRange[] = [];
  for (const item of sorted) {
    const parts = Math.max(1, Math.min(count, item.passBytes.length));
    splitPasses(item.passBytes, parts).forEach(([from, to], j) => ranges.push({ case: item.id, shard: j + 1, from, to }));
  }
  const idle = Array.from({ length: count }, (_, i) => i + 1).filter((shard) => !ranges.some((range) => range.shard === shard));
  if (idle.length > 0) {
    const longest = Math.max(...cases.map((item) => item.passBytes.length));
    throw new Error(
      `--shard-by passes with ${count} shards: the longest case has ${longest} pass(es), so shard(s) ${idle.join(', ')} would judge nothing; give at most ${longest} shards`,
    );
  }
  return ranges;
}

/** The range of the case of `manifest` that shard `spec` judges (null: none), as planPassRanges gives it. */
export function shardRangeOf(manifest: BundleManifest, spec: { index: number; count: number }): { from: number; to: number } | null {
  const passBytes = passBytesOf(manifest);
  const range = splitPasses(passBytes, Math.max(1, Math.min(spec.count, passBytes.length)))[spec.index - 1];
  return range === undefined ? null : { from: range[0], to: range[1] };
}

/** The case's range of shard `shard` (null: the shard does not run the case). */
export function rangeOf(ranges: readonly PassRange[], caseId: string, shard: number, passCount: number): CasePassRange | null {
  const range = ranges.find((candidate) => candidate.case === caseId && candidate.shard === shard);
  return range === undefined ? null : { from: range.from, to: range.to, last: range.to >= passCount };
}

/** Boundaries whose reference contract bounds the audio in some pass: their streams are judged whole. */
export function audioBoundedNames(manifest: BundleManifest): string[] {
  const names = new Set<string>();
  for (const pass of manifest.passes) for (const entry of pass.boundaries) if (audioBoundsOf(entry.contract) !== null) names.add(entry.name);
  return [...names].sort();
}

/** A range a shard says it judged, for the coverage proof. */
export interface JudgedRange {
  readonly case: string;
  readonly from: number;
  readonly to: number;
  /** How the shard is named in a problem ("shard 2/3 (file)"). */
  readonly by: string;
}

/**
 * Why the judged ranges do not cover every pass of every case exactly once, one line each (empty:
 * they do). `passCounts` gives each case's pass count, as the plan says it.
 */
export function passCoverageProblems(passCounts: ReadonlyMap<string, number>, judged: readonly JudgedRange[]): string[] {
  const problems: string[] = [];
  for (const [caseId, count] of passCounts) {
    const byPass: string[][] = Array.from({ length: count }, () => []);
    for (const range of judged) {
      if (range.case !== caseId) continue;
      for (let pass = range.from; pass < Math.min(range.to, count); pass++) (byPass[pass] as string[]).push(range.by);
    }
    const missing = byPass.flatMap((owners, pass) => (owners.length === 0 ? [pass] : []));
    if (missing.length > 0) problems.push(`missing range: case ${caseId}: passes ${passRanges(missing)} judged by no shard given`);
    // Overlaps, grouped by the set of shards that judged them.
    const overlaps = new Map<string, number[]>();
    byPass.forEach((owners, pass) => {
      if (owners.length > 1) overlaps.set(owners.join(' and '), [...(overlaps.get(owners.join(' and ')) ?? []), pass]);
    });
    for (const [owners, passes] of overlaps) problems.push(`overlapping ranges: case ${caseId}: passes ${passRanges(passes)} judged by ${owners}`);
  }
  return problems;
}

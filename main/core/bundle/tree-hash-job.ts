// The hash jobs of one file under the tree-sha256 scheme (tree-digest.ts) and their outcome put
// back together: every segment (header, tensors, gaps) is hashed as leaves of `chunkBytes`, a
// large file in parts of whole chunks spread over the workers (parallel-verify.ts), each byte read
// and hashed once. The file's digest and every tensor's are then computed here from the leaves,
// a sha256 of 32 bytes per chunk.
import type { HashedSpan, HashJob, HashOutcome, HashSpan } from './parallel-verify.ts';
import type { SplitSizes } from './split-hash-job.ts';
import { DEFAULT_SPLIT } from './split-hash-job.ts';
import { fileTreeDigest, segmentDigest } from './tree-digest.ts';

export interface TreePlan {
  readonly chunkBytes: number;
  readonly size: number;
  /** The file's segments in order ([begin, end), absolute). */
  readonly segments: readonly { readonly begin: number; readonly end: number }[];
  /** The jobs handed to the workers. */
  readonly parts: readonly HashJob[];
  /** For each part, the segment each of its spans is a piece of. */
  readonly owners: readonly (readonly number[])[];
}

/**
 * The tree jobs of a file: one job over every segment when the file is small; else pieces of
 * whole chunks (about `partBytes` each, a segment cut at multiples of the chunk size from its
 * own start), grouped into parts each reading one contiguous range.
 */
export function planTreeJobs(
  base: Omit<HashJob, 'spans' | 'tree' | 'range'>,
  size: number,
  segments: readonly { readonly begin: number; readonly end: number }[],
  chunkBytes: number,
  sizes: SplitSizes = DEFAULT_SPLIT,
): TreePlan {
  const whole: HashSpan[] = segments.map((segment) => ({ begin: segment.begin, end: segment.end, chunkBytes }));
  if (size <= sizes.fileBytes) {
    return { chunkBytes, size, segments, parts: [{ ...base, tree: true, spans: whole }], owners: [segments.map((_, s) => s)] };
  }
  const pieceBytes = Math.max(chunkBytes, Math.floor(sizes.partBytes / chunkBytes) * chunkBytes);
  const parts: HashJob[] = [];
  const owners: number[][] = [];
  let group: HashSpan[] = [];
  let groupOwners: number[] = [];
  let groupBytes = 0;
  const flush = (): void => {
    const first = group[0];
    const last = group.at(-1);
    if (first === undefined || last === undefined) return;
    parts.push({ ...base, tree: true, spans: group, range: { begin: first.begin, end: last.end } });
    owners.push(groupOwners);
    group = [];
    groupOwners = [];
    groupBytes = 0;
  };
  segments.forEach((segment, s) => {
    for (let begin = segment.begin; begin < segment.end; begin += pieceBytes) {
      const end = Math.min(begin + pieceBytes, segment.end);
      group.push({ begin, end, chunkBytes });
      groupOwners.push(s);
      groupBytes += end - begin;
      if (groupBytes >= sizes.partBytes) flush();
    }
  });
  flush();
  return { chunkBytes, size, segments, parts, owners };
}

/**
 * The outcome of a file hashed by `plan`, in the shape the plain scheme's outcome has: the
 * file's tree digest as `sha256`, and for each of `claims` (a tensor's absolute [begin, end))
 * its tree digest and its leaves. The first part's failure fails it; parts that saw different
 * identities of the file are 'changed' (it was written between them).
 */
export function combineTreeParts(
  plan: TreePlan,
  outcomes: readonly HashOutcome[],
  claims: readonly { readonly begin: number; readonly end: number }[],
): HashOutcome {
  const failed = outcomes.find((outcome) => !outcome.ok);
  if (failed !== undefined) return failed;
  if (outcomes.length !== plan.parts.length) return { ok: false, problem: 'unreadable', reason: 'was not hashed in full' };
  const leaves: string[][] = plan.segments.map(() => []);
  plan.owners.forEach((owners, p) =>
    owners.forEach((segment, s) => {
      const outcome = outcomes[p];
      const hashed = outcome?.ok === true ? outcome.spans[s] : undefined;
      if (hashed !== undefined) leaves[segment]?.push(...hashed.chunks);
    }),
  );
  return combineTreeLeaves(plan, outcomes, leaves, claims);
}

/**
 * The outcome of a file from every read of it (`outcomes`: the workers' parts, each with the
 * file's identity) and the leaves of each of `plan.segments` however they were hashed: the file's
 * tree digest and each claim's, in the shape the plain scheme's outcome has. The first read's
 * failure fails it; reads that saw different identities of the file are 'changed' (it was
 * written between them); a file of another size than planned is 'changed'; a segment short of
 * a leaf was not hashed in full.
 */
export function combineTreeLeaves(
  plan: Pick<TreePlan, 'chunkBytes' | 'size' | 'segments'>,
  outcomes: readonly HashOutcome[],
  leaves: readonly (readonly string[])[],
  claims: readonly { readonly begin: number; readonly end: number }[],
): HashOutcome {
  const failed = outcomes.find((outcome) => !outcome.ok);
  if (failed !== undefined) return failed;
  const ok = outcomes.filter((outcome): outcome is Extract<HashOutcome, { ok: true }> => outcome.ok);
  const [first] = ok;
  if (first === undefined) return { ok: false, problem: 'unreadable', reason: 'was not hashed in full' };
  if (ok.some((outcome) => outcome.pin.identity !== first.pin.identity)) {
    return { ok: false, problem: 'changed', reason: 'was written to while being hashed (its identity differed between the parts hashed)' };
  }
  // The segments cover the size planned (the manifest's): bytes past it would be hashed by no
  // part, so a file that grew is refused here rather than verified without its tail.
  const grown = ok.find((outcome) => outcome.size !== plan.size);
  if (grown !== undefined) {
    return {
      ok: false,
      problem: 'changed',
      reason: `holds ${String(grown.size)} bytes where ${plan.size} were listed (it changed after the manifest was written)`,
    };
  }
  const complete = plan.segments.every((segment, s) => (leaves[s]?.length ?? 0) === Math.ceil((segment.end - segment.begin) / plan.chunkBytes));
  if (!complete) return { ok: false, problem: 'unreadable', reason: 'was not hashed in full' };
  const digests = plan.segments.map((segment, s) => segmentDigest(segment.end - segment.begin, plan.chunkBytes, leaves[s] ?? []));
  const fileDigest = fileTreeDigest(
    plan.size,
    plan.chunkBytes,
    plan.segments.map((segment, s) => ({ offset: segment.begin, length: segment.end - segment.begin, digest: digests[s] as string })),
  );
  const bySpan = new Map(plan.segments.map((segment, s) => [`${segment.begin}:${segment.end}`, s]));
  const spans: HashedSpan[] = claims.map((claim) => {
    if (claim.begin === claim.end) return { sha256: segmentDigest(0, plan.chunkBytes, []), chunks: [] };
    const s = bySpan.get(`${claim.begin}:${claim.end}`);
    // Every tensor is a segment (the cuts include its ends, and safetensors tensors never overlap).
    return s === undefined ? { sha256: '', chunks: [] } : { sha256: digests[s] as string, chunks: [...(leaves[s] ?? [])] };
  });
  const statAtMs = Math.min(...ok.map((outcome) => outcome.pin.statAtMs));
  return { ok: true, sha256: fileDigest, bytes: plan.size, spans, pin: { ...first.pin, statAtMs } };
}

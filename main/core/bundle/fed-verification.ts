// The deferred verification of a tree-sha256 bundle that a comparison reads at the same time
// (bundle-reader.ts, verify 'deferred'): every byte is read once. The workers hash what the
// comparison does not read — headers, gaps, inputs — at once; the leaves of the boundaries'
// tensors come from the comparison's own reads (leaf-feed.ts); when the caller settles, the
// workers read whatever leaf was not supplied (a boundary never compared, a window off the chunk
// grid), and only then is every file judged exactly as verifyBundleFiles judges it: its digest,
// its tensors', their chunks', first problem in file order, and pinned when verified.
import type { BundleManifest } from './manifest-schema.ts';
import { forgetPin } from './file-pins.ts';
import { LeafFeed, readOnceTally } from './leaf-feed.ts';
import { hashFilesInParallel, type HashJob, type HashOutcome } from './parallel-verify.ts';
import { DEFAULT_SPLIT } from './split-hash-job.ts';
import { combineTreeLeaves, planTreeJobs } from './tree-hash-job.ts';
import { schemeOf } from './tree-digest.ts';
import { claimsByFile, judgeOutcome, planFiles, type PlannedFile } from './verify-bundle-files.ts';

interface FedLayout {
  readonly file: PlannedFile;
  readonly path: string;
  /** Segment index -> the key of the boundary tensor whose leaves the comparison supplies. */
  readonly fed: ReadonlyMap<number, string>;
  /** The workers' jobs over the other segments, and for each job the segment of each of its spans. */
  readonly jobs: readonly HashJob[];
  readonly owners: readonly (readonly number[])[];
}

/**
 * Verifies every file of a tree-sha256 bundle, taking the boundaries' leaves from `feed` (ended
 * by the caller); rejects with the first problem in file order, as verifyBundleFiles does.
 * Resolves false when a file changed between the reads (verify it again before concluding).
 * Rejects without reading the rest when the feed is abandoned (the bundle was closed unsettled).
 */
export async function verifyTreeFilesFed(
  manifest: BundleManifest,
  realPaths: ReadonlyMap<string, string>,
  display: (relPath: string) => string,
  feed: LeafFeed,
): Promise<boolean> {
  const scheme = schemeOf(manifest);
  if (scheme.kind !== 'tree') throw new Error('internal: a fed verification needs a tree-sha256 bundle');
  const chunkBytes = scheme.chunkBytes;
  const planned = await planFiles(manifest, claimsByFile(manifest), realPaths, display, [...manifest.files.keys()]);
  const layouts = planned.map((file): FedLayout => {
    const plan = file.tree;
    const path = manifest.files[file.index]?.path as string;
    if (plan === null) return { file, path, fed: new Map(), jobs: file.parts, owners: [] };
    const bySpan = new Map(plan.segments.map((segment, s) => [`${segment.begin}:${segment.end}`, s]));
    const fed = new Map<number, string>();
    file.claims.forEach((claim, c) => {
      const span = file.spans[c];
      if (claim.at[0] !== 'passes' || span === undefined || span.end === span.begin) return;
      const s = bySpan.get(`${span.begin}:${span.end}`);
      if (s !== undefined) fed.set(s, claim.key);
    });
    const others = plan.segments.map((_, s) => s).filter((s) => !fed.has(s));
    const base = plan.parts[0] as HashJob;
    const jobs: HashJob[] = [];
    const owners: number[][] = [];
    // Each run of adjacent segments the comparison does not read is read on its own (a part's
    // range is read whole), in parts of whole chunks spread over the workers.
    for (let at = 0; at < others.length;) {
      let end = at + 1;
      while (end < others.length && plan.segments[others[end] as number]?.begin === plan.segments[others[end - 1] as number]?.end) end += 1;
      const run = others.slice(at, end);
      const runPlan = planTreeJobs(
        { path: base.path, settleMs: base.settleMs ?? 0, settleMinBytes: base.settleMinBytes ?? 0 },
        plan.size,
        run.map((s) => plan.segments[s] as { begin: number; end: number }),
        chunkBytes,
        { fileBytes: -1, partBytes: DEFAULT_SPLIT.partBytes },
      );
      jobs.push(...runPlan.parts);
      owners.push(...runPlan.owners.map((list) => list.map((s) => run[s] as number)));
      at = end;
    }
    if (jobs.length === 0) {
      // Every byte is the comparison's: one empty read still records the file's identity and size.
      jobs.push({ ...base, spans: [], range: { begin: 0, end: 0 }, tree: true });
      owners.push([]);
    }
    return { file, path, fed, jobs, owners };
  });
  const firstReads = await hashFilesInParallel(layouts.flatMap((layout) => layout.jobs));

  const supplied = await feed.leaves();
  // Never a verified bundle: whoever would settle it after this gets this error, not a pass.
  if (supplied === null) throw new Error('the bundle was closed before its verification ended');

  // Every leaf not supplied: read and hashed by the workers now, a job per run of missing leaves.
  const missing = layouts.map((layout) => {
    const jobs: HashJob[] = [];
    const at: { segment: number; leaf: number; count: number }[] = [];
    const plan = layout.file.tree;
    if (plan === null) return { jobs, at };
    const base = plan.parts[0] as HashJob;
    for (const [s, key] of layout.fed) {
      const segment = plan.segments[s] as { begin: number; end: number };
      const count = Math.ceil((segment.end - segment.begin) / chunkBytes);
      const have = LeafFeed.leavesOf(supplied, layout.path, key);
      for (let leaf = 0; leaf < count;) {
        if (have[leaf] !== undefined) {
          leaf += 1;
          continue;
        }
        let end = leaf;
        while (end < count && have[end] === undefined) end += 1;
        const begin = segment.begin + leaf * chunkBytes;
        const stop = Math.min(segment.begin + end * chunkBytes, segment.end);
        jobs.push({ ...base, spans: [{ begin, end: stop, chunkBytes }], range: { begin, end: stop }, tree: true });
        at.push({ segment: s, leaf, count: end - leaf });
        readOnceTally.rereadBytes += stop - begin;
        leaf = end;
      }
    }
    return { jobs, at };
  });
  const secondReads = await hashFilesInParallel(missing.flatMap((entry) => entry.jobs));

  let first = 0;
  let second = 0;
  let proven = true;
  for (const [f, layout] of layouts.entries()) {
    const own = firstReads.slice(first, first + layout.jobs.length);
    first += layout.jobs.length;
    const fill = missing[f] as (typeof missing)[number];
    const again = secondReads.slice(second, second + fill.jobs.length);
    second += fill.jobs.length;
    const outcome = fedOutcome(layout, supplied, own, fill.at, again);
    if (!outcome.ok && outcome.problem === 'changed' && layout.fed.size > 0) {
      // Written to between the comparison's reads and the workers': not judged from reads of two
      // versions of the file, and not pinned; the caller verifies it again, first (as when a
      // file read beside a verification changed, bundle-reader.ts settleVerification).
      forgetPin(layout.file.real);
      proven = false;
      continue;
    }
    const problem = judgeOutcome(layout.file, outcome);
    if (problem !== null) throw problem;
  }
  return proven;
}

/** A file's outcome from its workers' reads, the leaves supplied and the leaves read again. */
function fedOutcome(
  layout: FedLayout,
  supplied: ReadonlyMap<string, readonly (string | undefined)[]>,
  own: readonly (HashOutcome | null)[],
  refills: readonly { segment: number; leaf: number; count: number }[],
  again: readonly (HashOutcome | null)[],
): HashOutcome {
  const plan = layout.file.tree;
  const reads = [...own, ...again];
  if (plan === null || reads.some((outcome) => outcome === null)) return { ok: false, problem: 'unreadable', reason: 'was not hashed in full' };
  const outcomes = reads as HashOutcome[];
  const leaves: (string | undefined)[][] = plan.segments.map(() => []);
  layout.owners.forEach((owners, p) =>
    owners.forEach((segment, s) => {
      const outcome = own[p];
      if (outcome?.ok === true) leaves[segment]?.push(...(outcome.spans[s]?.chunks ?? []));
    }),
  );
  for (const [s, key] of layout.fed) {
    const have = LeafFeed.leavesOf(supplied, layout.path, key);
    const segment = plan.segments[s] as { begin: number; end: number };
    const count = Math.ceil((segment.end - segment.begin) / plan.chunkBytes);
    const list = leaves[s] as (string | undefined)[];
    for (let leaf = 0; leaf < count; leaf++) list[leaf] = have[leaf];
    readOnceTally.fedBytes += have.reduce(
      (sum, leaf, i) => (leaf === undefined ? sum : sum + Math.min(plan.chunkBytes, segment.end - segment.begin - i * plan.chunkBytes)),
      0,
    );
  }
  refills.forEach((refill, r) => {
    const outcome = again[r];
    if (outcome?.ok !== true) return;
    const list = leaves[refill.segment] as (string | undefined)[];
    (outcome.spans[0]?.chunks ?? []).forEach((leaf, i) => {
      if (i < refill.count) list[refill.leaf + i] = leaf;
    });
  });
  // A hole (a leaf neither supplied nor read again) leaves its segment short: not hashed in full.
  const dense = leaves.map((list) => list.filter((leaf): leaf is string => leaf !== undefined));
  return combineTreeLeaves(
    plan,
    outcomes,
    dense,
    layout.file.claims.map((_, c) => layout.file.spans[c] as { begin: number; end: number }),
  );
}

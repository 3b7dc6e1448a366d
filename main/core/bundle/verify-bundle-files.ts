// Verifies every file a manifest lists, in parallel (parallel-verify.ts): the file's sha256,
// and in the same read each tensor's sha256 and its chunk digests where the manifest states
// them. Judged in the manifest's file order, so the error for a bad bundle is always the same:
// the first bad file, its own digest before its tensors', a tensor's digest before its chunks'.
import { MANIFEST_FILE_NAME, type BundleManifest } from './manifest-schema.ts';
import type { ChunkDigests } from './chunk-digests.ts';
import { BundleError, formatFieldPath } from './errors.ts';
import { GuardedReadError } from '../io/guarded-read.ts';
import { forgetPin, PIN_MARGIN_MS, recordPin, REHASH_ENV } from './file-pins.ts';
import { hashFilesInParallel, type HashJob, type HashOutcome, type HashSpan } from './parallel-verify.ts';
import { combineParts, splitHashJob } from './split-hash-job.ts';
import { SafetensorsFile } from './safetensors-reader.ts';
import { fileSegments, schemeOf } from './tree-digest.ts';
import { combineTreeParts, planTreeJobs, type TreePlan } from './tree-hash-job.ts';

export interface Claim {
  readonly key: string;
  readonly sha256: string;
  /** Where in the manifest the claim is: ['inputs', i] or ['passes', p, 'boundaries', b]. */
  readonly at: readonly (string | number)[];
  readonly chunks: ChunkDigests | null;
  readonly byteLength: number;
}

// The manifest fields of a claim, for messages: formatted only when a message names them (a
// 50k-boundary run has 100k of them, formatting them all up front blocked the thread for 100 ms).
const fieldOf = (claim: Claim): string => formatFieldPath([...claim.at, 'sha256']);
const chunksFieldOf = (claim: Claim): string => formatFieldPath([...claim.at, 'chunks', 'sha256']);

export function claimsByFile(manifest: BundleManifest): Map<string, Claim[]> {
  const byFile = new Map<string, Claim[]>();
  const add = (file: string, claim: Claim): void => {
    const list = byFile.get(file) ?? [];
    list.push(claim);
    byFile.set(file, list);
  };
  manifest.inputs.forEach((input, i) => add(input.file, { key: input.key, sha256: input.sha256, at: ['inputs', i], chunks: null, byteLength: 0 }));
  manifest.passes.forEach((pass, p) =>
    pass.boundaries.forEach((boundary, b) =>
      add(pass.file, {
        key: boundary.key,
        sha256: boundary.sha256,
        at: ['passes', p, 'boundaries', b],
        chunks: boundary.chunks ?? null,
        byteLength: boundary.byte_length,
      }),
    ),
  );
  return byFile;
}

/** Tensor files whose headers are read at once while planning the hashing. */
const PLAN_AT_ONCE = 16;

/** Files at least this large, written less than PIN_MARGIN_MS ago, are hashed once settled (parallel-verify.ts). */
const SETTLE_MIN_BYTES = 8 * 1024 * 1024;

export interface PlannedFile {
  /** Index into manifest.files. */
  readonly index: number;
  readonly real: string;
  readonly shown: string;
  readonly expected: string;
  readonly fileField: string;
  readonly claims: readonly Claim[];
  /** Each claim's span, in the claims' order. */
  readonly spans: readonly HashSpan[];
  /** One job for the whole file, or (a large file) its own sha256 and its tensors' in parts. */
  readonly parts: readonly HashJob[];
  /** Under the tree scheme (tree-digest.ts): how the parts' leaves make the file's and tensors' digests. */
  readonly tree: TreePlan | null;
}

/**
 * Hashes the planned files' jobs on the workers, in the files' order, and calls `onFile` with
 * each file's outcome (its parts combined) as soon as it is complete; `onFile` returning true
 * stops handing out jobs. Returns each file's outcome (null: not hashed in full).
 */
async function hashPlanned(
  planned: readonly PlannedFile[],
  onFile: (file: PlannedFile, outcome: HashOutcome) => boolean = () => false,
): Promise<(HashOutcome | null)[]> {
  const owners: number[] = [];
  const jobs: HashJob[] = [];
  planned.forEach((file, f) =>
    file.parts.forEach((part) => {
      owners.push(f);
      jobs.push(part);
    }),
  );
  const received = planned.map(() => new Map<number, HashOutcome>());
  const firstJob = planned.map(() => -1);
  owners.forEach((f, j) => {
    if (firstJob[f] === -1) firstJob[f] = j;
  });
  const outcomes: (HashOutcome | null)[] = planned.map(() => null);
  await hashFilesInParallel(jobs, {
    stopAfter: (outcome, j) => {
      const f = owners[j] as number;
      const file = planned[f] as PlannedFile;
      const parts = received[f] as Map<number, HashOutcome>;
      parts.set(j - (firstJob[f] as number), outcome);
      if (parts.size < file.parts.length) return false;
      const partOutcomes = file.parts.map((_, p) => parts.get(p) as HashOutcome);
      const combined = file.tree === null ? combineParts(file.parts, file.spans, partOutcomes) : combineTreeParts(file.tree, partOutcomes, file.spans);
      outcomes[f] = combined;
      return onFile(file, combined);
    },
  });
  return outcomes;
}

/**
 * Hashes the listed files (real paths in `realPaths`) on worker threads and throws the first
 * problem in file order: E_DIGEST naming the file and field (a tensor's key, a chunk's index),
 * or the GuardedReadError of a file that changed or stopped being a regular file meanwhile. A
 * header that cannot be parsed leaves its tensors unhashed here: crossCheckHeaders names it.
 */
export async function verifyBundleFiles(manifest: BundleManifest, realPaths: ReadonlyMap<string, string>, display: (relPath: string) => string): Promise<void> {
  const [first] = await hashAndJudge(manifest, realPaths, display, true);
  if (first !== undefined) throw first;
}

/**
 * Every file's first problem (file digest, then its tensors', then their chunks'), in file
 * order, each file hashed: what `trace-inspector check` reports all at once. Files missing from
 * `realPaths` (already refused by the caller) are skipped.
 */
export function bundleFileProblems(manifest: BundleManifest, realPaths: ReadonlyMap<string, string>, display: (relPath: string) => string): Promise<Error[]> {
  return hashAndJudge(manifest, realPaths, display, false);
}

async function hashAndJudge(
  manifest: BundleManifest,
  realPaths: ReadonlyMap<string, string>,
  display: (relPath: string) => string,
  stopAtFirst: boolean,
): Promise<Error[]> {
  const planned = await planFiles(manifest, claimsByFile(manifest), realPaths, display, [...manifest.files.keys()]);
  const outcomes = await hashPlanned(planned, (file, outcome) => stopAtFirst && problemOf(file, outcome) !== null);
  const problems: Error[] = [];
  for (const [index, file] of planned.entries()) {
    const outcome = outcomes[index];
    if (outcome === null || outcome === undefined) continue; // after the first failure: never hashed
    const problem = judgeOutcome(file, outcome);
    if (problem === null) continue;
    problems.push(problem);
    if (stopAtFirst) break;
  }
  return problems;
}

/**
 * Verifies the files at `order` (indices into manifest.files) — the order they are wanted in:
 * hashed in that order, several at once — and calls `onVerified` with each file's index as soon
 * as that file is verified (and pinned), so a reader can start on the files verified while the
 * rest are still hashed. Rejects with the first problem found (E_DIGEST naming the file and the
 * field, or the file that changed), without hashing the files not yet started; `stop()` returning
 * true stops handing out files too (the caller gave up), and the promise then resolves.
 */
export async function verifyBundleFilesInOrder(
  manifest: BundleManifest,
  realPaths: ReadonlyMap<string, string>,
  display: (relPath: string) => string,
  order: readonly number[],
  onVerified: (fileIndex: number) => void,
  stop: () => boolean = () => false,
): Promise<void> {
  let failure: Error | null = null;
  const judge = (file: PlannedFile, outcome: HashOutcome): boolean => {
    const problem = judgeOutcome(file, outcome);
    if (problem !== null) failure ??= problem;
    else onVerified(file.index);
    return failure !== null || stop();
  };
  // Planned (each file's tensor header read) a batch at a time while the batch before is hashed,
  // the first batches small (1, 1, 2, 4 files...): the first files' hashing starts at once, not
  // after every header of the run has been read.
  const batches: number[][] = [];
  for (let at = 0, size = 1; at < order.length; at += size, size = Math.min(size * 2, PLAN_AT_ONCE)) batches.push(order.slice(at, at + size));
  const claims = claimsByFile(manifest);
  let next = planFiles(manifest, claims, realPaths, display, batches[0] ?? []);
  for (let b = 0; b < batches.length; b++) {
    const planned = await next;
    next = b + 1 < batches.length ? planFiles(manifest, claims, realPaths, display, batches[b + 1] ?? []) : Promise.resolve([]);
    // A failed plan of the next batch is its caller's to see, after this batch (never unhandled).
    next.catch(() => undefined);
    let stopped = false;
    await hashPlanned(planned, (file, outcome) => {
      stopped = judge(file, outcome);
      return stopped;
    });
    if (stopped || failure !== null) break;
  }
  if (failure !== null) throw failure;
}

/** A hashed file judged: null when verified (and then pinned), else its problem (and any pin dropped). */
export function judgeOutcome(file: PlannedFile, outcome: HashOutcome): Error | null {
  const problem = problemOf(file, outcome);
  if (problem === null) {
    // Verified: later reads and the closing check may stat the file instead of re-hashing it.
    if (outcome.ok) recordPin(file.real, outcome.pin, outcome.sha256, new Map(file.claims.map((claim) => [claim.key, claim.sha256])));
    return null;
  }
  forgetPin(file.real);
  return problem;
}

/** The hash job of each file at `indices` (into manifest.files), in that order; files missing from `realPaths` are skipped. */
export async function planFiles(
  manifest: BundleManifest,
  claims: ReadonlyMap<string, readonly Claim[]>,
  realPaths: ReadonlyMap<string, string>,
  display: (relPath: string) => string,
  indices: readonly number[],
): Promise<PlannedFile[]> {
  const scheme = schemeOf(manifest);
  const plan = async (f: number): Promise<PlannedFile | null> => {
    const entry = manifest.files[f];
    const real = entry === undefined ? undefined : realPaths.get(entry.path);
    if (entry === undefined || real === undefined) return null;
    const shown = display(entry.path);
    const fileClaims = claims.get(entry.path) ?? [];
    let located: { claim: Claim; begin: number; end: number }[] = [];
    // Under the tree scheme every file is cut into segments at its header and tensors; a file
    // that is no safetensors file is one segment (its digest then names the problem).
    let segments = [{ begin: 0, end: entry.bytes }];
    if (fileClaims.length > 0 || scheme.kind === 'tree') {
      let tensors: SafetensorsFile | null = null;
      try {
        tensors = await SafetensorsFile.open(real, { displayName: shown });
      } catch (error) {
        if (!(error instanceof BundleError)) throw error;
      }
      if (tensors !== null) {
        const file = tensors;
        await file.close();
        segments = fileSegments(entry.bytes, file.dataStart, file.tensors);
        located = fileClaims.flatMap((claim) => {
          const header = file.tensor(claim.key);
          return header === undefined ? [] : [{ claim, begin: file.dataStart + header.begin, end: file.dataStart + header.end }];
        });
      }
    }
    const settleMs = process.env[REHASH_ENV] === 'always' ? 0 : PIN_MARGIN_MS;
    const job: HashJob = {
      path: real,
      spans: located.map((span) => ({ begin: span.begin, end: span.end, chunkBytes: span.claim.chunks?.bytes ?? null })),
      settleMs,
      settleMinBytes: SETTLE_MIN_BYTES,
    };
    const tree =
      scheme.kind === 'tree' ? planTreeJobs({ path: real, settleMs, settleMinBytes: SETTLE_MIN_BYTES }, entry.bytes, segments, scheme.chunkBytes) : null;
    return {
      index: f,
      real,
      shown,
      expected: entry.sha256,
      fileField: formatFieldPath(['files', f, 'sha256']),
      claims: located.map((span) => span.claim),
      spans: job.spans,
      parts: tree === null ? splitHashJob(job, entry.bytes) : tree.parts,
      tree,
    };
  };
  // The headers are read a few files at a time (the hashing waits for all of them).
  const planned: PlannedFile[] = [];
  for (let at = 0; at < indices.length; at += PLAN_AT_ONCE) {
    for (const file of await Promise.all(indices.slice(at, at + PLAN_AT_ONCE).map(plan))) if (file !== null) planned.push(file);
  }
  return planned;
}

function problemOf(file: PlannedFile, outcome: HashOutcome): Error | null {
  if (!outcome.ok) return new GuardedReadError(outcome.problem, file.shown, outcome.reason);
  if (outcome.sha256 !== file.expected) {
    // Name the first tensor whose bytes differ too: which boundary the change touched.
    const tensor = file.claims.find((claim, s) => outcome.spans[s] !== undefined && outcome.spans[s].sha256 !== claim.sha256);
    return new BundleError(
      'E_DIGEST',
      file.shown,
      file.fileField,
      `${MANIFEST_FILE_NAME} lists sha256 ${file.expected}, the file hashes to ${outcome.sha256} (the file changed after the manifest was written)` +
        (tensor === undefined ? '' : `; the first tensor whose bytes differ is "${tensor.key}" (${fieldOf(tensor)})`),
    );
  }
  for (const [s, claim] of file.claims.entries()) {
    const span = outcome.spans[s];
    if (span === undefined) continue;
    if (span.sha256 !== claim.sha256) {
      return new BundleError(
        'E_DIGEST',
        file.shown,
        fieldOf(claim),
        `tensor "${claim.key}": ${MANIFEST_FILE_NAME} lists sha256 ${claim.sha256}, its bytes hash to ${span.sha256}`,
      );
    }
    if (claim.chunks === null) continue;
    const wrong = claim.chunks.sha256.findIndex((digest, c) => span.chunks[c] !== digest);
    if (wrong !== -1) {
      return new BundleError(
        'E_DIGEST',
        file.shown,
        `${chunksFieldOf(claim)}[${wrong}]`,
        `tensor "${claim.key}", chunk ${wrong} (bytes ${wrong * claim.chunks.bytes}..${Math.min((wrong + 1) * claim.chunks.bytes, claim.byteLength)}): ` +
          `${MANIFEST_FILE_NAME} lists sha256 ${claim.chunks.sha256[wrong]}, its bytes hash to ${span.chunks[wrong] ?? '(no such chunk)'}`,
      );
    }
  }
  return null;
}

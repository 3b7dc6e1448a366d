// Judging a session's run with the gate's own judgement (judgeCase), on worker threads
// (judge-pool.ts), a slice of passes at a time: each Step judges only the pass it ran, so a long
// run costs the same per step at pass 300 as at pass 3, and opening a run hands its rows over
// slice by slice as they are judged. Verdicts of different passes are independent, so the
// per-slice results, concatenated in pass order, are exactly what the gate would say about the
// same native bundle — with one exception the code below handles: a contract's audio bounds also
// hold over the whole PCM stream, which no single slice sees. So once the slices are judged, the
// stream of every pass judged so far is judged too and, as the gate does for a run that ended
// there, a broken stream bound goes on the newest pass's row.
import type { EngineDescription } from '../engine-host/engine-description.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import { pinsToShare, type SharedPin } from '../core/bundle/file-pins.ts';
import type { PassOrderVerification } from '../core/bundle/verify-in-pass-order.ts';
import { resolveInsideBundle } from '../core/bundle/path-confinement.ts';
import { audioBoundsOf, type Contract, type PassEntry, type RunOutcome } from '../core/bundle/manifest-schema.ts';
import { applyAudioStream } from '../core/gate/audio-stream-verdicts.ts';
import type { RunStop } from '../core/gate/case-verdicts.ts';
import { emptyCounts, type LedgerEntry } from '../core/gate/gate-types.ts';
import type { BundleRef, PassSlice, SessionVerdict } from './judge-messages.ts';
import type { BoundaryMap } from '../core/compare/boundary-map.ts';
import type { ContractSource } from '../core/compare/contracts-file.ts';
import type { JudgePool, JudgedSlice } from './judge-pool.ts';

export interface JudgeContext {
  caseId: string;
  /** The reference and oracle as judged: the bundles opened, under the session's contract sources below. */
  reference: TraceBundle;
  oracle: TraceBundle | null;
  /** The contract sources the views above apply (null: the manifest's own), applied again by the workers. */
  referenceContracts: ContractSource | null;
  oracleContracts: ContractSource | null;
  description: EngineDescription;
  ledger: readonly LedgerEntry[];
  /** Filled in as comparisons are made (rows look contracts up here). */
  contracts: Record<string, Contract>;
}

/** The native side of a judgement: the bundle the session reads, and how a worker opens the same. */
export interface NativeSide {
  bundle: TraceBundle;
  kind: BundleRef['kind'];
  /** The map file `bundle` is seen through (an opened run of a port), applied again by the workers. */
  map?: BoundaryMap | null;
  /**
   * The run's files being verified pass by pass (an opened run, verify-in-pass-order.ts): a slice
   * is judged only once the files of its passes are verified, and the job fails with the
   * verification's error the moment any file fails. Absent: the bundle was verified when opened
   * (or is read with every tensor's sha256 checked, a capture's view).
   */
  verification?: PassOrderVerification;
}

// The real paths of a bundle's files, for the pins handed to the workers: resolved once per file
// and bundle, and only for the files a slice reads — a step's view of a capture in progress is a
// new bundle each step, and resolving every file of it again made a step cost the whole run.
const realPathsByBundle = new WeakMap<TraceBundle, Map<string, Promise<string | undefined>>>();

function realPathOf(bundle: TraceBundle, file: string): Promise<string | undefined> {
  let paths = realPathsByBundle.get(bundle);
  if (paths === undefined) {
    paths = new Map();
    realPathsByBundle.set(bundle, paths);
  }
  let real = paths.get(file);
  if (real === undefined) {
    // A file that cannot be resolved has no pin: it is hashed as it is read on the worker.
    real = resolveInsideBundle(bundle.dir, file, { file: bundle.manifestPath, field: 'files' }).catch(() => undefined);
    paths.set(file, real);
  }
  return real;
}

/**
 * Tensors at least this large are read by their pins on the workers; smaller ones are hashed as
 * they are read there (cheaper than the two stats a pinned read costs: a 50k-row run of 128-byte
 * tensors read by its pins spent its time in fstat).
 */
const PINNED_READ_MIN_BYTES = 64 * 1024;

/**
 * The pins this thread holds of the files a slice reads (its passes' files, each side), with the
 * tensors of those passes large enough to be read by their pins: the workers read those without
 * hashing them again; everything else is hashed as it is read there, as before pins were shared.
 */
async function slicePins(bundles: readonly (TraceBundle | null)[], passes: readonly number[]): Promise<SharedPin[]> {
  const wanted: { realPath: string; tensors: Set<string> }[] = [];
  for (const bundle of bundles) {
    if (bundle === null) continue;
    for (const pass of passes) {
      const entry = passEntry(bundle, pass);
      const realPath = entry === undefined ? undefined : await realPathOf(bundle, entry.file);
      if (entry === undefined || realPath === undefined) continue;
      const tensors = new Set(entry.boundaries.flatMap((boundary) => (boundary.byte_length >= PINNED_READ_MIN_BYTES ? [boundary.key] : [])));
      if (tensors.size > 0) wanted.push({ realPath, tensors });
    }
  }
  return pinsToShare(wanted);
}

export function bundleRef(bundle: TraceBundle, kind: BundleRef['kind'] = 'bundle'): BundleRef {
  return { kind, dir: bundle.dir, files: bundle.manifest.files.map(({ path, bytes, sha256 }) => ({ path, bytes, sha256 })) };
}

/**
 * A slice holds whole passes up to about this many rows; a pass with more is judged in parts.
 * Receiving a slice's verdicts is work on the serving thread, kept to a few milliseconds...
 */
const SLICE_ROWS = 500;
/**
 * ...and up to this many bytes of reference tensors (each read and hashed on both sides, and again
 * for the oracle): a 1,024-token prefill of a real model (~0.4 GB) is judged in parts on every
 * worker at once, and its first rows come after its first part rather than the whole pass.
 */
const SLICE_BYTES = 32 * 1024 * 1024;

/**
 * A slice whose files are not verified yet is judged before they are when its reference tensors
 * are at most this many bytes (its verdicts still wait for the verification): hashing them as they
 * are read on the worker costs little beside the first rows it brings forward. A larger slice waits
 * and reads by the pins its verification leaves (each byte hashed once).
 */
const SPECULATIVE_SLICE_BYTES = 4 * 1024 * 1024;

/** Bytes of the reference tensors a slice reads (a part of a pass counts its whole pass). */
function sliceBytes(reference: TraceBundle, slice: PassSlice): number {
  let bytes = 0;
  for (const pass of slice.passes) for (const boundary of passEntry(reference, pass)?.boundaries ?? []) bytes += boundary.byte_length;
  return bytes;
}

function passEntry(bundle: TraceBundle | null, index: number): PassEntry | undefined {
  const at = bundle?.passes[index];
  return at?.index === index ? at : bundle?.passes.find((pass) => pass.index === index);
}

/** The rows judgeCase considers for a pass: every boundary either side holds (its slots). */
function slotCount(reference: TraceBundle, native: TraceBundle | null, pass: number): number {
  const names = new Set((passEntry(reference, pass)?.boundaries ?? []).map((entry) => entry.name));
  for (const entry of passEntry(native, pass)?.boundaries ?? []) names.add(entry.name);
  return names.size;
}

/**
 * The passes cut into slices, in execution order: the first pass alone (the first rows appear as
 * soon as it, or its first part, is judged), then runs of whole passes up to SLICE_ROWS rows and
 * SLICE_BYTES bytes; a pass larger than either is cut into parts of its rows.
 */
export function passSlices(reference: TraceBundle, native: TraceBundle | null, passes: readonly number[]): PassSlice[] {
  const slices: { passes: number[]; range: PassSlice['range']; completes: boolean }[] = [];
  let rows = 0;
  let bytes = 0;
  for (const pass of passes) {
    const count = slotCount(reference, native, pass);
    const passBytes = (passEntry(reference, pass)?.boundaries ?? []).reduce((sum, boundary) => sum + boundary.byte_length, 0);
    const parts = Math.min(Math.max(1, count), Math.max(Math.ceil(count / SLICE_ROWS), Math.ceil(passBytes / SLICE_BYTES)));
    if (parts > 1) {
      for (let part = 0; part < parts; part++) {
        slices.push({
          passes: [pass],
          range: { from: Math.floor((part * count) / parts), to: Math.floor(((part + 1) * count) / parts) },
          completes: part === parts - 1,
        });
      }
      continue;
    }
    const last = slices.at(-1);
    if (last === undefined || last.range !== null || slices.length === 1 || rows + count > SLICE_ROWS || bytes + passBytes > SLICE_BYTES) {
      slices.push({ passes: [pass], range: null, completes: true });
      rows = count;
      bytes = passBytes;
    } else {
      last.passes.push(pass);
      rows += count;
      bytes += passBytes;
    }
  }
  return slices;
}

const audioBoundedByReference = new WeakMap<TraceBundle, Set<string>>();

/**
 * The boundaries whose reference contracts bound the audio: the only rows the stream judgement
 * reads. Found once per reference (a step of a long run must not walk every reference boundary).
 */
function audioBounded(reference: TraceBundle): Set<string> {
  const kept = audioBoundedByReference.get(reference);
  if (kept !== undefined) return kept;
  const names = new Set<string>();
  for (const pass of reference.passes) for (const entry of pass.boundaries) if (audioBoundsOf(entry.contract) !== null) names.add(entry.name);
  audioBoundedByReference.set(reference, names);
  return names;
}

export interface JudgedPasses {
  byPass: Map<number, SessionVerdict[]>;
  /** A broken audio stream bound changed a verdict already handed to onSlice. */
  revised: boolean;
}

export async function judgePasses(
  pool: JudgePool,
  context: JudgeContext,
  native: NativeSide | null,
  passes: readonly number[],
  stop: RunStop | null,
  nativeUnreadable: string | null = null,
  /**
   * Verdicts of the passes judged before these (the stream's earlier part); a function is called
   * only when a stream is judged (a step of a long run need not gather every row before it).
   */
  earlier: readonly SessionVerdict[] | (() => readonly SessionVerdict[]) = [],
  /** Each slice's verdicts, in pass order, as soon as they are judged. */
  onSlice: (slice: JudgedSlice) => void = () => undefined,
): Promise<JudgedPasses> {
  const byPass = new Map<number, SessionVerdict[]>(passes.map((pass) => [pass, []]));
  const judged: SessionVerdict[] = [];
  const bounded = audioBounded(context.reference);
  const judgements = await pool.judge({
    job: {
      caseId: context.caseId,
      reference: bundleRef(context.reference),
      oracle: context.oracle === null ? null : bundleRef(context.oracle),
      native: native === null ? null : bundleRef(native.bundle, native.kind),
      views: { reference: context.referenceContracts, oracle: context.oracleContracts, map: native?.map ?? null },
      description: context.description,
      ledger: context.ledger,
      stop,
      nativeUnreadable,
    },
    slices: passSlices(context.reference, native?.bundle ?? null, passes),
    onSlice: (slice) => {
      Object.assign(context.contracts, slice.contracts);
      for (const verdict of slice.verdicts) {
        byPass.get(verdict.pass)?.push(verdict);
        judged.push(verdict);
      }
      onSlice(slice);
    },
    ready: async (slice) => {
      const verification = native?.verification;
      // A small slice whose run files are not verified yet is judged at once, the run's tensors
      // hashed as they are read on the worker (the reference's and oracle's, verified when they
      // were opened, read by their pins), while its files are verified here: the first rows of a
      // run cost the longer of the two, not their sum. It is handed over only once they are (verified).
      if (verification !== undefined && !verification.isVerified(slice.passes) && sliceBytes(context.reference, slice) <= SPECULATIVE_SLICE_BYTES)
        return slicePins([context.reference, context.oracle], slice.passes);
      await verification?.whenVerified(slice.passes);
      return slicePins([context.reference, context.oracle, native?.bundle ?? null], slice.passes);
    },
    ...(native?.verification === undefined
      ? {}
      : { verified: (slice: PassSlice) => native.verification?.whenFilesVerified(slice.passes) ?? Promise.resolve() }),
    ...(native?.verification === undefined ? {} : { until: native.verification.done }),
    audioRows: () =>
      native === null || nativeUnreadable !== null || bounded.size === 0
        ? null
        : [...(typeof earlier === 'function' ? earlier() : earlier), ...judged].filter((verdict) => bounded.has(verdict.boundary)),
  });
  // Counts are recomputed from the rows by the session; applyAudioStream's are not kept.
  const scratch = emptyCounts();
  let revised = false;
  for (const stream of judgements) {
    if (!byPass.has(stream.verdictPass) || stream.passed) continue;
    applyAudioStream(judged, scratch, stream);
    revised = true;
  }
  return { byPass, revised };
}

/**
 * The boundary order every pass of the reference agrees with: the passes record different
 * subsets (text passes lack the audio boundaries), so the order of first appearance can put a
 * late-appearing boundary after ones it precedes. Boundaries consecutive in a pass give an edge;
 * a topological sort (ties broken by first appearance) merges them. Never throws: a pair the
 * passes order both ways keeps first-appearance order.
 */
function mergedOrder(reference: TraceBundle): string[] {
  const first = new Map<string, number>();
  const after = new Map<string, Set<string>>();
  const before = new Map<string, number>();
  for (const pass of reference.passes) {
    pass.boundaries.forEach((entry, i) => {
      if (!first.has(entry.name)) {
        first.set(entry.name, first.size);
        after.set(entry.name, new Set());
        before.set(entry.name, 0);
      }
      const previous = pass.boundaries[i - 1]?.name;
      if (previous === undefined || after.get(previous)?.has(entry.name)) return;
      after.get(previous)?.add(entry.name);
      before.set(entry.name, (before.get(entry.name) ?? 0) + 1);
    });
  }
  const order: string[] = [];
  const done = new Set<string>();
  const byFirst = [...first.keys()];
  while (order.length < byFirst.length) {
    // The earliest-seen boundary with nothing left before it; on a cycle, the earliest-seen one left.
    const next = byFirst.find((name) => !done.has(name) && (before.get(name) ?? 0) === 0) ?? byFirst.find((name) => !done.has(name));
    if (next === undefined) break;
    done.add(next);
    order.push(next);
    for (const name of after.get(next) ?? []) before.set(name, (before.get(name) ?? 0) - 1);
  }
  return order;
}

/**
 * A catalogue for judging a run opened without its engine: the reference's boundaries in the
 * order every pass agrees with, each expected on every pass the reference records it. So a
 * boundary the reference has and the run lacks is a FAIL (missing), never excused as "not
 * emitted"; boundaries only the run has are gaps (not in the catalogue). Fail-closed where the
 * engine's own catalogue is unknown.
 */
export function catalogueFromReference(reference: TraceBundle): EngineDescription {
  // Made once per reference (a walk of every boundary of every pass): each run opened against it
  // asks again, on the thread that serves the app, while the run's first rows are awaited.
  let catalogue = cataloguesByReference.get(reference);
  if (catalogue === undefined) {
    catalogue = buildCatalogue(reference);
    cataloguesByReference.set(reference, catalogue);
  }
  return catalogue;
}

const cataloguesByReference = new WeakMap<TraceBundle, EngineDescription>();

function buildCatalogue(reference: TraceBundle): EngineDescription {
  const entries = new Map<string, EngineDescription['boundaries'][number]>();
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) {
      if (entries.has(entry.name)) continue;
      entries.set(entry.name, {
        name: entry.name,
        stage: entry.stage,
        dtype: entry.dtype,
        shape: [...entry.shape],
        emit: 'every_pass',
        injectable: false,
        doc: '',
      });
    }
  }
  return {
    abi_version: 1,
    engine: { name: 'unknown (opened run)', version: '', build_id: '' },
    model: {},
    inputs: [],
    boundaries: mergedOrder(reference).flatMap((name) => entries.get(name) ?? []),
    options: [],
  };
}

const STATUS_WORDS: Readonly<Record<RunOutcome['status'], string>> = {
  completed: 'the run completed',
  engine_error: 'the engine returned an error',
  crashed: 'the engine crashed',
  timeout: 'the engine timed out',
  aborted: 'the run was aborted',
};

/** One sentence naming how a run ended: what happened, in which pass, after which boundary. */
export function describeStop(status: RunOutcome['status'], pass: number, kind: string, lastBoundary: string | null, detail: string): string {
  const where = lastBoundary === null ? 'before its first boundary' : `after boundary ${lastBoundary}`;
  return `${STATUS_WORDS[status]} in pass ${pass} (${kind}), ${where}${detail === '' ? '' : `: ${detail}`}`;
}

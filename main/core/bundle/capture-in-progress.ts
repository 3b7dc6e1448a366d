// A read-only view of a native capture that is still being written: the app judges each pass as
// soon as it is sealed, long before the capture finishes and writes manifest.json. The view is
// built from what the writer has already made durable — the journal's header and pass seals, and
// the sealed pass-NNN.safetensors files — into the manifest the finished bundle would have (same
// builder, buildNativeManifest), and opened with the reader's own checks. The pass being written
// (a pass_begin without its seal, its spill) is not part of the view.
//
// A view is opened again after every pass, so it grows (CaptureInProgressReader): each open reads
// only the journal's bytes past those it read before, validates only the passes sealed since, and
// reads only their files' headers — a step costs what it sealed, not the whole run so far. What
// it read before is not taken on trust: the journal must still hold a line end where the last
// read stopped (an append-only file that was rewritten is read again from its start), and every
// earlier file is stat'ed: one whose identity moved since its header was checked is checked again
// in full (bundle-reader.ts grownFrom), so a changed earlier pass fails with the error naming it.
//
// The last view is the finished capture itself: once the journal is gone and manifest.json
// written, the view is opened from that manifest, validated in full but for the entries the view
// before validated, which must be byte for byte the same JSON (their sha256) and are then the
// earlier view's own objects, so the finished bundle too grows from the view before rather than
// being opened afresh (every pass file's header read again, the whole run). A finished manifest
// whose entry of an earlier pass (or whose inputs) differs from the one the view validated, and
// the passes were judged from, is refused (E_JOURNAL naming manifest.json and the first field that
// differs): the rows shown would not be the finished bundle's.
//
// The finished manifest of a long run is tens of MB of JSON. The serving thread's reader has it
// read elsewhere (FinishedManifestSource: a judging worker, judge-pool.ts finishedCapture) and
// receives only the head, the digests of the entries and the entries it did not validate.
//
// The journal is read, never written: the capture's owner (possibly another process) keeps
// appending to it. A line is only trusted once its newline is on disk (parseJournal).
// nextTurn: a turn of the event loop (its I/O callbacks run, the app's socket among them).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { open as openFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GuardedReadError, readRegularFile } from '../io/guarded-read.ts';
import { openBundleFromManifest, readManifestText, type OpenBundleOptions, type TraceBundle } from './bundle-reader.ts';
import { JOURNAL_FILE_NAME, MAX_JOURNAL_BYTES, parseJournal, type JournalHeader, type JournalLine } from './capture-journal.ts';
import { BundleError } from './errors.ts';
import { recordManifestDigest } from './file-pins.ts';
import { MANIFEST_FILE_NAME, manifestJsonValue, parseManifest, type BundleManifest, type PassEntry, type RunOutcome } from './manifest-schema.ts';
import { boundaryOfRecord, buildNativeManifest, type SealedPass } from './native-manifest.ts';

/** The run outcome a view of an unfinished capture carries: not an ending, a statement that there is none yet. */
function inProgressOutcome(sealed: readonly SealedPass[]): RunOutcome {
  const last = sealed.at(-1);
  return {
    status: 'aborted',
    message: `capture in progress: a read-only view of ${sealed.length} sealed pass${sealed.length === 1 ? '' : 'es'}, not a finished bundle`,
    last_pass: last?.index ?? null,
    last_boundary: last?.boundaries.at(-1)?.name ?? null,
  };
}

/** The entries of the last view, validated: what the next view (or the finished manifest) is known against. */
interface KnownEntries {
  /** The manifest's pass entries, validated, each kept as the same object while the view grows. */
  readonly passes: PassEntry[];
  /**
   * sha256 of each pass entry's JSON as built for the manifest (buildNativeManifest, which also
   * writes the finished capture's manifest.json): how the finished manifest's entries are known
   * again as the ones validated here.
   */
  readonly passDigests: readonly string[];
  /** The same of the manifest's inputs. */
  readonly inputsDigest: string;
  /** The validated manifest but its passes. */
  readonly head: BundleManifest;
}

/**
 * The finished manifest as read and validated elsewhere (a judging worker), for a reader that
 * validated the first `knownPasses` pass entries in its views: everything but the passes, the
 * sha256 of every pass entry's JSON and of the inputs' (as jsonDigest), the entries from
 * `knownPasses` on (validated there against the whole manifest), and the manifest file's real
 * path and sha256 (for the closing check, evidence-unchanged.ts).
 */
export interface FinishedManifestRead {
  readonly head: Omit<BundleManifest, 'passes'>;
  readonly passDigests: readonly string[];
  readonly inputsDigest: string;
  /** The pass entries from `knownPasses` on. */
  readonly passes: readonly PassEntry[];
  readonly real: string;
  readonly sha256: string;
}

/** Reads and validates a finished capture's manifest.json off this thread (the reader's `finishedElsewhere`). */
export type FinishedManifestSource = (knownPasses: number) => Promise<FinishedManifestRead>;

/** What the journal held when it was last read. */
interface JournalState extends KnownEntries {
  readonly device: number;
  readonly inode: number;
  /** Bytes of complete lines read (the next read starts here). */
  readonly bytes: number;
  /** Lines read (for the line numbers of messages). */
  readonly lines: number;
  readonly header: JournalHeader;
  readonly kinds: ReadonlyMap<number, SealedPass['kind']>;
  readonly sealed: readonly SealedPass[];
}

/**
 * The views of one capture in progress, each opened from the last: open() gives the sealed passes
 * now, reading and checking only what was sealed since the previous open(); once the capture is
 * finished, the finished bundle (its manifestPath manifest.json), grown from the last view.
 */
export class CaptureInProgressReader {
  private state: JournalState | null = null;
  /** The last view's entries, whether read from the journal or from the finished manifest. */
  private known: KnownEntries | null = null;
  private last: TraceBundle | null = null;
  /** The finished manifest's digests, once the view is the finished capture (finishedRead). */
  private finished: FinishedManifestRead | null = null;
  private pending: Promise<unknown> = Promise.resolve();
  readonly journalPath: string;

  /**
   * `finishedElsewhere`: where the finished manifest is read and validated, when not on this
   * thread (the session's serving thread hands it to a judging worker).
   */
  constructor(
    readonly dir: string,
    private readonly options: Omit<OpenBundleOptions, 'grownFrom'> = { verify: 'none' },
    private readonly finishedElsewhere: FinishedManifestSource | null = null,
  ) {
    this.journalPath = join(dir, JOURNAL_FILE_NAME);
  }

  /**
   * Once the last open gave the finished capture: what a reader elsewhere that validated the first
   * `knownPasses` entries needs of it (FinishedManifestRead); null before.
   */
  finishedRead(knownPasses: number): FinishedManifestRead | null {
    const finished = this.finished;
    if (finished === null) return null;
    return { ...finished, passes: this.known?.passes.slice(knownPasses) ?? [] };
  }

  /**
   * The sealed passes now, as a TraceBundle (its manifestPath is the journal), or the finished
   * bundle once the capture is finished (its manifestPath manifest.json). Opens run one after another.
   */
  open(): Promise<TraceBundle> {
    const next = this.pending.then(
      () => this.openNow(),
      () => this.openNow(),
    );
    this.pending = next.catch(() => undefined);
    return next;
  }

  private async openNow(): Promise<TraceBundle> {
    const { manifest, manifestPath } = await this.readManifest();
    const grownFrom = this.last !== null && (this.options.verify ?? 'files') === 'none' ? { grownFrom: this.last } : {};
    const bundle = await openBundleFromManifest(this.dir, manifest, manifestPath, { ...this.options, ...grownFrom });
    this.last = bundle;
    return bundle;
  }

  /**
   * The manifest of the sealed passes, from the journal's new bytes (or all of it, the first time
   * or when it was replaced); once the capture is finished (its journal gone, its manifest.json
   * written), the finished manifest (finishedManifest).
   */
  private async readManifest(): Promise<{ manifest: BundleManifest; manifestPath: string }> {
    const before = this.state;
    const info = await stat(this.journalPath).catch(() => null);
    const manifestPath = join(this.dir, MANIFEST_FILE_NAME);
    if (info === null && (await stat(manifestPath).catch(() => null)) !== null) {
      const before = this.last === null ? null : this.known;
      const manifest =
        this.finishedElsewhere === null
          ? await this.finishedManifest(before, manifestPath)
          : await this.finishedManifestFrom(this.finishedElsewhere, before, manifestPath);
      return { manifest, manifestPath };
    }
    this.finished = null;
    const grows =
      before !== null &&
      info !== null &&
      info.dev === before.device &&
      info.ino === before.inode &&
      info.size >= before.bytes &&
      (await this.endsLine(before.bytes));
    if (!grows) this.last = null;
    const from = grows ? before : null;
    const { text, device, inode } = from === null ? await this.readWhole() : await this.readFrom(from.bytes);
    const { lines, completeBytes } = parseJournal(text, this.journalPath, (from?.lines ?? 0) + 1);
    const header = from?.header ?? headerOf(lines[0], this.journalPath);
    const kinds = new Map(from?.kinds);
    const sealed = [...(from?.sealed ?? [])];
    const fresh = from === null ? lines.slice(1) : lines;
    const firstFresh = (from?.lines ?? 1) + 1;
    fresh.forEach((line, i) => addLine(kinds, sealed, line, `line ${firstFresh + i}`, this.journalPath));
    const earlier = from?.passes ?? [];
    const validated = from !== null && sealed.length === from.sealed.length ? null : validatedView(header, sealed, earlier.length, this.journalPath);
    const passes = validated === null ? earlier : [...earlier, ...validated.manifest.passes.slice(earlier.length)];
    const passDigests = validated === null ? (from as JournalState).passDigests : [...(from?.passDigests ?? []), ...validated.digests];
    const inputsDigest = validated?.inputsDigest ?? (from as JournalState).inputsDigest;
    const head = validated === null ? (from as JournalState).head : { ...validated.manifest, passes: [] };
    this.state = {
      device,
      inode,
      bytes: (from?.bytes ?? 0) + completeBytes,
      lines: firstFresh - 1 + fresh.length,
      header,
      kinds,
      sealed,
      passes,
      passDigests,
      inputsDigest,
      head,
    };
    this.known = this.state;
    return { manifest: { ...head, passes }, manifestPath: this.journalPath };
  }

  /**
   * The finished capture's manifest.json, validated as readManifest validates it (the same reads,
   * schema and rules), where each pass entry (and the inputs) the view before validated must be
   * exactly the JSON it validated (the same sha256; refused otherwise: knownEntriesAgree) and stands
   * in with its boundaries left out, and is then the entry validated before, the same object: so
   * the bundle opened from it grows from the last view (bundle-reader.ts grownFrom: its files
   * checked again only where their identity moved), and the finish costs a parse of the manifest,
   * not every pass file's header read again. The entries after the view's are validated in full.
   */
  private async finishedManifest(before: KnownEntries | null, manifestPath: string): Promise<BundleManifest> {
    // Where this runs on a thread that serves an app (openersHere), it gives the event loop a turn
    // between its parts and between slices of the entries' digests; the session's serving thread
    // has it done on a judging worker instead (finishedManifestFrom).
    const { text, real, sha256 } = await readManifestText(this.dir, manifestPath);
    await nextTurn();
    const raw = manifestJsonValue(text, manifestPath);
    await nextTurn();
    const rawPasses = isRecord(raw) && Array.isArray(raw['passes']) ? (raw['passes'] as unknown[]) : null;
    const digests = rawPasses === null ? [] : await jsonDigestsInSlices(rawPasses);
    const inputsDigest = isRecord(raw) ? jsonDigest(raw['inputs']) : '';
    if (before !== null && rawPasses !== null && isRecord(raw)) {
      knownEntriesAgree(before, { passDigests: digests, inputsDigest }, manifestPath, (p) => ({ finished: rawPasses[p], known: before.passes[p] }), {
        finished: raw['inputs'],
        known: before.head.inputs,
      });
    }
    const known = (p: number): boolean => before !== null && p < before.passes.length;
    const standIns = rawPasses?.map((pass, p) => (known(p) && isRecord(pass) ? { ...pass, boundaries: [] } : pass));
    const parsed = parseManifest(standIns === undefined || !isRecord(raw) ? raw : { ...raw, passes: standIns }, manifestPath);
    await nextTurn();
    const passes = parsed.passes.map((pass, p) => (known(p) ? (before?.passes[p] ?? pass) : pass));
    const inputs = before !== null ? before.head.inputs : parsed.inputs;
    const { passes: _standIns, ...head } = { ...parsed, inputs };
    this.finishedWith({ head, passDigests: digests, inputsDigest, passes: [], real, sha256 }, passes);
    return { ...head, passes };
  }

  /**
   * The finished manifest read and validated by `source` (off this thread): only the head, the
   * digests and the entries after the view's cross over; the view's entries are used where their
   * digests agree (knownEntriesAgree), so this thread never parses the finished manifest.
   */
  private async finishedManifestFrom(source: FinishedManifestSource, before: KnownEntries | null, manifestPath: string): Promise<BundleManifest> {
    const knownPasses = before?.passes.length ?? 0;
    const read = await source(knownPasses);
    if (before !== null) knownEntriesAgree(before, read, manifestPath, null, null);
    if (read.passDigests.length !== knownPasses + read.passes.length) {
      throw new Error(
        `internal: the finished read of ${manifestPath} sent ${read.passes.length} entries after the ${knownPasses} known, for ${read.passDigests.length} passes`,
      );
    }
    const passes = [...(before?.passes ?? []), ...read.passes];
    const head = before === null ? read.head : { ...read.head, inputs: before.head.inputs };
    this.finishedWith({ ...read, head, passes: [] }, passes);
    return { ...head, passes };
  }

  /** The reader's state once its view is the finished capture. */
  private finishedWith(read: FinishedManifestRead, passes: PassEntry[]): void {
    // What the closing check (evidence-unchanged.ts) compares the manifest with, as openBundle records it.
    recordManifestDigest(read.real, read.sha256);
    // A journal that appears again later is a new capture: read from its first line.
    this.state = null;
    this.finished = read;
    this.known = { passes, passDigests: read.passDigests, inputsDigest: read.inputsDigest, head: { ...read.head, passes: [] } };
  }

  /** Whether the byte before `offset` is still a line end: an append-only journal read up to there was not rewritten. */
  private async endsLine(offset: number): Promise<boolean> {
    if (offset === 0) return true;
    const handle = await openFile(this.journalPath, 'r').catch(() => null);
    if (handle === null) return false;
    try {
      const byte = Buffer.alloc(1);
      const { bytesRead } = await handle.read(byte, 0, 1, offset - 1);
      return bytesRead === 1 && byte[0] === 0x0a;
    } finally {
      await handle.close();
    }
  }

  private async readWhole(): Promise<{ text: string; device: number; inode: number }> {
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(this.journalPath, MAX_JOURNAL_BYTES);
    } catch (cause) {
      if (cause instanceof GuardedReadError && cause.problem !== 'missing') {
        throw new BundleError('E_JOURNAL', this.journalPath, '(file)', `the capture journal ${cause.reason}`, { cause });
      }
      throw new BundleError('E_JOURNAL', this.journalPath, '(file)', 'cannot read the capture journal: no capture is in progress in this folder', { cause });
    }
    const info = await stat(this.journalPath).catch(() => null);
    return { text: bytes.toString('utf8'), device: info?.dev ?? -1, inode: info?.ino ?? -1 };
  }

  /** The journal's bytes from `offset` on (a regular file already read up to there, within the journal's cap). */
  private async readFrom(offset: number): Promise<{ text: string; device: number; inode: number }> {
    const handle = await openFile(this.journalPath, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_JOURNAL_BYTES) {
        throw new BundleError('E_JOURNAL', this.journalPath, '(file)', `the capture journal is not a regular file of at most ${MAX_JOURNAL_BYTES} bytes`);
      }
      const length = info.size - offset;
      const bytes = Buffer.alloc(Math.max(0, length));
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(bytes, read, length - read, offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return { text: bytes.subarray(0, read).toString('utf8'), device: info.dev, inode: info.ino };
    } finally {
      await handle.close();
    }
  }
}

function headerOf(first: JournalLine | undefined, journalPath: string): JournalHeader {
  if (first === undefined || first.t !== 'header') throw new BundleError('E_JOURNAL', journalPath, 'line 1', 'the header line is missing');
  return first;
}

function addLine(kinds: Map<number, SealedPass['kind']>, sealed: SealedPass[], line: JournalLine, where: string, journalPath: string): void {
  switch (line.t) {
    case 'header':
      throw new BundleError('E_JOURNAL', journalPath, where, 'a second header line');
    case 'pass_begin':
      kinds.set(line.pass, line.kind);
      return;
    case 'pass_sealed': {
      const kind = kinds.get(line.pass);
      if (kind === undefined || line.pass !== sealed.length)
        throw new BundleError('E_JOURNAL', journalPath, where, `seal of pass ${line.pass} does not match the journal`);
      sealed.push({ index: line.pass, kind, mode: line.mode, file: line.file, boundaries: line.boundaries.map(boundaryOfRecord) });
      return;
    }
  }
}

/**
 * The manifest of the sealed passes, validated with the reader's own rules (parseManifest, as for
 * a manifest.json on disk), where the first `earlier` passes — validated when they were sealed —
 * stand in with their boundaries left out: the passes sealed since are checked in full, and the
 * rules that span passes (indices in order, each file used once and listed) over the whole run.
 */
function validatedView(
  header: JournalHeader,
  sealed: readonly SealedPass[],
  earlier: number,
  journalPath: string,
): { manifest: BundleManifest; digests: string[]; inputsDigest: string } {
  const standIns = sealed.map((pass, p) => (p < earlier ? { ...pass, boundaries: [] } : pass));
  const built = buildNativeManifest(header, standIns, inProgressOutcome(sealed));
  return {
    manifest: parseManifest(JSON.parse(JSON.stringify(built)), journalPath),
    digests: built.passes.slice(earlier).map(jsonDigest),
    inputsDigest: jsonDigest(built.inputs),
  };
}

/** The finished and the validated value of an entry, for naming the first field where they differ. */
interface EntryPair {
  readonly finished: unknown;
  readonly known: unknown;
}

/**
 * Refuses a finished manifest whose entry of a pass the view validated (or whose inputs) is not
 * byte for byte the JSON validated (sha256 of each): those passes were judged from the view's
 * entries, so a finished bundle that says otherwise is not the evidence the rows were judged on.
 * E_JOURNAL names the manifest and the first field that differs (`entries` / `inputs` give both
 * values where this thread has them; otherwise the entry).
 */
export function knownEntriesAgree(
  known: Pick<KnownEntries, 'passDigests' | 'inputsDigest'>,
  finished: Pick<FinishedManifestRead, 'passDigests' | 'inputsDigest'>,
  manifestPath: string,
  entries: ((pass: number) => EntryPair) | null,
  inputs: EntryPair | null,
): void {
  const why = 'differs from the one sealed in the capture journal, which the rows were judged from: the finished capture is not the evidence judged';
  known.passDigests.forEach((digest, p) => {
    if (finished.passDigests[p] === digest) return;
    const pair = entries?.(p) ?? null;
    const where = pair === null ? null : firstDifference(pair.finished, pair.known);
    throw new BundleError('E_JOURNAL', manifestPath, `passes[${p}]${where ?? ''}`, `pass ${p}'s entry ${why}`);
  });
  if (finished.inputsDigest !== known.inputsDigest) {
    const where = inputs === null ? null : firstDifference(inputs.finished, inputs.known);
    throw new BundleError('E_JOURNAL', manifestPath, `inputs${where ?? ''}`, `the inputs ${why}`);
  }
}

/**
 * The path (`.field`, `[i]`) of the first place two JSON values differ, '' when they differ as a
 * whole; null when none is found (their JSON may still differ in the order of their keys).
 */
function firstDifference(a: unknown, b: unknown): string | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const inner = firstDifference(a[i], b[i]);
      if (inner !== null) return `[${i}]${inner}`;
    }
    return null;
  }
  if (isRecord(a) && isRecord(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const inner = firstDifference(a[key], b[key]);
      if (inner !== null) return `.${key}${inner}`;
    }
    return null;
  }
  return Object.is(a, b) ? null : '';
}

/** sha256 of a value's JSON (JSON.stringify: the same text for the same JSON value, keys in their order). */
function jsonDigest(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value) ?? 'undefined')
    .digest('hex');
}

/** How many characters of JSON one slice of jsonDigestsInSlices hashes before the event loop gets a turn (a few ms). */
export const DIGEST_SLICE_CHARS = 1 << 20;

/**
 * jsonDigest of each value, the same digests in the same order, hashed in slices of about
 * `sliceChars` characters of JSON with a turn of the event loop between slices.
 */
export async function jsonDigestsInSlices(values: readonly unknown[], sliceChars: number = DIGEST_SLICE_CHARS): Promise<string[]> {
  const digests: string[] = [];
  let chars = 0;
  for (const value of values) {
    if (chars >= sliceChars) {
      await nextTurn();
      chars = 0;
    }
    const json = JSON.stringify(value) ?? 'undefined';
    digests.push(createHash('sha256').update(json).digest('hex'));
    chars += json.length;
  }
  return digests;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Opens the sealed passes of the capture in progress in `dir` as a TraceBundle, once. Its
 * manifestPath is the journal (what the manifest was built from). By default files are not
 * re-hashed on open (every tensor's own sha256 is still checked on each read); a caller that
 * opens the view again after every pass keeps a CaptureInProgressReader instead. A capture already
 * finished (no journal, a manifest.json) is opened as the finished bundle.
 */
export async function openCaptureInProgress(dir: string, options: OpenBundleOptions = { verify: 'none' }): Promise<TraceBundle> {
  const { grownFrom: _ignored, ...rest } = options;
  return new CaptureInProgressReader(dir, rest).open();
}

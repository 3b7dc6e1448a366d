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
// written, the view is opened from that manifest, validated in full but for the entries whose JSON
// is byte for byte the one validated before (their sha256), which are the earlier view's own
// objects, so the finished bundle too grows from the view before rather than being opened afresh
// (every pass file's header read again, the whole run) — and still equals a fresh open of it.
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
  private pending: Promise<unknown> = Promise.resolve();
  readonly journalPath: string;

  constructor(
    readonly dir: string,
    private readonly options: Omit<OpenBundleOptions, 'grownFrom'> = { verify: 'none' },
  ) {
    this.journalPath = join(dir, JOURNAL_FILE_NAME);
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
      return { manifest: await this.finishedManifest(this.last === null ? null : this.known, manifestPath), manifestPath };
    }
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
   * schema and rules), where a pass entry (or the inputs) whose JSON is exactly the one this view
   * validated before (the same sha256) stands in with its boundaries left out, and is then the
   * entry validated before, the same object: so the bundle opened from it grows from the last view
   * (bundle-reader.ts grownFrom: its files checked again only where their identity moved), and the
   * finish costs a parse of the manifest, not every pass file's header read again. An entry that
   * differs in any byte of its JSON is validated in full and its file checked in full: the view
   * equals a fresh open of the finished capture.
   */
  private async finishedManifest(before: KnownEntries | null, manifestPath: string): Promise<BundleManifest> {
    // The finished read runs on the serving thread (the app's socket waits on it), so it gives the
    // event loop a turn between its parts and between slices of the entries' digests: no part
    // holds the thread for the whole manifest (at 10 GiB, a parse and digests of about 18 MB).
    const { text, real, sha256 } = await readManifestText(this.dir, manifestPath);
    await nextTurn();
    const raw = manifestJsonValue(text, manifestPath);
    await nextTurn();
    const rawPasses = isRecord(raw) && Array.isArray(raw['passes']) ? (raw['passes'] as unknown[]) : null;
    const digests = rawPasses === null ? [] : await jsonDigestsInSlices(rawPasses);
    const known = (p: number): boolean => before !== null && p < before.passes.length && digests[p] === before.passDigests[p];
    const standIns = rawPasses?.map((pass, p) => (known(p) && isRecord(pass) ? { ...pass, boundaries: [] } : pass));
    const parsed = parseManifest(standIns === undefined || !isRecord(raw) ? raw : { ...raw, passes: standIns }, manifestPath);
    await nextTurn();
    const passes = parsed.passes.map((pass, p) => (known(p) ? (before?.passes[p] ?? pass) : pass));
    const inputsDigest = isRecord(raw) ? jsonDigest(raw['inputs']) : '';
    const inputs = before !== null && inputsDigest === before.inputsDigest ? before.head.inputs : parsed.inputs;
    const head = { ...parsed, inputs, passes: [] };
    // What the closing check (evidence-unchanged.ts) compares the manifest with, as openBundle records it.
    recordManifestDigest(real, sha256);
    // A journal that appears again later is a new capture: read from its first line.
    this.state = null;
    this.known = { passes, passDigests: digests, inputsDigest, head };
    return { ...head, passes };
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

// NativeBundleWriter: writes a native trace bundle DURING a capture, from the engine host's
// worker thread, in a process that a segfault may kill at any instant. Everything is written
// synchronously and in an order that recovery can trust:
//   - a record is ONE self-describing frame (capture-frame.ts: name, stage, dtype, shape,
//     strides, data and a crc32 of it all) appended to the pass's spill, pass-NNN.spill, with
//     one write (or one copy into a shared mapping of it, see SpillLog): no journal line, no
//     hash, no allocation per record. A frame is in the spill once appendRecord returns; a frame
//     cut short by the death of the process fails its checksum and is dropped by recovery;
//   - except a large record from the capture pool (appendFrame, IN_PLACE_MIN_BYTES and more):
//     its data is written once, straight to its slot in pass-NNN.safetensors (created at the
//     pass's first such record with room for its header, pass-file-in-place.ts), hashed as it
//     goes, THEN a frame without data naming where it went and its digest is appended to the spill;
//   - endPass reads the spill back (page cache), checks every frame's checksum, writes
//     pass-NNN.safetensors (created exclusively; it counts once its seal is journaled) with each
//     tensor's sha256 computed as its bytes are copied (or, for a pass with records in place,
//     writes the spill's records to their slots and the header into its room), THEN journals the
//     seal with the pass's boundaries, THEN drops the spill (emptied and kept for the next pass's frames);
//   - finish writes manifest.json, THEN removes the journal (capture.journal.jsonl: header,
//     pass begins and seals).
// No fsync: the threat is the death of the process, and the kernel keeps what was written.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  describeSealed,
  FrameEncoder,
  FrameFieldError,
  frameIdentity,
  IN_PLACE_TRAILER_BYTES,
  inPlaceFrame,
  scanSpill,
  SpillReader,
  stampFrameChecksum,
  writePassFile,
  type SealBuffers,
  type SealedFrames,
  type SpillFrame,
  type WrittenPassFile,
} from './capture-frame.ts';
import { headerRoom, IN_PLACE_MIN_BYTES, InPlacePassFile } from './pass-file-in-place.ts';
import { POOL_FILE_NAME } from './capture-pool-layout.ts';
import { checkCaptureRecord, frameFieldError } from './capture-record-check.ts';
import {
  INPUTS_FILE_NAME,
  JOURNAL_FILE_NAME,
  JOURNAL_VERSION,
  journalLine,
  passFileName,
  spillFileName,
  type JournalHeader,
  type JournalLine,
} from './capture-journal.ts';
import { CAPTURE_LOCK_FILE_NAME } from './capture-lock.ts';
import { FileSpillLog, type SpillLog, type SpillLogFactory } from './capture-spill.ts';
import { DEFAULT_CHUNK_DIGEST_BYTES } from './chunk-digests.ts';
import { schemeOf, treeDeclaration, type DigestScheme } from './tree-digest.ts';
import { DTYPE_SIZE, DTypeSchema, elementCount, type DType } from './dtype.ts';
import { BundleError, formatFieldPath } from './errors.ts';
import {
  CaseSchema,
  KnownGapSchema,
  PassKindSchema,
  PassModeSchema,
  provenanceSchemaFor,
  RunOutcomeSchema,
  schemaError,
  ShapeSchema,
  withProvenanceSkeleton,
  type InputEntry,
  type PassKind,
  type PassMode,
  type RunOutcome,
} from './manifest-schema.ts';
import { boundaryOfRecord, buildNativeManifest, writeManifestFile, type SealedPass } from './native-manifest.ts';
import { recoverNativeBundle, type RecoveryRunOutcome } from './native-bundle-recovery.ts';
import { writeSafetensorsFile } from './safetensors-writer.ts';
import { issuesFromZod } from './zod-issues.ts';

export type { SpillLog, SpillLogFactory } from './capture-spill.ts';

export const CaptureInputSchema = z.strictObject({
  name: z.string().min(1),
  dtype: DTypeSchema,
  shape: ShapeSchema,
  /** Row-major little-endian bytes, or the same bytes base64-encoded (for a header sent as JSON). */
  data: z.union([z.custom<Uint8Array>((value) => value instanceof Uint8Array, { error: 'expected a Uint8Array' }), z.base64()]),
});

/** What a capture knows before its first pass. Provenance is checked here, not at finish. */
export const NativeCaptureHeaderSchema = z.strictObject({
  kind: z.literal('native'),
  case: CaseSchema,
  provenance: provenanceSchemaFor('native'),
  inputs: z.array(CaptureInputSchema),
  known_gaps: z.array(KnownGapSchema).optional(),
});
export type NativeCaptureHeader = z.input<typeof NativeCaptureHeaderSchema>;
/** The name the engine host uses for the same header. */
export type NativeBundleHeader = NativeCaptureHeader;

/** One boundary as the host hands it over. */
export interface CaptureRecord {
  readonly name: string;
  readonly stage: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** As the engine emitted them (elements). */
  readonly strides: readonly number[];
  /** Row-major logical bytes (the host gathers strided buffers first). */
  readonly data: Uint8Array;
}

export interface NativeBundleWriterOptions {
  /** Where the frames of each pass go. Default: FileSpillLog (one file per pass, one write per frame). */
  readonly spillLog?: SpillLogFactory;
}

interface OpenPass {
  readonly index: number;
  readonly kind: PassKind;
  readonly spillPath: string;
  /** Frames appended. */
  records: number;
  readonly names: Set<string>;
  /** Data bytes of the records appended: where the next one's slot begins in the pass file. */
  slot: number;
  /** The pass file, once a record went in place. */
  inPlace: InPlacePassFile | null;
}

export class NativeBundleWriter {
  readonly dir: string;
  private readonly header: JournalHeader;
  private journalFd: number | null;
  private readonly spill: SpillLog;
  private readonly encoder = new FrameEncoder();
  private readWindow: Buffer | undefined;
  private readonly sealBuffers: SealBuffers = {};
  private readonly sealed: SealedPass[] = [];
  private readonly scheme: DigestScheme;
  /** The largest header of a pass sealed so far: what the next pass file's header room is guessed from. */
  private largestHeader: number | null = null;
  /** An in-place frame is built here (the frame's header and its trailer); made at the first, grown as needed. */
  private inPlaceScratch = Buffer.alloc(0);
  private pass: OpenPass | null = null;
  /** The data bytes of the record between openRecord and commitRecord. */
  private openBytes = 0;
  /** The record between openRecord and commitRecord. */
  private openName: string | null = null;
  private lastPass = 0;
  private lastName: string | null = null;

  private constructor(dir: string, header: JournalHeader, journalFd: number, spill: SpillLog) {
    this.dir = dir;
    this.header = header;
    this.journalFd = journalFd;
    this.spill = spill;
    this.scheme = schemeOf(header);
  }

  /**
   * Starts a capture in `dir`, which must not exist or be empty (E_TARGET_NOT_EMPTY otherwise).
   * `header` is validated against NativeCaptureHeaderSchema (it may arrive as JSON from another
   * thread, input data then base64); the inputs are written to inputs.safetensors at once.
   */
  static create(dir: string, header: unknown, options: NativeBundleWriterOptions = {}): NativeBundleWriter {
    const blame = `${dir} (capture header)`;
    const raw = header !== null && typeof header === 'object' && !Array.isArray(header) ? withProvenanceSkeleton(header as Record<string, unknown>) : header;
    const parsed = NativeCaptureHeaderSchema.safeParse(raw);
    if (!parsed.success) throw schemaError(issuesFromZod(parsed.error, raw, 'E_MANIFEST_SCHEMA'), blame);
    const spec = parsed.data;

    const inputs = spec.inputs.map((input, i) => {
      const data = typeof input.data === 'string' ? new Uint8Array(Buffer.from(input.data, 'base64')) : input.data;
      const expected = elementCount(input.shape) * DTYPE_SIZE[input.dtype];
      if (data.byteLength !== expected) {
        throw new BundleError(
          'E_BYTE_LENGTH',
          blame,
          formatFieldPath(['inputs', i, 'data']),
          `${data.byteLength} bytes, but ${input.dtype} of shape [${input.shape.join(', ')}] needs ${expected}`,
        );
      }
      if (spec.inputs.findIndex((other) => other.name === input.name) !== i) {
        throw new BundleError('E_DUPLICATE_NAME', blame, formatFieldPath(['inputs', i, 'name']), `input "${input.name}" is given twice`);
      }
      return { key: input.name, dtype: input.dtype, shape: input.shape, data };
    });

    prepareEmptyTarget(dir);
    // Every digest in the tree scheme (tree-digest.ts): each byte hashed once, on the capture
    // writer's thread, the file's digest and its tensors' from the same pass.
    const scheme: DigestScheme = { kind: 'tree', chunkBytes: DEFAULT_CHUNK_DIGEST_BYTES };
    const written = writeSafetensorsFile(join(dir, INPUTS_FILE_NAME), inputs, { digestScheme: scheme });
    const inputEntries: InputEntry[] = inputs.map((input) => ({
      name: input.key,
      dtype: input.dtype,
      shape: input.shape,
      file: INPUTS_FILE_NAME,
      key: input.key,
      sha256: written.tensorDigests.get(input.key)?.sha256 ?? '',
    }));
    const journalHeader: JournalHeader = {
      t: 'header',
      journal_version: JOURNAL_VERSION,
      case: spec.case,
      provenance: spec.provenance,
      inputs: inputEntries,
      known_gaps: spec.known_gaps ?? [],
      inputs_file: { path: INPUTS_FILE_NAME, sha256: written.sha256, bytes: written.bytes },
      digests: treeDeclaration(scheme.chunkBytes),
    };
    const journalFd = openSync(join(dir, JOURNAL_FILE_NAME), 'ax');
    const writer = new NativeBundleWriter(dir, journalHeader, journalFd, options.spillLog?.() ?? new FileSpillLog());
    writer.journal(journalHeader);
    return writer;
  }

  /**
   * Seals what a dead capture left in `dir` into a valid bundle: unsealed passes are rebuilt
   * from the records fully present in their spill (a torn last record is dropped), and
   * manifest.json records `run`. last_pass / last_boundary, when omitted, are taken from the
   * last record that survived. The writing process must be dead. Returns the manifest path.
   */
  static recover(dir: string, run: RecoveryRunOutcome): string {
    return recoverNativeBundle(dir, run);
  }

  beginPass(index: number, kind: PassKind): void {
    this.requireOpen('beginPass');
    if (this.pass !== null) this.stateError('beginPass', `pass ${this.pass.index} is still open; call endPass first`);
    if (!PassKindSchema.safeParse(kind).success) this.stateError('beginPass', `kind must be "prefill" or "decode", got ${JSON.stringify(kind)}`);
    const expectedIndex = this.sealed.length;
    if (index !== expectedIndex) {
      throw new BundleError('E_PASS_ORDER', this.dir, 'beginPass.index', `expected pass ${expectedIndex} (passes are captured in order), got ${index}`);
    }
    const expectedKind = index === 0 ? 'prefill' : 'decode';
    if (kind !== expectedKind) {
      throw new BundleError('E_PASS_ORDER', this.dir, 'beginPass.kind', `pass ${index} must be a ${expectedKind}`);
    }
    const spillPath = join(this.dir, spillFileName(index));
    this.spill.begin(spillPath);
    this.pass = { index, kind, spillPath, records: 0, names: new Set(), slot: 0, inPlace: null };
    this.journal({ t: 'pass_begin', pass: index, kind });
  }

  /** Appends one boundary of the open pass: one frame, one append. Synchronous; no fsync, no file open. */
  appendRecord(record: CaptureRecord): void {
    const { name, stage, dtype, shape, strides, data } = record;
    const target = this.openRecordFor('appendRecord', name, stage, dtype, shape, strides, data);
    target.set(data);
    this.commitRecord();
  }

  /**
   * appendRecord in two steps, for a caller that copies the data itself (the engine worker
   * copies straight from the engine's memory): checks the record and returns the view its
   * `elementCount(shape) × size` row-major bytes must be written to; commitRecord then appends
   * it. A record opened and never committed is not written (the next open or endPass forgets it).
   */
  openRecord(name: string, stage: string, dtype: DType, shape: readonly number[], strides: readonly number[]): Uint8Array {
    return this.openRecordFor('openRecord', name, stage, dtype, shape, strides, null);
  }

  /** Appends the record opened by openRecord. Once it returns, the record survives a crash. */
  commitRecord(): void {
    const pass = this.pass;
    const name = this.openName;
    if (pass === null || name === null) return this.stateError('commitRecord', 'no record is open; call openRecord first');
    this.openName = null;
    const length = this.encoder.close();
    this.spill.append(this.encoder.bytes, length);
    pass.slot += this.openBytes;
    pass.records += 1;
    pass.names.add(name);
    this.lastPass = pass.index;
    this.lastName = name;
  }

  /**
   * Seals the open pass: pass-NNN.safetensors from the frames of the spill, the seal journaled,
   * the spill dropped. `mode` is the output the pass produced, null when it failed.
   */
  endPass(mode: PassMode | string | null): void {
    const pass = this.pass;
    if (pass === null) return this.stateError('endPass', 'no pass is open');
    const checkedMode = mode === null ? null : PassModeSchema.safeParse(mode);
    if (checkedMode !== null && !checkedMode.success)
      this.stateError('endPass', `mode must be a label of 1 to 64 characters or null, got ${JSON.stringify(mode)}`);
    const passMode: PassMode | null = checkedMode === null ? null : checkedMode.data;
    this.encoder.discard();
    this.openName = null;

    const reader = new SpillReader(this.spill.fd, this.spill.size, pass.spillPath, this.readWindow);
    this.readWindow = reader.buffer;
    const scan = scanSpill(reader, pass.index, false);
    if (scan.torn !== null || scan.frames.length !== pass.records) {
      throw new BundleError(
        'E_JOURNAL',
        pass.spillPath,
        '(frames)',
        `holds ${scan.frames.length} whole frames where ${pass.records} were appended${scan.torn === null ? '' : ` (${scan.torn.reason} at byte ${scan.torn.offset})`}: the spill was changed behind the writer`,
      );
    }
    const sealed = this.seal(pass, reader, scan.frames);
    this.journal({ t: 'pass_sealed', pass: pass.index, mode: passMode, file: sealed.file, boundaries: sealed.boundaries });
    this.spill.end();
    this.sealed.push({ index: pass.index, kind: pass.kind, mode: passMode, file: sealed.file, boundaries: sealed.boundaries.map(boundaryOfRecord) });
    this.pass = null;
  }

  /** Writes the pass file from the spill's frames: in place when records went there, else from the spill alone. */
  private seal(pass: OpenPass, reader: SpillReader, frames: readonly SpillFrame[]): SealedFrames {
    const fileName = passFileName(pass.index);
    const inPlace = pass.inPlace;
    let written: WrittenPassFile;
    if (inPlace === null) {
      written = writePassFile(join(this.dir, fileName), reader, frames, this.sealBuffers, this.scheme);
    } else {
      try {
        written = inPlace.seal(reader, frames) ?? inPlace.relayout(reader, frames, this.sealBuffers);
      } finally {
        inPlace.close();
        pass.inPlace = null;
      }
    }
    this.largestHeader = Math.max(this.largestHeader ?? 0, written.headerBytes);
    return describeSealed(fileName, frames, written);
  }

  /** Writes manifest.json with the run outcome, removes the journal; returns the manifest path. */
  finish(run: RunOutcome): string {
    this.requireOpen('finish');
    if (this.pass !== null) this.stateError('finish', `pass ${this.pass.index} is still open; call endPass first`);
    const parsed = RunOutcomeSchema.safeParse(run);
    if (!parsed.success) throw schemaError(issuesFromZod(parsed.error, run, 'E_RUN', ['run']), `${this.dir} (finish)`);
    this.spill.close(); // a spill log kept for reuse goes before the bundle is complete
    const manifestPath = writeManifestFile(this.dir, buildNativeManifest(this.header, this.sealed, parsed.data));
    this.closeJournal();
    unlinkSync(join(this.dir, JOURNAL_FILE_NAME));
    return manifestPath;
  }

  /** The last record appended: what a crash report names. */
  get lastBoundary(): { pass: number; name: string } | null {
    return this.lastName === null ? null : { pass: this.lastPass, name: this.lastName };
  }

  /**
   * Closes the files without sealing anything, leaving the journal and the open pass's spill
   * for `recover` (what a crash leaves behind, minus the crash). Idempotent.
   */
  close(): void {
    this.encoder.discard();
    this.openName = null;
    this.pass?.inPlace?.close(); // the records written in place stay for recovery
    this.pass = null;
    this.spill.close();
    this.closeJournal();
  }

  /** Checks a record (capture-record-check.ts) and lays out its frame. */
  private openRecordFor(
    call: string,
    name: string,
    stage: string,
    dtype: DType,
    shape: readonly number[],
    strides: readonly number[],
    data: Uint8Array | null,
  ): Uint8Array {
    const pass = this.pass;
    if (pass === null) return this.stateError(call, 'no pass is open; call beginPass first');
    this.openName = null;
    const file = join(this.dir, passFileName(pass.index));
    const byteLength = checkCaptureRecord(file, pass, name, stage, dtype, shape, strides, data);
    let target: Uint8Array;
    try {
      target = this.encoder.open(pass.index, pass.records, dtype, shape, strides, name, stage, byteLength);
    } catch (error) {
      if (error instanceof FrameFieldError) throw frameFieldError(file, name, error.field, error.message);
      throw error;
    }
    this.openName = name;
    this.openBytes = byteLength;
    return target;
  }

  /**
   * Appends a frame laid out elsewhere, from a record checked there (checkCaptureRecord): the
   * capture pool's, whose checksum is left 0 by the engine's thread and computed here. It must
   * be the next record of the open pass. `frame[0, length)`; its checksum is stamped in place.
   */
  appendFrame(frame: Buffer, length: number): void {
    const pass = this.pass;
    if (pass === null) return this.stateError('appendFrame', 'no pass is open; call beginPass first');
    const identity = frameIdentity(frame, length);
    if (identity === null || identity.pass !== pass.index || identity.seq !== pass.records || pass.names.has(identity.name)) {
      const said = identity === null ? 'is not a whole frame' : `is record ${identity.seq} (${JSON.stringify(identity.name)}) of pass ${identity.pass}`;
      throw new BundleError(
        'E_JOURNAL',
        join(this.dir, POOL_FILE_NAME),
        'frame',
        `${said} where record ${pass.records} of pass ${pass.index} was due: the capture pool was changed behind the writer`,
      );
    }
    const headerBytes = length - identity.dataBytes;
    if (this.scheme.kind === 'tree' && identity.dataBytes >= IN_PLACE_MIN_BYTES) {
      // Written once, to its place in the pass file; the spill gets the frame without its data.
      pass.inPlace ??= InPlacePassFile.create(join(this.dir, passFileName(pass.index)), headerRoom(this.largestHeader), this.scheme.chunkBytes);
      const placed = pass.inPlace.write(frame.subarray(headerBytes, length), pass.slot);
      if (this.inPlaceScratch.length < headerBytes + IN_PLACE_TRAILER_BYTES)
        this.inPlaceScratch = Buffer.allocUnsafeSlow(2 * (headerBytes + IN_PLACE_TRAILER_BYTES));
      this.spill.append(this.inPlaceScratch, inPlaceFrame(frame, headerBytes, placed.fileOffset, placed.digest, this.inPlaceScratch));
    } else {
      stampFrameChecksum(frame, length);
      this.spill.append(frame, length);
    }
    pass.slot += identity.dataBytes;
    pass.records += 1;
    pass.names.add(identity.name);
    this.lastPass = pass.index;
    this.lastName = identity.name;
  }

  private journal(line: JournalLine): void {
    const fd = this.journalFd;
    if (fd === null) return this.stateError('journal', 'the capture is closed');
    const bytes = Buffer.from(journalLine(line), 'utf8');
    let done = 0;
    // The journal is opened for appending: position null appends.
    while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done, null);
  }

  private closeJournal(): void {
    if (this.journalFd !== null) closeSync(this.journalFd);
    this.journalFd = null;
  }

  private requireOpen(call: string): void {
    if (this.journalFd === null) this.stateError(call, 'the capture is already finished or closed');
  }

  private stateError(call: string, message: string): never {
    throw new BundleError('E_WRITER_STATE', this.dir, call, message);
  }
}

/** Creates `dir`, or accepts it if it exists empty; anything else is E_TARGET_NOT_EMPTY. */
function prepareEmptyTarget(dir: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new BundleError('E_TARGET_NOT_EMPTY', dir, '(folder)', 'exists and is not a folder');
    // The capture lock (capture-lock.ts) is taken in the folder before the capture starts.
    const entries = readdirSync(dir).filter((entry) => entry !== CAPTURE_LOCK_FILE_NAME);
    if (entries.length > 0) {
      throw new BundleError(
        'E_TARGET_NOT_EMPTY',
        dir,
        '(folder)',
        `is not empty (${entries.length} entries, e.g. ${entries[0]}); captures write into a fresh folder and never overwrite a bundle`,
      );
    }
    return;
  }
  mkdirSync(dir, { recursive: true });
}

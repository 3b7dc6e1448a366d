// NativeBundleWriter: writes a native trace bundle DURING a capture, from the engine host's
// worker thread, in a process that a segfault may kill at any instant. Everything is written
// synchronously and in an order that recovery can trust:
//   - each record's bytes are appended to pass-NNN.spill, THEN one journal line describes them
//     (offset, length, sha256), so a journal line always points at bytes already written;
//   - endPass copies the spill into pass-NNN.safetensors (temp name, linked into place), THEN
//     journals the seal, THEN deletes the spill;
//   - finish writes manifest.json, THEN removes the journal.
// No fsync: the threat is the death of the process, and the kernel keeps what was written.
// File descriptors stay open for the whole pass; a record costs two write calls and one sha256.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  INPUTS_FILE_NAME,
  JOURNAL_FILE_NAME,
  JOURNAL_VERSION,
  journalLine,
  passFileName,
  spillFileName,
  type JournalHeader,
  type JournalLine,
  type JournalRecord,
} from './capture-journal.ts';
import { sha256Bytes } from './digest.ts';
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
import { writeAllSync, writeSafetensorsFile } from './safetensors-writer.ts';
import { issuesFromZod } from './zod-issues.ts';

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

interface OpenPass {
  readonly index: number;
  readonly kind: PassKind;
  readonly spillFd: number;
  readonly spillPath: string;
  spillBytes: number;
  readonly records: JournalRecord[];
  readonly names: Set<string>;
}

export class NativeBundleWriter {
  readonly dir: string;
  private readonly header: JournalHeader;
  private journalFd: number | null;
  private readonly sealed: SealedPass[] = [];
  private pass: OpenPass | null = null;
  private lastRecord: { pass: number; name: string } | null = null;

  private constructor(dir: string, header: JournalHeader, journalFd: number) {
    this.dir = dir;
    this.header = header;
    this.journalFd = journalFd;
  }

  /**
   * Starts a capture in `dir`, which must not exist or be empty (E_TARGET_NOT_EMPTY otherwise).
   * `header` is validated against NativeCaptureHeaderSchema (it may arrive as JSON from another
   * thread, input data then base64); the inputs are written to inputs.safetensors at once.
   */
  static create(dir: string, header: unknown): NativeBundleWriter {
    const blame = `${dir} (capture header)`;
    const raw = header !== null && typeof header === 'object' && !Array.isArray(header) ? withProvenanceSkeleton(header as Record<string, unknown>) : header;
    const parsed = NativeCaptureHeaderSchema.safeParse(raw);
    if (!parsed.success) throw schemaError(issuesFromZod(parsed.error, raw, 'E_MANIFEST_SCHEMA'), blame);
    const spec = parsed.data;

    const inputs = spec.inputs.map((input, i) => {
      const data = typeof input.data === 'string' ? new Uint8Array(Buffer.from(input.data, 'base64')) : input.data;
      const expected = elementCount(input.shape) * DTYPE_SIZE[input.dtype];
      if (data.byteLength !== expected) {
        throw new BundleError('E_BYTE_LENGTH', blame, formatFieldPath(['inputs', i, 'data']), `${data.byteLength} bytes, but ${input.dtype} of shape [${input.shape.join(', ')}] needs ${expected}`);
      }
      if (spec.inputs.findIndex((other) => other.name === input.name) !== i) {
        throw new BundleError('E_DUPLICATE_NAME', blame, formatFieldPath(['inputs', i, 'name']), `input "${input.name}" is given twice`);
      }
      return { key: input.name, dtype: input.dtype, shape: input.shape, data };
    });

    prepareEmptyTarget(dir);
    const written = writeSafetensorsFile(join(dir, INPUTS_FILE_NAME), inputs);
    const inputEntries: InputEntry[] = inputs.map((input) => ({
      name: input.key,
      dtype: input.dtype,
      shape: input.shape,
      file: INPUTS_FILE_NAME,
      key: input.key,
      sha256: sha256Bytes(input.data),
    }));
    const journalHeader: JournalHeader = {
      t: 'header',
      journal_version: JOURNAL_VERSION,
      case: spec.case,
      provenance: spec.provenance,
      inputs: inputEntries,
      known_gaps: spec.known_gaps ?? [],
      inputs_file: { path: INPUTS_FILE_NAME, sha256: written.sha256, bytes: written.bytes },
    };
    const journalFd = openSync(join(dir, JOURNAL_FILE_NAME), 'ax');
    const writer = new NativeBundleWriter(dir, journalHeader, journalFd);
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
    const spillFd = openSync(spillPath, 'wx+'); // read back at endPass
    this.pass = { index, kind, spillFd, spillPath, spillBytes: 0, records: [], names: new Set() };
    this.journal({ t: 'pass_begin', pass: index, kind });
  }

  /** Appends one boundary of the open pass. Synchronous; no fsync, no file open. */
  appendRecord(record: CaptureRecord): void {
    const pass = this.pass;
    if (pass === null) return this.stateError('appendRecord', 'no pass is open; call beginPass first');
    const { name, stage, dtype, shape, strides, data } = record;
    const file = join(this.dir, passFileName(pass.index));
    const field = (part: string): string => `record ${JSON.stringify(name)}.${part}`;
    // Hand-written checks rather than zod: this runs hundreds of times per pass.
    if (typeof name !== 'string' || name.length === 0) throw new BundleError('E_RECORD', file, 'record.name', 'expected a non-empty string');
    if (typeof stage !== 'string' || stage.length === 0) throw new BundleError('E_RECORD', file, field('stage'), 'expected a non-empty string');
    if (!Object.hasOwn(DTYPE_SIZE, dtype)) throw new BundleError('E_RECORD', file, field('dtype'), `unknown dtype ${JSON.stringify(dtype)}`);
    if (!Array.isArray(shape) || !shape.every((extent) => Number.isSafeInteger(extent) && extent >= 0)) {
      throw new BundleError('E_RECORD', file, field('shape'), 'expected non-negative integers');
    }
    if (!Array.isArray(strides) || strides.length !== shape.length || !strides.every((stride) => Number.isSafeInteger(stride))) {
      throw new BundleError('E_SHAPE', file, field('strides'), `expected ${shape.length} integers (one per axis of shape [${shape.join(', ')}])`);
    }
    if (!(data instanceof Uint8Array)) throw new BundleError('E_RECORD', file, field('data'), 'expected a Uint8Array');
    const byteLength = elementCount(shape) * DTYPE_SIZE[dtype];
    if (data.byteLength !== byteLength) {
      throw new BundleError('E_BYTE_LENGTH', file, field('data'), `${data.byteLength} bytes, but ${dtype} of shape [${shape.join(', ')}] needs ${byteLength} (row-major)`);
    }
    if (pass.names.has(name)) {
      throw new BundleError('E_DUPLICATE_BOUNDARY', file, field('name'), `boundary "${name}" was already recorded in pass ${pass.index}`);
    }

    const offset = pass.spillBytes;
    writeAllSync(pass.spillFd, data, offset);
    const line: JournalRecord = {
      t: 'record',
      pass: pass.index,
      name,
      stage,
      dtype,
      shape: [...shape],
      strides: [...strides],
      offset,
      byte_length: byteLength,
      sha256: sha256Bytes(data),
    };
    this.journal(line);
    pass.spillBytes = offset + byteLength;
    pass.records.push(line);
    pass.names.add(name);
    this.lastRecord = { pass: pass.index, name };
  }

  /**
   * Seals the open pass: pass-NNN.safetensors from the spill (copied in chunks), the seal
   * journaled, the spill deleted. `mode` is the output the pass produced, null when it failed.
   */
  endPass(mode: PassMode | string | null): void {
    const pass = this.pass;
    if (pass === null) return this.stateError('endPass', 'no pass is open');
    const checkedMode = mode === null ? null : PassModeSchema.safeParse(mode);
    if (checkedMode !== null && !checkedMode.success) this.stateError('endPass', `mode must be "text", "audio" or null, got ${JSON.stringify(mode)}`);
    const passMode: PassMode | null = checkedMode === null ? null : checkedMode.data;
    const fileName = passFileName(pass.index);
    const written = writeSafetensorsFile(
      join(this.dir, fileName),
      pass.records.map((record) => ({
        key: record.name,
        dtype: record.dtype,
        shape: record.shape,
        byteLength: record.byte_length,
        from: { fd: pass.spillFd, position: record.offset },
      })),
      { dataOrder: 'given' }, // emission order: the spill copies in one sequential run
    );
    const file = { path: fileName, sha256: written.sha256, bytes: written.bytes };
    this.journal({ t: 'pass_sealed', pass: pass.index, mode: passMode, file, records: pass.records.length });
    closeSync(pass.spillFd);
    unlinkSync(pass.spillPath);
    this.sealed.push({ index: pass.index, kind: pass.kind, mode: passMode, file, boundaries: pass.records.map(boundaryOfRecord) });
    this.pass = null;
  }

  /** Writes manifest.json with the run outcome, removes the journal; returns the manifest path. */
  finish(run: RunOutcome): string {
    this.requireOpen('finish');
    if (this.pass !== null) this.stateError('finish', `pass ${this.pass.index} is still open; call endPass first`);
    const parsed = RunOutcomeSchema.safeParse(run);
    if (!parsed.success) throw schemaError(issuesFromZod(parsed.error, run, 'E_RUN', ['run']), `${this.dir} (finish)`);
    const manifestPath = writeManifestFile(this.dir, buildNativeManifest(this.header, this.sealed, parsed.data));
    this.closeJournal();
    unlinkSync(join(this.dir, JOURNAL_FILE_NAME));
    return manifestPath;
  }

  /** The last record appended: what a crash report names. */
  get lastBoundary(): { pass: number; name: string } | null {
    return this.lastRecord;
  }

  /**
   * Closes the files without sealing anything, leaving the journal for `recover` (what a crash
   * leaves behind, minus the crash). Idempotent.
   */
  close(): void {
    if (this.pass !== null) {
      closeSync(this.pass.spillFd);
      this.pass = null;
    }
    this.closeJournal();
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
    const entries = readdirSync(dir);
    if (entries.length > 0) {
      throw new BundleError('E_TARGET_NOT_EMPTY', dir, '(folder)', `is not empty (${entries.length} entries, e.g. ${entries[0]}); captures write into a fresh folder and never overwrite a bundle`);
    }
    return;
  }
  mkdirSync(dir, { recursive: true });
}

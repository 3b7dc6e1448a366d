// Recovery of a native capture whose process died: replays capture.journal.jsonl, seals every
// unsealed pass from the records whose bytes are fully present and intact in its spill, and
// writes manifest.json with the run outcome the caller observed (crashed, timeout, ...).
// Idempotent: a recovery that is itself interrupted can be run again.
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  JOURNAL_FILE_NAME,
  journalLine,
  parseJournal,
  passFileName,
  SPILL_FILE_PATTERN,
  spillFileName,
  TEMP_FILE_PATTERN,
  type JournalHeader,
  type JournalLine,
  type JournalPassSealed,
  type JournalRecord,
} from './capture-journal.ts';
import { createSha256 } from './digest.ts';
import { BundleError } from './errors.ts';
import { MANIFEST_FILE_NAME, RunOutcomeSchema, RunStatusSchema, schemaError, type PassKind, type RunOutcome } from './manifest-schema.ts';
import { boundaryOfRecord, buildNativeManifest, writeManifestFile, type SealedPass } from './native-manifest.ts';
import { writeSafetensorsFile } from './safetensors-writer.ts';
import { issuesFromZod } from './zod-issues.ts';

/** The run outcome given to recover; last_pass / last_boundary default to the last surviving record. */
export const RecoveryRunOutcomeSchema = z.strictObject({
  status: RunStatusSchema,
  message: z.string(),
  last_pass: z.int().min(0).nullable().optional(),
  last_boundary: z.string().nullable().optional(),
});
export type RecoveryRunOutcome = z.input<typeof RecoveryRunOutcomeSchema>;

interface ReplayedPass {
  readonly index: number;
  readonly kind: PassKind;
  readonly records: JournalRecord[];
  sealed: JournalPassSealed | null;
}

const CHUNK_BYTES = 8 * 1024 * 1024;

export function recoverNativeBundle(dir: string, runInput: RecoveryRunOutcome): string {
  const journalPath = join(dir, JOURNAL_FILE_NAME);
  const manifestPath = join(dir, MANIFEST_FILE_NAME);
  const parsedRun = RecoveryRunOutcomeSchema.safeParse(runInput);
  if (!parsedRun.success) throw schemaError(issuesFromZod(parsedRun.error, runInput, 'E_RUN', ['run']), `${dir} (recover)`);
  if (!existsSync(journalPath)) {
    if (existsSync(manifestPath)) return manifestPath; // finished normally; nothing to recover
    throw new BundleError('E_JOURNAL', journalPath, '(file)', 'no capture journal: this folder holds no capture to recover');
  }
  if (existsSync(manifestPath)) {
    // finish() wrote the manifest and died before removing the journal: the bundle is complete.
    unlinkSync(journalPath);
    return manifestPath;
  }

  const journal = parseJournal(readFileSync(journalPath, 'utf8'), journalPath);
  const [first, ...rest] = journal.lines;
  if (first === undefined || first.t !== 'header') {
    throw new BundleError('E_JOURNAL', journalPath, 'line 1', 'the header line is missing: the capture died while it was being created, nothing can be recovered');
  }
  const header: JournalHeader = first;
  const passes = replay(rest, journalPath);

  // Cut a torn last line off so the lines recovery appends start on a line of their own.
  if (journal.tornTail) {
    const fd = openSync(journalPath, 'r+');
    try {
      ftruncateSync(fd, journal.completeBytes);
    } finally {
      closeSync(fd);
    }
  }
  for (const entry of readdirSync(dir)) if (TEMP_FILE_PATTERN.test(entry)) unlinkSync(join(dir, entry));

  const notes: string[] = [];
  const sealed: SealedPass[] = [];
  let lastRecord: { pass: number; name: string } | null = null;
  for (const pass of passes) {
    let keptRecords: JournalRecord[];
    if (pass.sealed !== null) {
      keptRecords = pass.records.slice(0, pass.sealed.records);
    } else {
      keptRecords = intactRecords(dir, pass);
      const dropped = pass.records.length - keptRecords.length;
      const seal = sealFromSpill(dir, pass, keptRecords);
      appendJournal(journalPath, seal);
      pass.sealed = seal;
      notes.push(`pass ${pass.index} sealed from ${keptRecords.length} complete records${dropped > 0 ? `, ${dropped} torn record${dropped === 1 ? '' : 's'} dropped` : ''}`);
    }
    const spill = join(dir, spillFileName(pass.index));
    if (existsSync(spill)) unlinkSync(spill);
    const seal = pass.sealed;
    sealed.push({ index: pass.index, kind: pass.kind, mode: seal.mode, file: seal.file, boundaries: keptRecords.map(boundaryOfRecord) });
    const last = keptRecords.at(-1);
    if (last !== undefined) lastRecord = { pass: pass.index, name: last.name };
  }
  // Spills of passes whose begin never reached the journal hold nothing recoverable.
  for (const entry of readdirSync(dir)) if (SPILL_FILE_PATTERN.test(entry)) unlinkSync(join(dir, entry));

  const given = parsedRun.data;
  const run: RunOutcome = RunOutcomeSchema.parse({
    status: given.status,
    message: notes.length > 0 ? `${given.message}${given.message === '' ? '' : ' '}[recovered: ${notes.join('; ')}]` : given.message,
    last_pass: given.last_pass !== undefined ? given.last_pass : (lastRecord?.pass ?? null),
    last_boundary: given.last_boundary !== undefined ? given.last_boundary : (lastRecord?.name ?? null),
  });
  const path = writeManifestFile(dir, buildNativeManifest(header, sealed, run));
  unlinkSync(journalPath);
  return path;
}

function replay(lines: readonly JournalLine[], journalPath: string): ReplayedPass[] {
  const passes: ReplayedPass[] = [];
  lines.forEach((line, i) => {
    const where = `line ${i + 2}`;
    const current = passes.at(-1);
    switch (line.t) {
      case 'header':
        throw new BundleError('E_JOURNAL', journalPath, where, 'a second header line');
      case 'pass_begin':
        if (line.pass !== passes.length || (current !== undefined && current.sealed === null)) {
          throw new BundleError('E_JOURNAL', journalPath, where, `pass ${line.pass} begins out of order`);
        }
        passes.push({ index: line.pass, kind: line.kind, records: [], sealed: null });
        return;
      case 'record':
        if (current === undefined || current.index !== line.pass || current.sealed !== null) {
          throw new BundleError('E_JOURNAL', journalPath, where, `record "${line.name}" of pass ${line.pass} outside its pass`);
        }
        current.records.push(line);
        return;
      case 'pass_sealed':
        if (current === undefined || current.index !== line.pass || current.sealed !== null || line.records > current.records.length) {
          throw new BundleError('E_JOURNAL', journalPath, where, `seal of pass ${line.pass} does not match the journal`);
        }
        current.sealed = line;
        return;
    }
  });
  return passes;
}

/** The journaled records whose bytes are fully in the spill and hash to their sha256. */
function intactRecords(dir: string, pass: ReplayedPass): JournalRecord[] {
  const spillPath = join(dir, spillFileName(pass.index));
  if (!existsSync(spillPath)) return [];
  const size = statSync(spillPath).size;
  const fd = openSync(spillPath, 'r');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  try {
    const kept: JournalRecord[] = [];
    for (const record of pass.records) {
      if (record.offset + record.byte_length > size) break; // torn: the data did not all land
      const hash = createSha256();
      let done = 0;
      while (done < record.byte_length) {
        const read = readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, record.byte_length - done), record.offset + done);
        if (read === 0) break;
        hash.update(buffer.subarray(0, read));
        done += read;
      }
      if (done < record.byte_length || hash.digest('hex') !== record.sha256) break;
      kept.push(record);
    }
    return kept;
  } finally {
    closeSync(fd);
  }
}

function sealFromSpill(dir: string, pass: ReplayedPass, records: readonly JournalRecord[]): JournalPassSealed {
  const fileName = passFileName(pass.index);
  const target = join(dir, fileName);
  // A pass file without a journaled seal was cut short (or never trusted): rebuild it.
  if (existsSync(target)) unlinkSync(target);
  const spillPath = join(dir, spillFileName(pass.index));
  const fd = existsSync(spillPath) ? openSync(spillPath, 'r') : null;
  try {
    const written = writeSafetensorsFile(
      target,
      records.map((record) => ({
        key: record.name,
        dtype: record.dtype,
        shape: record.shape,
        byteLength: record.byte_length,
        // No spill means no intact record, so fd is only read when records is non-empty.
        from: { fd: fd ?? -1, position: record.offset },
      })),
      { dataOrder: 'given' }, // emission order: the spill copies in one sequential run
    );
    return { t: 'pass_sealed', pass: pass.index, mode: null, file: { path: fileName, sha256: written.sha256, bytes: written.bytes }, records: records.length };
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function appendJournal(journalPath: string, line: JournalPassSealed): void {
  const fd = openSync(journalPath, 'a');
  try {
    writeSync(fd, journalLine(line));
  } finally {
    closeSync(fd);
  }
}

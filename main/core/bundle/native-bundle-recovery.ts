// Recovery of a native capture whose process died: replays capture.journal.jsonl (header, pass
// begins, seals), applies what the capture pool still held (capture-pool-replay.ts), seals every
// unsealed pass from the whole frames of its spill (a frame cut short or garbled by the death
// fails its checksum: it and anything after it are dropped), and writes
// manifest.json with the run outcome the caller observed (crashed, timeout, ...).
// Idempotent: a recovery that is itself interrupted can be run again.
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { GuardedReadError, readRegularFileSync } from '../io/guarded-read.ts';
import { join } from 'node:path';
import { z } from 'zod';
import { scanSpill, sealFrames, SpillReader } from './capture-frame.ts';
import { openInPlaceData } from './pass-file-in-place.ts';
import { tempPathBeside, TEMP_FILE_PATTERN } from './temp-name.ts';
import { schemeOf, type DigestScheme } from './tree-digest.ts';
import {
  JOURNAL_FILE_NAME,
  MAX_JOURNAL_BYTES,
  journalLine,
  parseJournal,
  passFileName,
  SPILL_FILE_PATTERN,
  spillFileName,
  type JournalHeader,
  type JournalLine,
  type JournalPassSealed,
} from './capture-journal.ts';
import { POOL_FILE_NAME } from './capture-pool-layout.ts';
import { replayCapturePool } from './capture-pool-replay.ts';
import { BundleError } from './errors.ts';
import { MANIFEST_FILE_NAME, RunOutcomeSchema, RunStatusSchema, schemaError, type PassKind, type PassMode, type RunOutcome } from './manifest-schema.ts';
import { boundaryOfRecord, buildNativeManifest, writeManifestFile, type SealedPass } from './native-manifest.ts';
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
  sealed: JournalPassSealed | null;
}

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
    removeLeftovers(dir);
    unlinkSync(journalPath);
    return manifestPath;
  }

  let journalText: string;
  try {
    journalText = readRegularFileSync(journalPath, MAX_JOURNAL_BYTES).toString('utf8');
  } catch (cause) {
    if (cause instanceof GuardedReadError) throw new BundleError('E_JOURNAL', journalPath, '(file)', `the capture journal ${cause.reason}`, { cause });
    throw cause;
  }
  const journal = parseJournal(journalText, journalPath);
  const [first, ...rest] = journal.lines;
  if (first === undefined || first.t !== 'header') {
    throw new BundleError(
      'E_JOURNAL',
      journalPath,
      'line 1',
      'the header line is missing: the capture died while it was being created, nothing can be recovered',
    );
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
  // Entries of the capture pool the writer thread had not applied: begun and ended passes, records.
  const scheme = schemeOf(header);
  const fromPool = replayCapturePool(dir, scheme, {
    passes: () => passes.map((pass) => ({ index: pass.index, kind: pass.kind, sealed: pass.sealed !== null })),
    beginPass(index, kind) {
      const line: JournalLine = { t: 'pass_begin', pass: index, kind };
      appendJournal(journalPath, line);
      passes.push({ index, kind, sealed: null });
    },
    endPass(mode) {
      const pass = passes.at(-1);
      if (pass === undefined || pass.sealed !== null) return;
      const seal = sealFromSpill(dir, pass, scheme, mode);
      appendJournal(journalPath, seal.line);
      pass.sealed = seal.line;
      notes.push(seal.note);
    },
  });
  if (fromPool !== null) notes.unshift(fromPool);
  const sealed: SealedPass[] = [];
  let lastRecord: { pass: number; name: string } | null = null;
  for (const pass of passes) {
    if (pass.sealed === null) {
      const seal = sealFromSpill(dir, pass, scheme);
      appendJournal(journalPath, seal.line);
      pass.sealed = seal.line;
      notes.push(seal.note);
    }
    const spill = join(dir, spillFileName(pass.index));
    if (existsSync(spill)) unlinkSync(spill);
    const seal = pass.sealed;
    sealed.push({ index: pass.index, kind: pass.kind, mode: seal.mode, file: seal.file, boundaries: seal.boundaries.map(boundaryOfRecord) });
    const last = seal.boundaries.at(-1);
    if (last !== undefined) lastRecord = { pass: pass.index, name: last.name };
  }
  // Spills of passes whose begin never reached the journal hold nothing recoverable; the pool is applied.
  for (const entry of readdirSync(dir)) if (SPILL_FILE_PATTERN.test(entry) || entry === POOL_FILE_NAME) unlinkSync(join(dir, entry));

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
        passes.push({ index: line.pass, kind: line.kind, sealed: null });
        return;
      case 'pass_sealed':
        if (current === undefined || current.index !== line.pass || current.sealed !== null) {
          throw new BundleError('E_JOURNAL', journalPath, where, `seal of pass ${line.pass} does not match the journal`);
        }
        current.sealed = line;
        return;
    }
  });
  return passes;
}

/**
 * Seals an unsealed pass from the whole frames at the start of its spill (none when the spill
 * is missing). A pass file without a journaled seal was cut short (or never trusted): rebuilt,
 * under a temporary name, from the spill and the records it holds in place, then renamed over it.
 */
function sealFromSpill(dir: string, pass: ReplayedPass, scheme: DigestScheme, mode: PassMode | null = null): { line: JournalPassSealed; note: string } {
  const fileName = passFileName(pass.index);
  const target = join(dir, fileName);
  const temp = tempPathBeside(target);
  const spillPath = join(dir, spillFileName(pass.index));
  const fd = existsSync(spillPath) ? openSync(spillPath, 'r') : null;
  const inPlace = openInPlaceData(target, scheme);
  try {
    const reader = new SpillReader(fd ?? -1, fd === null ? 0 : fstatSync(fd).size, spillPath);
    const scan = scanSpill(reader, pass.index, true, undefined, inPlace);
    const sealed = sealFrames(dir, fileName, reader, scan.frames, undefined, scheme, inPlace, temp);
    renameSync(temp, target);
    const kept = scan.frames.length;
    let torn = '';
    if (scan.torn !== null) {
      // A death tears at most the last frame. Whole frames after a damaged one mean the spill
      // was damaged otherwise: they are dropped with it (a pass keeps its records in order), and
      // said. Counted by their frames alone: records in place after a pass file that is gone
      // are counted, not each refused in turn.
      const after = scan.torn.frameEnd === null ? 0 : scanSpill(reader, pass.index, false, { offset: scan.torn.frameEnd, seq: kept + 1 }).frames.length;
      const named = scan.torn.name === null ? '' : ` (${scan.torn.name})`;
      torn = after === 0 ? `, 1 torn record dropped${named}` : `, ${after + 1} records dropped from record ${kept}${named} on: ${scan.torn.reason}`;
    }
    return {
      line: { t: 'pass_sealed', pass: pass.index, mode, file: sealed.file, boundaries: sealed.boundaries },
      note: `pass ${pass.index} sealed from ${kept} complete record${kept === 1 ? '' : 's'}${torn}`,
    };
  } finally {
    if (fd !== null) closeSync(fd);
    inPlace?.close();
  }
}

/** A finished bundle keeps nothing of its capture: temporary files and spills go. */
function removeLeftovers(dir: string): void {
  for (const entry of readdirSync(dir))
    if (TEMP_FILE_PATTERN.test(entry) || SPILL_FILE_PATTERN.test(entry) || entry === POOL_FILE_NAME) unlinkSync(join(dir, entry));
}

function appendJournal(journalPath: string, line: JournalLine): void {
  const fd = openSync(journalPath, 'a');
  try {
    const bytes = Buffer.from(journalLine(line), 'utf8');
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done, null);
  } finally {
    closeSync(fd);
  }
}

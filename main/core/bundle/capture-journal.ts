// The capture journal (capture.journal.jsonl): an append-only log that makes a native capture
// recoverable after its process dies. One JSON object per line; a line counts only once its
// newline is on disk, so a torn last line is simply ignored.
//
// The journal holds what happens once per capture or per pass: the header, each pass's begin
// and its seal (with the pass's boundaries, since the spill is deleted once sealed). Records are
// not journaled: each one is a self-describing frame in its pass's spill (capture-frame.ts), so
// a record costs one append, not an append plus a journal line.
import { z } from 'zod';
import { DTypeSchema } from './dtype.ts';
import { DigestDeclarationSchema } from './tree-digest.ts';
import { BundleError } from './errors.ts';
import {
  CaseSchema,
  FileEntrySchema,
  InputEntrySchema,
  KnownGapSchema,
  PassKindSchema,
  PassModeSchema,
  ProvenanceSchema,
  Sha256HexSchema,
  ShapeSchema,
  StridesSchema,
} from './manifest-schema.ts';

export const JOURNAL_FILE_NAME = 'capture.journal.jsonl';
export const INPUTS_FILE_NAME = 'inputs.safetensors';
/**
 * The version written. 2: records live as frames in the spills (1 journaled each record as a
 * line). 3: records may also wait in the capture pool (capture.pool, capture-pool-layout.ts),
 * which recovery replays; a reader of version 2 would recover such a capture without them, so it
 * must refuse it, and the bump makes it do so. 4: a large record's data may be written in place,
 * in the pass file, its frame in the spill only naming it (capture-frame.ts FRAME_IN_PLACE); a
 * reader of version 3 would drop such a record and every one after it, so it must refuse it.
 */
export const JOURNAL_VERSION = 4;
/** The versions this one recovers: a version-2 capture simply has no pool to replay, a version-3 one no record in place. */
export const RECOVERED_JOURNAL_VERSIONS: readonly number[] = [2, 3, 4];
/**
 * Largest journal read back (recovery, the live view): it lists what a manifest lists, so it
 * gets the manifest's cap. A journal that is a device, a FIFO or larger is refused, never read.
 */
export const MAX_JOURNAL_BYTES = 256 * 1024 * 1024;

export const passFileName = (index: number): string => `pass-${String(index).padStart(3, '0')}.safetensors`;
export const spillFileName = (index: number): string => `pass-${String(index).padStart(3, '0')}.spill`;
export const SPILL_FILE_PATTERN = /^pass-(\d{3,})\.spill$/;

const Count = z.int().min(0);

export const JournalHeaderSchema = z.strictObject({
  t: z.literal('header'),
  journal_version: z.union([z.literal(2), z.literal(3), z.literal(4)]),
  case: CaseSchema,
  provenance: ProvenanceSchema,
  inputs: z.array(InputEntrySchema),
  known_gaps: z.array(KnownGapSchema),
  inputs_file: FileEntrySchema,
  /** The digest scheme the capture writes (tree-digest.ts); absent: plain sha256. */
  digests: DigestDeclarationSchema.optional(),
});
export type JournalHeader = z.infer<typeof JournalHeaderSchema>;

export const JournalPassBeginSchema = z.strictObject({ t: z.literal('pass_begin'), pass: Count, kind: PassKindSchema });

/** A sealed boundary as the journal keeps it: what its manifest entry is built from. */
export const JournalBoundarySchema = z.strictObject({
  name: z.string().min(1),
  stage: z.string().min(1),
  dtype: DTypeSchema,
  shape: ShapeSchema,
  strides: StridesSchema,
  sha256: Sha256HexSchema,
  byte_length: Count,
});
export type JournalBoundary = z.infer<typeof JournalBoundarySchema>;

export const JournalPassSealedSchema = z.strictObject({
  t: z.literal('pass_sealed'),
  pass: Count,
  mode: PassModeSchema.nullable(),
  file: FileEntrySchema,
  /** The boundaries the sealed file holds, in emission order (recovery may have dropped a torn one). */
  boundaries: z.array(JournalBoundarySchema),
});
export type JournalPassSealed = z.infer<typeof JournalPassSealedSchema>;

export const JournalLineSchema = z.discriminatedUnion('t', [JournalHeaderSchema, JournalPassBeginSchema, JournalPassSealedSchema]);
export type JournalLine = z.infer<typeof JournalLineSchema>;

export function journalLine(line: JournalLine): string {
  return `${JSON.stringify(line)}\n`;
}

export interface ParsedJournal {
  readonly lines: readonly JournalLine[];
  /** Bytes of complete lines; anything after is a torn tail left by a crash. */
  readonly completeBytes: number;
  readonly tornTail: boolean;
}

/**
 * Parses journal text: complete lines must be valid; an unterminated last line is dropped.
 * `firstLine`: the line number of the text's first line (a journal read on from where it was read
 * before), for messages; only line 1 can be the header.
 */
export function parseJournal(text: string, file: string, firstLine = 1): ParsedJournal {
  const end = text.lastIndexOf('\n') + 1;
  const complete = text.slice(0, end);
  const lines: JournalLine[] = [];
  complete
    .split('\n')
    .slice(0, -1)
    .forEach((raw, i) => {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (cause) {
        throw new BundleError('E_JOURNAL', file, `line ${i + firstLine}`, 'is not valid JSON although it is complete (the journal is corrupt)', { cause });
      }
      if (i + firstLine === 1 && isOtherJournalVersion(value)) {
        throw new BundleError(
          'E_JOURNAL',
          file,
          'line 1 (journal_version)',
          `is ${JSON.stringify((value as { journal_version: unknown }).journal_version)}: this capture was written by another version of trace-inspector; this one recovers journal versions ${RECOVERED_JOURNAL_VERSIONS.slice(0, -1).join(', ')} and ${RECOVERED_JOURNAL_VERSIONS.at(-1)}`,
        );
      }
      const parsed = JournalLineSchema.safeParse(value);
      if (!parsed.success) {
        const detail = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
        throw new BundleError('E_JOURNAL', file, `line ${i + firstLine}`, `is not a journal line: ${detail}`);
      }
      lines.push(parsed.data);
    });
  return { lines, completeBytes: Buffer.byteLength(complete, 'utf8'), tornTail: end < text.length };
}

function isOtherJournalVersion(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { t?: unknown }).t === 'header' &&
    !RECOVERED_JOURNAL_VERSIONS.includes((value as { journal_version?: unknown }).journal_version as number)
  );
}

// The known-gap ledger: boundaries declared broken, which must keep failing (KNOWN_GAP) and turn
// REVIEW_REQUIRED when they start passing. Entries come from each reference manifest's
// `known_gaps` and from a policy file — `known-gaps.json` beside the reference bundle (in the
// folder that holds it), or the file given with --ledger, which then replaces that lookup.
//
//   { "schema": "trace-inspector.known-gaps", "schema_version": 1,
//     "known_gaps": [ { "id": "KG-...", "boundary": "backbone.l0.conv_carry",
//                       "passes": [0], "case": "prefill_1tok",           // both optional
//                       "reason": "...", "reopen_evidence": "..." } ] }
//
// Every entry must name a boundary some case of the run has (in one of its passes, when passes
// are given): a ledger that names nothing real hides nothing and is a typo — exit 2.
import { GuardedReadError, readRegularFile } from '../io/guarded-read.ts';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { BundleManifest } from '../bundle/manifest-schema.ts';
import { formatFieldPath } from '../bundle/errors.ts';
import type { LedgerEntry } from './gate-types.ts';

export const LEDGER_FILE_NAME = 'known-gaps.json';
export const LEDGER_SCHEMA_NAME = 'trace-inspector.known-gaps';
export const LEDGER_SCHEMA_VERSION = 1;
const MAX_LEDGER_BYTES = 16 * 1024 * 1024;

const NonEmpty = z.string().min(1, { error: 'expected a non-empty string' });

export const LedgerFileEntrySchema = z.strictObject({
  id: NonEmpty,
  boundary: NonEmpty,
  passes: z.array(z.int().min(0, { error: 'expected a pass index >= 0' })).optional(),
  case: NonEmpty.optional(),
  reason: NonEmpty,
  reopen_evidence: NonEmpty,
});

export const LedgerFileSchema = z.strictObject({
  schema: z.literal(LEDGER_SCHEMA_NAME, { error: `expected "${LEDGER_SCHEMA_NAME}"` }),
  schema_version: z.literal(LEDGER_SCHEMA_VERSION, { error: `expected ${LEDGER_SCHEMA_VERSION}` }),
  known_gaps: z.array(LedgerFileEntrySchema),
});
export type LedgerFile = z.infer<typeof LedgerFileSchema>;

/** A ledger that cannot be used: bad JSON, bad schema, an entry naming nothing real (exit 2). */
export class LedgerError extends Error {
  override name = 'LedgerError';
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
  ) {
    super(`${file}: ${field}: ${detail}`);
  }
}

/** What the ledger checks entries against: each case's reference passes and boundary names. */
export interface LedgerCase {
  caseId: string;
  referenceDir: string;
  manifestPath: string;
  manifest: BundleManifest;
}

/** Entries with their provenance in the source, before they are checked against the cases. */
interface PendingEntry {
  entry: Omit<LedgerEntry, 'appliesTo'>;
  /** The cases the source applies to (a manifest: its case; a file beside bundles: those; --ledger: all). */
  sourceCases: string[];
  field: string;
}

function entriesOfManifest(item: LedgerCase): PendingEntry[] {
  return item.manifest.known_gaps.map((gap, g) => ({
    entry: {
      id: gap.id,
      boundary: gap.boundary,
      passes: gap.passes.length > 0 ? [...gap.passes] : null,
      case: item.caseId,
      reason: gap.reason,
      reopen_evidence: gap.reopen_evidence,
      source: item.manifestPath,
    },
    sourceCases: [item.caseId],
    field: formatFieldPath(['known_gaps', g]),
  }));
}

/** Reads and validates one ledger file (schema only; names are checked by checkEntries). */
export async function readLedgerFile(file: string): Promise<LedgerFile> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file, MAX_LEDGER_BYTES);
  } catch (error) {
    if (!(error instanceof GuardedReadError)) throw error;
    throw new LedgerError(
      file,
      '(file)',
      error.problem === 'too_large' ? `is larger than ${MAX_LEDGER_BYTES} bytes; a ledger is small JSON — wrong file?` : error.reason,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new LedgerError(file, '(root)', `is not valid JSON (${(error as Error).message})`);
  }
  const parsed = LedgerFileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${formatFieldPath(issue.path)}: ${issue.message}`);
    const first = parsed.error.issues[0];
    throw new LedgerError(file, first ? formatFieldPath(first.path) : '(root)', `breaks the known-gaps schema: ${issues.join('; ')}`);
  }
  return parsed.data;
}

function entriesOfFile(file: string, ledger: LedgerFile, sourceCases: string[]): PendingEntry[] {
  const seen = new Map<string, number>();
  return ledger.known_gaps.map((gap, g) => {
    const field = formatFieldPath(['known_gaps', g]);
    const earlier = seen.get(gap.id);
    if (earlier !== undefined) throw new LedgerError(file, `${field}.id`, `id "${gap.id}" is already declared at known_gaps[${earlier}]`);
    seen.set(gap.id, g);
    return {
      entry: {
        id: gap.id,
        boundary: gap.boundary,
        passes: gap.passes !== undefined && gap.passes.length > 0 ? [...gap.passes] : null,
        case: gap.case ?? null,
        reason: gap.reason,
        reopen_evidence: gap.reopen_evidence,
        source: file,
      },
      sourceCases,
      field,
    };
  });
}

/** The cases an entry applies to in this run. */
function casesOf(pending: PendingEntry): string[] {
  const { entry } = pending;
  return entry.case === null ? pending.sourceCases : pending.sourceCases.filter((caseId) => caseId === entry.case);
}

/** Refuses entries that name a boundary (in the given passes) no applicable reference has. */
function checkEntry(pending: PendingEntry, byCase: ReadonlyMap<string, LedgerCase>, warnings: string[]): void {
  const { entry } = pending;
  const applicable = casesOf(pending);
  const where = `${pending.field} (id "${entry.id}")`;
  if (applicable.length === 0) {
    // A shared --ledger may carry entries for cases this run does not include.
    warnings.push(`${entry.source}: ${where} applies to case "${entry.case}", which this run does not include; ignored`);
    return;
  }
  let named = false;
  let inSomePass = false;
  for (const caseId of applicable) {
    const item = byCase.get(caseId) as LedgerCase;
    for (const pass of item.manifest.passes) {
      if (!pass.boundaries.some((boundary) => boundary.name === entry.boundary)) continue;
      named = true;
      if (entry.passes === null || entry.passes.includes(pass.index)) inSomePass = true;
    }
  }
  const cases = applicable.join(', ');
  if (!named) {
    throw new LedgerError(
      entry.source,
      `${pending.field}.boundary`,
      `${where} names boundary "${entry.boundary}", which no reference of this run has (cases: ${cases})`,
    );
  }
  if (!inSomePass) {
    throw new LedgerError(
      entry.source,
      `${pending.field}.passes`,
      `${where} names boundary "${entry.boundary}" in passes [${(entry.passes ?? []).join(', ')}], where no reference of this run has it (cases: ${cases})`,
    );
  }
}

export interface LoadedLedger {
  entries: LedgerEntry[];
  /** Ledger files read (not the manifests). */
  files: string[];
  warnings: string[];
}

/**
 * The ledger of a run: every reference manifest's known_gaps, plus `ledgerFile` when given, else
 * each known-gaps.json found beside a reference bundle. Throws LedgerError (a usage error).
 */
export async function loadLedger(cases: readonly LedgerCase[], ledgerFile: string | null): Promise<LoadedLedger> {
  const byCase = new Map(cases.map((item) => [item.caseId, item]));
  const pending: PendingEntry[] = cases.flatMap(entriesOfManifest);
  const files: string[] = [];
  if (ledgerFile !== null) {
    pending.push(
      ...entriesOfFile(
        ledgerFile,
        await readLedgerFile(ledgerFile),
        cases.map((item) => item.caseId),
      ),
    );
    files.push(ledgerFile);
  } else {
    const beside = new Map<string, string[]>();
    for (const item of cases) {
      const file = join(dirname(item.referenceDir), LEDGER_FILE_NAME);
      beside.set(file, [...(beside.get(file) ?? []), item.caseId]);
    }
    for (const [file, sourceCases] of beside) {
      let ledger: LedgerFile;
      try {
        ledger = await readLedgerFile(file);
      } catch (error) {
        if (error instanceof LedgerError && error.field === '(file)' && error.message.endsWith('does not exist')) continue;
        throw error;
      }
      pending.push(...entriesOfFile(file, ledger, sourceCases));
      files.push(file);
    }
  }
  const warnings: string[] = [];
  for (const item of pending) checkEntry(item, byCase, warnings);
  const entries = pending.filter((item) => casesOf(item).length > 0).map((item) => ({ ...item.entry, appliesTo: casesOf(item) }));
  return { entries, files, warnings };
}

/** The first entry declaring (case, pass, boundary) broken, or null. */
export function findLedgerEntry(entries: readonly LedgerEntry[], caseId: string, pass: number, boundary: string): LedgerEntry | null {
  for (const entry of entries) {
    if (entry.boundary !== boundary) continue;
    if (!entry.appliesTo.includes(caseId)) continue;
    if (entry.passes !== null && !entry.passes.includes(pass)) continue;
    return entry;
  }
  return null;
}

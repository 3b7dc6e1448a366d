// in-toto Statement v1 (github.com/in-toto/attestation, spec/v1/statement.md) as trace-inspector
// writes it: subjects named by a relative path and pinned by sha256, and a predicate of type
// gate-receipt/v1 whose content the gate defines (this module only requires a JSON object).
// The payload bytes are the statement's canonical JSON (canonical-json.ts).
import { z } from 'zod';
import { ReceiptError } from './errors.ts';
import { CanonicalJsonText, canonicalJsonBytes, jsonValueSchema, type JsonValue } from './canonical-json.ts';

export const IN_TOTO_STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const GATE_RECEIPT_PREDICATE_TYPE = 'https://trace-inspector.dev/gate-receipt/v1';

/** Stands in for a file name in errors about statements built in memory. */
export const STATEMENT_SOURCE = '<statement>';

/**
 * Why a subject name is not acceptable, or null. A name is a relative path with forward
 * slashes (a bare file name is the common case): `verify --subjects <dir>` looks it up inside
 * that folder, so it may not be absolute, use `..`, backslashes, NUL, or empty / `.` segments.
 */
export function subjectNameProblem(name: string): string | null {
  if (name.length === 0) return 'is empty';
  if (name.includes('\0')) return 'contains a NUL character';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is absolute; subject names are relative paths';
  if (name.includes('\\')) return 'uses a backslash; subject names use forward slashes';
  const segments = name.split('/');
  if (segments.includes('..')) return 'uses ".."';
  if (segments.some((segment) => segment === '' || segment === '.')) return 'has an empty or "." segment';
  return null;
}

const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected 64 lowercase hex digits (sha256)' });

export const SubjectSchema = z.strictObject({
  name: z.string().superRefine((name, context) => {
    const problem = subjectNameProblem(name);
    if (problem !== null) context.addIssue({ code: 'custom', message: `subject name "${name}" ${problem}` });
  }),
  digest: z.strictObject({ sha256: Sha256HexSchema }),
});

export const PredicateSchema = z.record(z.string(), jsonValueSchema);

export const StatementSchema = z
  .strictObject({
    _type: z.literal(IN_TOTO_STATEMENT_TYPE),
    subject: z.array(SubjectSchema).min(1, { error: 'a statement needs at least one subject' }),
    predicateType: z.literal(GATE_RECEIPT_PREDICATE_TYPE),
    predicate: PredicateSchema,
  })
  .superRefine((statement, context) => {
    const seen = new Set<string>();
    statement.subject.forEach((subject, index) => {
      if (seen.has(subject.name)) {
        context.addIssue({ code: 'custom', path: ['subject', index, 'name'], message: `subject name "${subject.name}" appears twice` });
      }
      seen.add(subject.name);
    });
  });

export type Subject = z.infer<typeof SubjectSchema>;
export type Predicate = Record<string, JsonValue>;
export type Statement = z.infer<typeof StatementSchema>;

/** One line per zod issue: `path: message`. */
export function describeZodIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`);
}

/** The predicate's canonical bytes and the statement around it (an empty predicate), both checked. */
function checkedStatement(subjects: readonly Subject[], predicate: object): { predicateBytes: Buffer; around: Statement } {
  let predicateBytes: Buffer;
  try {
    predicateBytes = canonicalJsonBytes(predicate);
  } catch (cause) {
    throw new ReceiptError('E_STATEMENT', STATEMENT_SOURCE, `predicate: ${(cause as Error).message}`, { cause });
  }
  // Canonical JSON of an object starts with "{" (a plain object, or one that wrote as one).
  if (predicate === null || typeof predicate !== 'object' || Array.isArray(predicate) || predicateBytes[0] !== 0x7b) {
    throw new ReceiptError('E_STATEMENT', STATEMENT_SOURCE, 'predicate: expected a JSON object');
  }
  // The predicate is JSON by construction (it was just written as canonical JSON): the schema
  // checks the statement's own fields around an empty predicate instead of walking a real run's
  // 2 MB of verdict rows value by value (a union per value, over 100 MB of garbage at 16,720
  // rows). A receipt read back (receipt.ts) is still checked whole.
  const parsed = StatementSchema.safeParse({
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: subjects.map((subject) => ({ name: subject.name, digest: { ...subject.digest } })),
    predicateType: GATE_RECEIPT_PREDICATE_TYPE,
    predicate: {},
  });
  if (!parsed.success) throw new ReceiptError('E_STATEMENT', STATEMENT_SOURCE, describeZodIssues(parsed.error).join('; '));
  return { predicateBytes, around: parsed.data };
}

/**
 * The statement for `subjects` and `predicate` (a plain JSON object; typed `object` so the
 * gate may pass an interface-typed value). The predicate may hold non-finite numbers
 * (written as strings by the canonical serialisation); it is checked to be plain JSON here,
 * so a bad value fails now rather than when the payload is serialised.
 */
export function buildStatement(subjects: readonly Subject[], predicate: object): Statement {
  // Round-trip through the canonical text so the returned statement is exactly what is signed
  // (NaN already turned into "NaN", undefined properties gone, -0 written 0).
  const { predicateBytes, around } = checkedStatement(subjects, predicate);
  return { ...around, predicate: JSON.parse(predicateBytes.toString('utf8')) as Predicate };
}

/**
 * The exact payload bytes a receipt signs for `subjects` and `predicate`: the same bytes as
 * statementPayload(buildStatement(subjects, predicate)), with the same checks and errors, but the
 * predicate is written once, straight into the payload, never parsed back into a tree (a long
 * run's verdict table is tens of MB as objects; see CanonicalArray).
 */
export function signedStatementPayload(subjects: readonly Subject[], predicate: object): Buffer {
  const { predicateBytes, around } = checkedStatement(subjects, predicate);
  return canonicalJsonBytes({ ...around, predicate: new CanonicalJsonText(predicateBytes) });
}

/** The exact payload bytes a receipt signs for `statement`. */
export function statementPayload(statement: Statement): Buffer {
  return canonicalJsonBytes(statement);
}

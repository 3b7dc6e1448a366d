// `trace-inspector verify <receipt>`: checks a gate receipt's signature and, given the files,
// re-hashes its subjects. Exit 0 verified, 1 verification failed (reasons printed), 2 bad usage
// or unreadable input (thrown as InputError, printed by run-cli).
import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { describeFileType } from '../../core/io/guarded-read.ts';
import { ReceiptError } from '../../core/receipt/errors.ts';
import { verifyReceipt, type ReceiptVerification } from '../../core/receipt/receipt.ts';
import { EXIT_FAILURE, EXIT_OK, type CliIO } from '../cli-io.ts';
import { jsonOutputArg, parseCommandArgs } from '../command-args.ts';
import { humanChannel, outputPath, STDOUT } from '../run-outputs.ts';
import { serializeReport } from '../../core/report/json-report.ts';
import { writeNewFileAtomically } from '../../core/report/new-file.ts';
import { existsSync } from 'node:fs';
import { InputError } from '../../core/io/input-error.ts';

export const VERIFY_USAGE = `usage: trace-inspector verify <receipt> [--pubkey <pem>] [--subjects <file or folder>]... [--json <file|->]

Checks the receipt's Ed25519 signature with --pubkey (default: your per-user public key,
~/.config/trace-inspector/trace-inspector-ed25519.pub) and, for each --subjects file or folder
(repeatable), re-hashes the subjects it holds: the engine library, the reference manifest, the
weights. Exit 0 verified, 1 not verified (the reasons are printed), 2 bad usage or unreadable input.
--json writes the verification (every check, every subject, the signed statement) as JSON (- for
stdout; the human lines then go to stderr).
`;

const VerifyArgsSchema = z.object({
  pubkey: z.string().min(1, { error: '--pubkey: expected the path of a PEM public key' }).optional(),
  subjects: z.array(z.string().min(1, { error: '--subjects: expected a file or folder' })).default([]),
  json: jsonOutputArg,
  receipt: z.array(z.string().min(1, { error: 'expected the receipt file' })),
});

type VerifyArgs = Omit<z.infer<typeof VerifyArgsSchema>, 'receipt'> & { receipt: string };

function parseVerifyArgs(argv: readonly string[]): VerifyArgs {
  const { receipt: positionals, ...flags } = parseCommandArgs('verify', argv, VerifyArgsSchema, { positionals: 'receipt' });
  if (positionals.length !== 1) {
    const got = positionals.length === 0 ? 'none' : `${positionals.length} (${positionals.join(' ')})`;
    throw new InputError(`verify: expected exactly one receipt file, got ${got}; give each subject with its own --subjects`);
  }
  return { ...flags, receipt: positionals[0] as string };
}

/** The gate's seal lines, when the predicate carries them as a list of strings. */
const SealsSchema = z.object({ seals: z.array(z.string()) });

function describeKey(result: ReceiptVerification): string {
  const { publicKey } = result;
  if (publicKey.source === 'default-user-key') return `${publicKey.path} (your default user key)`;
  return publicKey.path ?? 'the given key';
}

export function formatVerification(receipt: string, result: ReceiptVerification): string {
  const lines: string[] = [`receipt    ${receipt}`, `public key ${describeKey(result)}, keyid ${result.keyid}`];
  if (result.statement !== null) {
    lines.push(`signature  OK (Ed25519 over the in-toto statement, predicate ${result.statement.predicateType})`);
    for (const check of result.subjectsChecked) {
      lines.push(
        check.ok
          ? `subject    ${check.name}: OK sha256 ${check.actual} (${check.file})`
          : `subject    ${check.name}: CHANGED sha256 ${check.actual}, receipt says ${check.expected} (${check.file})`,
      );
    }
    const notFound = new Set(result.subjectsNotFound);
    for (const name of result.subjectsNotChecked) {
      lines.push(
        notFound.has(name)
          ? `subject    ${name}: not found (no folder given holds it at its recorded path; not checked)`
          : `subject    ${name}: not checked (no file given)`,
      );
    }
    // Seals only under a receipt that verified in full: a "PASSED" beside a changed subject
    // would read as a pass.
    const seals = SealsSchema.safeParse(result.statement.predicate);
    if (result.ok && seals.success) for (const seal of seals.data.seals) lines.push(`sealed     ${seal}`);
  }
  if (result.ok) {
    lines.push('VERIFIED');
  } else {
    lines.push('NOT VERIFIED');
    for (const reason of result.reasons) lines.push(`  - ${reason}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function runVerifyCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseVerifyArgs(argv);
  const receipt = resolve(io.cwd, args.receipt);
  const json = args.json === undefined ? undefined : outputPath(io.cwd, args.json);
  if (json !== undefined && json !== STDOUT && existsSync(json)) throw new InputError(`verify: --json ${json} already exists; reports are never overwritten`);
  // A --subjects path that is missing or neither a file nor a folder (a FIFO, a device) is bad
  // usage (exit 2), not a verification failure: nothing about the receipt was learned from it.
  for (const given of args.subjects) {
    let info: Stats;
    try {
      info = await stat(resolve(io.cwd, given));
    } catch (error) {
      throw new InputError(
        `verify: --subjects ${given}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : `cannot be read (${(error as Error).message})`}`,
      );
    }
    if (!info.isFile() && !info.isDirectory()) throw new InputError(`verify: --subjects ${given} is ${describeFileType(info)}, not a file or folder`);
  }
  let result: ReceiptVerification;
  try {
    result = await verifyReceipt(receipt, {
      ...(args.pubkey !== undefined ? { publicKey: resolve(io.cwd, args.pubkey) } : {}),
      subjectFiles: args.subjects.map((path) => resolve(io.cwd, path)),
      env: io.env,
    });
  } catch (error) {
    if (error instanceof ReceiptError) throw new InputError(`verify: ${error.message}`);
    throw error;
  }
  const code = result.ok ? EXIT_OK : EXIT_FAILURE;
  humanChannel(io, json)(formatVerification(receipt, result));
  if (json === STDOUT) io.stdout(serializeReport(verificationReport(receipt, result)));
  else if (json !== undefined) {
    try {
      await writeNewFileAtomically(json, serializeReport(verificationReport(receipt, result)));
    } catch (error) {
      io.stderr(`verify: cannot write the json ${json}: ${(error as Error).message}\n`);
      return EXIT_FAILURE;
    }
  }
  return code;
}

/** What `verify --json` writes: the verdict, each check and subject, and the signed statement. */
function verificationReport(receipt: string, result: ReceiptVerification): Record<string, unknown> {
  return {
    schema: 'trace-inspector.verification',
    schema_version: 1,
    receipt,
    ok: result.ok,
    reasons: result.reasons,
    keyid: result.keyid,
    public_key: result.publicKey,
    checks: result.checks,
    subjects_checked: result.subjectsChecked,
    subjects_not_checked: result.subjectsNotChecked,
    subjects_not_found: result.subjectsNotFound,
    statement: result.statement,
  };
}

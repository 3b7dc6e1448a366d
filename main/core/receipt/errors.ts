// ReceiptError: input the receipt code cannot use at all — a file that cannot be read, is not
// JSON, is not a DSSE envelope, a key that is not an Ed25519 key, a target that already exists.
// A receipt that parses but does not verify is not an error: verifyReceipt reports it as
// `ok: false` with reasons (the CLI maps errors to exit 2 and failed verification to exit 1).
import { GuardedReadError } from '../io/guarded-read.ts';

/** Stable error codes: the CLI and tests switch on these, never on message text. */
export const RECEIPT_ERROR_CODES = [
  'E_RECEIPT_READ', // the receipt file cannot be read (missing, a folder, too large)
  'E_RECEIPT_JSON', // the receipt is empty, not UTF-8 or not JSON
  'E_ENVELOPE_SCHEMA', // the JSON is not a DSSE envelope (fields missing, wrong types, unknown fields)
  'E_RECEIPT_EXISTS', // writeReceipt target exists and overwriting was not asked for
  'E_RECEIPT_WRITE', // the receipt could not be written
  'E_STATEMENT', // subjects or predicate handed to buildStatement/writeReceipt are not valid
  'E_KEY_READ', // a key file cannot be read
  'E_KEY_FORMAT', // a key file is not a PEM key of the expected kind (private / public)
  'E_KEY_TYPE', // a key is not Ed25519
  'E_KEY_EXISTS', // keygen would overwrite an existing key file
  'E_KEY_WRITE', // a key file or its folder could not be written
  'E_NO_PUBLIC_KEY', // verify was given no public key and there is no default user key
  'E_SUBJECT_READ', // a subject file or folder given for re-hashing cannot be read
] as const;

export type ReceiptErrorCode = (typeof RECEIPT_ERROR_CODES)[number];

export class ReceiptError extends Error {
  override readonly name = 'ReceiptError';
  readonly code: ReceiptErrorCode;
  /** The file at fault as the caller named it, or `<statement>` for in-memory input. */
  readonly file: string;

  constructor(code: ReceiptErrorCode, file: string, message: string, options?: { cause?: unknown }) {
    super(`${file}: ${message}`, options);
    this.code = code;
    this.file = file;
  }
}

export function isReceiptError(value: unknown): value is ReceiptError {
  return value instanceof ReceiptError;
}

/** The OS error code (ENOENT, EEXIST, ...) of a thrown value, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** A short, human reason for an fs failure: "does not exist", "is a folder", ... */
export function describeFsError(error: unknown): string {
  if (error instanceof GuardedReadError) return error.reason;
  switch (errnoCode(error)) {
    case 'ENOENT':
      return 'does not exist';
    case 'EISDIR':
      return 'is a folder, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a parent of this path is not a folder';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

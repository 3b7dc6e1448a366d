// A gate receipt on disk: a DSSE envelope (canonical JSON + "\n") over an in-toto Statement v1.
// writeReceipt signs and writes it atomically; verifyReceipt checks, in order, the envelope's
// shape (else ReceiptError), the key, the envelope's exact bytes, the payloadType, the
// signature over the decoded payload bytes, the statement, and — given files — each subject's
// sha256. Every check that fails adds a reason; `ok` is true only when there is none.
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, lstat, open, rename, unlink } from 'node:fs/promises';
import { readRegularFile } from '../io/guarded-read.ts';
import { basename, dirname, join } from 'node:path';
import { sha256Bytes } from '../bundle/digest.ts';
import { formatFieldPath } from '../bundle/errors.ts';
import { canonicalJson, canonicalJsonBytes } from './canonical-json.ts';
import { DsseEnvelopeSchema, IN_TOTO_PAYLOAD_TYPE, keyIdOf, signEnvelope, verifyEnvelope, type DsseEnvelope } from './dsse.ts';
import { ReceiptError, describeFsError, errnoCode } from './errors.ts';
import { StatementSchema, describeZodIssues, signedStatementPayload, type Statement, type Subject } from './in-toto.ts';
import { defaultUserKeyPaths, loadPublicKey, type Env } from './keys.ts';
import { checkSubjectFiles, type SubjectCheck } from './subject-files.ts';
import { createOutputFolder } from '../io/output-folder.ts';

/** A receipt is a few hundred KiB at most; a larger file is the wrong file (weights, say). */
const MAX_RECEIPT_BYTES = 64 * 1024 * 1024;

export interface WriteReceiptOptions {
  subjects: readonly Subject[];
  /** The gate's predicate: a plain JSON object (non-finite numbers allowed, see canonical-json.ts). */
  predicate: object;
  privateKey: KeyObject;
  /** Replace an existing file (atomically). Default false: an existing file is E_RECEIPT_EXISTS. */
  overwrite?: boolean;
}

export interface WrittenReceipt {
  file: string;
  keyid: string;
  statement: Statement;
  /** sha256 of the signed payload bytes. */
  payloadSha256: string;
}

/** The receipt file's exact text for `envelope`: its canonical JSON and one newline. */
export function serializeEnvelope(envelope: DsseEnvelope): string {
  return `${canonicalJson(envelope)}\n`;
}

/** The text the canonical JSON of a base64 string opens with in an envelope ("payload" is its first key). */
const PAYLOAD_OPENING = '{"payload":"';

/**
 * serializeEnvelope's text in pieces that join to it exactly, the payload's base64 one of them as
 * it is: a long run's payload (several MB of base64) is then never copied into the JSON string of
 * it, nor into the whole text, each as large again, at the end of the gate where its process
 * peaks. Base64 has no character JSON escapes; a payload that is not base64 gets the text whole.
 */
export function envelopeTextPieces(envelope: DsseEnvelope): string[] {
  if (!/^[A-Za-z0-9+/=]*$/.test(envelope.payload)) return [serializeEnvelope(envelope)];
  const around = serializeEnvelope({ ...envelope, payload: '' });
  if (!around.startsWith(`${PAYLOAD_OPENING}"`)) return [serializeEnvelope(envelope)];
  return [PAYLOAD_OPENING, envelope.payload, around.slice(PAYLOAD_OPENING.length)];
}

async function writeFileAtomically(file: string, text: string | readonly string[], overwrite: boolean): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(tmp, 'wx', 0o644);
    try {
      for (const piece of typeof text === 'string' ? [text] : text) await handle.writeFile(piece, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (overwrite) {
      await rename(tmp, file);
      return;
    }
    try {
      await link(tmp, file); // atomic and never replaces: EEXIST if the name was taken meanwhile
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EEXIST') throw new ReceiptError('E_RECEIPT_EXISTS', file, 'already exists; refusing to overwrite a receipt', { cause: error });
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
      // A filesystem without hard links: check-then-rename (a narrow race, not a silent one).
      if (existsSync(file)) throw new ReceiptError('E_RECEIPT_EXISTS', file, 'already exists; refusing to overwrite a receipt', { cause: error });
      await rename(tmp, file);
    }
  } catch (error) {
    if (error instanceof ReceiptError) throw error;
    throw new ReceiptError('E_RECEIPT_WRITE', file, `cannot write the receipt: ${describeFsError(error)}`, { cause: error });
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** Builds the statement, signs its canonical bytes, and writes the envelope to `file`. */
export async function writeReceipt(file: string, options: WriteReceiptOptions): Promise<WrittenReceipt> {
  const overwrite = options.overwrite ?? false;
  try {
    const existing = await lstat(file);
    if (!overwrite) throw new ReceiptError('E_RECEIPT_EXISTS', file, 'already exists; refusing to overwrite a receipt');
    if (existing.isDirectory()) throw new ReceiptError('E_RECEIPT_WRITE', file, 'is a folder; give a file name for the receipt');
  } catch (error) {
    if (error instanceof ReceiptError) throw error;
    if (errnoCode(error) !== 'ENOENT') throw new ReceiptError('E_RECEIPT_WRITE', file, `cannot inspect: ${describeFsError(error)}`, { cause: error });
  }
  const payload = signedStatementPayload(options.subjects, options.predicate);
  const envelope = signEnvelope(payload, IN_TOTO_PAYLOAD_TYPE, options.privateKey);
  try {
    await createOutputFolder(dirname(file), `the folder of the receipt ${file}`);
  } catch (error) {
    throw new ReceiptError('E_RECEIPT_WRITE', file, `cannot create its folder: ${describeFsError(error)}`, { cause: error });
  }
  await writeFileAtomically(file, envelopeTextPieces(envelope), overwrite);
  return {
    file,
    keyid: keyIdOf(options.privateKey),
    // Parsed from the signed bytes only when asked for (a long run's statement is tens of MB as objects).
    get statement(): Statement {
      return JSON.parse(payload.toString('utf8')) as Statement;
    },
    payloadSha256: sha256Bytes(payload),
  };
}

export interface ReadEnvelope {
  envelope: DsseEnvelope;
  /** The file's exact bytes. */
  bytes: Buffer;
}

/** Reads and shape-checks a receipt file. ReceiptError when it is unreadable or no envelope. */
export async function readEnvelope(file: string): Promise<ReadEnvelope> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file, MAX_RECEIPT_BYTES);
  } catch (error) {
    if (error instanceof ReceiptError) throw error;
    throw new ReceiptError('E_RECEIPT_READ', file, `cannot read the receipt: ${describeFsError(error)}`, { cause: error });
  }
  return parseEnvelope(bytes, file);
}

/**
 * Shape-checks a receipt's exact bytes (from a file, or a text handed over by the app);
 * `source` names them in errors. ReceiptError when they are empty, not JSON or no envelope.
 */
export function parseEnvelope(bytes: Buffer, source: string): ReadEnvelope {
  if (bytes.length === 0) throw new ReceiptError('E_RECEIPT_JSON', source, 'is empty; a receipt is a DSSE envelope (JSON)');
  if (bytes.length > MAX_RECEIPT_BYTES) throw new ReceiptError('E_RECEIPT_READ', source, `is ${bytes.length} bytes, larger than any receipt; wrong file?`);
  let json: unknown;
  try {
    // ignoreBOM keeps a byte-order mark in the text, where JSON.parse refuses it.
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch (error) {
    throw new ReceiptError('E_RECEIPT_JSON', source, `is not a JSON receipt (${(error as Error).message})`, { cause: error });
  }
  const parsed = DsseEnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${formatFieldPath(issue.path)}: ${issue.message}`);
    throw new ReceiptError('E_ENVELOPE_SCHEMA', source, `is not a DSSE envelope: ${issues.join('; ')}`);
  }
  return { envelope: parsed.data, bytes };
}

export interface VerifyReceiptOptions {
  /** A public KeyObject or the path of a PEM public key. Default: the per-user key's .pub. */
  publicKey?: KeyObject | string;
  /** Files and folders holding the subjects to re-hash (see subject-files.ts for matching). */
  subjectFiles?: readonly string[];
  /** Environment for the default user key (TRACE_INSPECTOR_CONFIG_DIR, XDG_CONFIG_HOME, HOME). */
  env?: Env;
}

export interface PublicKeyUsed {
  /** 'option': a KeyObject handed in; 'file': --pubkey; 'default-user-key': the fallback. */
  source: 'option' | 'file' | 'default-user-key';
  /** The PEM file, when the key came from one. */
  path: string | null;
  keyid: string;
}

/**
 * The checks verification ran, in order; a check that was not run (the statement after a bad
 * signature, the subjects when no files were given) is absent.
 *   envelope      the bytes are exactly the envelope trace-inspector writes
 *   payload_type  the in-toto payload type
 *   signature     an Ed25519 signature by the key over the decoded payload
 *   statement     the signed payload is a canonical in-toto Statement v1 of a gate receipt
 *   subjects      the given files' sha256 against the statement's subjects
 */
export interface ReceiptCheck {
  name: 'envelope' | 'payload_type' | 'signature' | 'statement' | 'subjects';
  ok: boolean;
  /** Its share of `reasons`; empty when ok. */
  reasons: string[];
}

export interface ReceiptVerification {
  ok: boolean;
  /** Why verification failed, one sentence each; empty when ok. */
  reasons: string[];
  checks: ReceiptCheck[];
  /** The signed statement, only when the signature verified and the statement is valid. */
  statement: Statement | null;
  /** keyid of the public key the signature was checked with. */
  keyid: string;
  publicKey: PublicKeyUsed;
  subjectsChecked: SubjectCheck[];
  /** Subjects no given file or folder held (always every subject when none were given). */
  subjectsNotChecked: string[];
  /** Of subjectsNotChecked, those the given folders were searched for and do not hold at their recorded path. */
  subjectsNotFound: string[];
}

function resolvePublicKey(option: KeyObject | string | undefined, env: Env): { key: KeyObject; used: Omit<PublicKeyUsed, 'keyid'> } {
  if (typeof option === 'string') return { key: loadPublicKey(option), used: { source: 'file', path: option } };
  if (option !== undefined) {
    const key = option.type === 'private' ? createPublicKey(option) : option;
    if (key.type !== 'public' || key.asymmetricKeyType !== 'ed25519') {
      throw new ReceiptError('E_KEY_TYPE', '<public key>', `expected an Ed25519 public key, got ${key.asymmetricKeyType ?? key.type}`);
    }
    return { key, used: { source: 'option', path: null } };
  }
  const { publicKeyPath } = defaultUserKeyPaths(env);
  if (!existsSync(publicKeyPath)) {
    throw new ReceiptError('E_NO_PUBLIC_KEY', publicKeyPath, 'no public key was given (--pubkey <pem>) and there is no default user key here to fall back to');
  }
  return { key: loadPublicKey(publicKeyPath), used: { source: 'default-user-key', path: publicKeyPath } };
}

/** The statement in verified payload bytes, or the reasons it cannot be trusted as one. */
function readStatement(payload: Buffer): { statement: Statement | null; reasons: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload));
  } catch (error) {
    return { statement: null, reasons: [`the signed payload is not JSON (${(error as Error).message})`] };
  }
  // We sign canonical JSON only. Anything else (duplicate keys, numbers that do not
  // round-trip) could read differently in another parser, so it is not interpreted.
  let canonical: Buffer | null = null;
  try {
    canonical = canonicalJsonBytes(json);
  } catch {
    canonical = null;
  }
  if (canonical === null || !canonical.equals(payload)) {
    return { statement: null, reasons: ['the signed payload is not canonical JSON (not written by trace-inspector); it is not interpreted'] };
  }
  const parsed = StatementSchema.safeParse(json);
  if (!parsed.success) {
    return { statement: null, reasons: describeZodIssues(parsed.error).map((issue) => `the signed statement is not a gate receipt statement: ${issue}`) };
  }
  return { statement: parsed.data, reasons: [] };
}

export async function verifyReceipt(file: string, options: VerifyReceiptOptions = {}): Promise<ReceiptVerification> {
  return verifyEnvelopeBytes(await readEnvelope(file), options);
}

/** verifyReceipt over bytes already read and shape-checked (parseEnvelope). */
export async function verifyEnvelopeBytes(read: ReadEnvelope, options: VerifyReceiptOptions = {}): Promise<ReceiptVerification> {
  const { envelope, bytes } = read;
  const { key, used } = resolvePublicKey(options.publicKey, options.env ?? process.env);
  const keyid = keyIdOf(key);
  const checks: ReceiptCheck[] = [];
  const check = (name: ReceiptCheck['name'], reasons: string[]): void => {
    checks.push({ name, ok: reasons.length === 0, reasons });
  };
  let statement: Statement | null = null;

  // Bytes outside the signed payload (whitespace, key order, a keyid) are not covered by the
  // signature; requiring the exact bytes we write makes any changed byte of the file fail.
  check(
    'envelope',
    Buffer.from(serializeEnvelope(envelope), 'utf8').equals(bytes)
      ? []
      : ['the envelope file is not byte-identical to the envelope trace-inspector writes (reformatted or edited outside the signed payload)'],
  );
  check(
    'payload_type',
    envelope.payloadType === IN_TOTO_PAYLOAD_TYPE ? [] : [`payloadType is "${envelope.payloadType}"; a trace-inspector receipt has "${IN_TOTO_PAYLOAD_TYPE}"`],
  );
  const signature = verifyEnvelope(envelope, key);
  check('signature', signature.ok ? [] : signature.reasons);
  if (signature.ok && envelope.payloadType === IN_TOTO_PAYLOAD_TYPE) {
    const read = readStatement(signature.payload);
    statement = read.statement;
    check('statement', read.reasons);
  }

  let subjectsChecked: SubjectCheck[] = [];
  let subjectsNotChecked: string[] = statement?.subject.map((subject) => subject.name) ?? [];
  let subjectsNotFound: string[] = [];
  const subjectFiles = options.subjectFiles ?? [];
  if (subjectFiles.length > 0) {
    if (statement === null) {
      check('subjects', ['subject files were not checked: the receipt did not verify, so its subject digests cannot be trusted']);
    } else {
      const result = await checkSubjectFiles(statement.subject, subjectFiles);
      subjectsChecked = result.checks;
      subjectsNotChecked = result.notChecked;
      subjectsNotFound = result.notFound;
      check('subjects', result.reasons);
    }
  }
  const reasons = checks.flatMap((item) => item.reasons);
  return { ok: reasons.length === 0, reasons, checks, statement, keyid, publicKey: { ...used, keyid }, subjectsChecked, subjectsNotChecked, subjectsNotFound };
}

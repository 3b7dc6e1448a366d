// Verifies a receipt handed over as text (the app's "verify a receipt" pane), with the same
// checks as `trace-inspector verify` (receipt.ts verifyEnvelopeBytes), one line per check:
//   envelope     the text is a DSSE envelope, byte for byte as trace-inspector writes it
//   public key   the key the signature is checked with (given PEM, or the per-user default)
//   payload type / signature / statement
//   subject <n>  each subject's sha256 against its file here, when the file is known
//                (session-subject-files.ts); a subject with no file here is "not checked", as
//                in the CLI, which is not a failure.
// Anything wrong with the inputs (not JSON, not an envelope, a bad key) is a failed check, never
// a throw: the user pasted it, the answer is "not verified, because ...".
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { ReceiptVerify } from '../../protocol/inspector-api.ts';
import { keyIdOf } from '../core/receipt/dsse.ts';
import { ReceiptError } from '../core/receipt/errors.ts';
import type { Statement } from '../core/receipt/in-toto.ts';
import { defaultUserKeyPaths, loadPublicKey, parsePublicKeyPem } from '../core/receipt/keys.ts';
import { parseEnvelope, verifyEnvelopeBytes, type ReadEnvelope, type ReceiptCheck } from '../core/receipt/receipt.ts';
import { hashSubject } from '../core/receipt/subject-files.ts';
import { locateSubjectFile } from './session-subject-files.ts';

type Check = ReceiptVerify['checks'][number];

const RECEIPT_SOURCE = 'the receipt text';
const KEY_SOURCE = 'the public key text';

const CHECK_NAMES: Readonly<Record<ReceiptCheck['name'], string>> = {
  envelope: 'envelope',
  payload_type: 'payload type',
  signature: 'signature',
  statement: 'statement',
  subjects: 'subjects',
};

const OK_DETAILS: Readonly<Record<ReceiptCheck['name'], string>> = {
  envelope: 'ok: byte-identical to the envelope trace-inspector writes',
  payload_type: 'ok: application/vnd.in-toto+json',
  signature: 'ok: Ed25519 signature over the payload',
  statement: 'ok: in-toto Statement v1, predicate https://trace-inspector.dev/gate-receipt/v1',
  subjects: 'ok',
};

function notVerified(checks: Check[]): ReceiptVerify {
  const failed = checks.find((check) => !check.ok);
  return { ok: false, checks, message: `NOT VERIFIED: ${failed === undefined ? 'no check passed' : `${failed.name}: ${failed.detail}`}` };
}

/** The key to verify with, or the failed check saying why there is none. */
function resolveKey(publicKeyPem: string | null): { key: KeyObject; check: Check } | { key: null; check: Check } {
  try {
    if (publicKeyPem !== null) {
      const key = parsePublicKeyPem(publicKeyPem, KEY_SOURCE);
      return { key, check: { name: 'public key', ok: true, detail: `ok: the given key, keyid ${keyIdOf(key)}` } };
    }
    const { publicKeyPath } = defaultUserKeyPaths(process.env);
    if (!existsSync(publicKeyPath)) {
      return {
        key: null,
        check: { name: 'public key', ok: false, detail: `no public key was given and there is no per-user default key at ${publicKeyPath}` },
      };
    }
    const key = loadPublicKey(publicKeyPath);
    return { key, check: { name: 'public key', ok: true, detail: `ok: your per-user default key ${publicKeyPath}, keyid ${keyIdOf(key)}` } };
  } catch (error) {
    if (!(error instanceof ReceiptError)) throw error;
    return { key: null, check: { name: 'public key', ok: false, detail: error.message } };
  }
}

async function subjectChecks(statement: Statement): Promise<Check[]> {
  const checks: Check[] = [];
  for (const subject of statement.subject) {
    const name = `subject ${subject.name}`;
    const file = locateSubjectFile(subject.name);
    if (file === null) {
      checks.push({ name, ok: true, detail: 'not checked: no file for it on this machine' });
      continue;
    }
    try {
      const actual = (await hashSubject(file, subject.name)).digest.sha256;
      checks.push(
        actual === subject.digest.sha256
          ? { name, ok: true, detail: `ok: sha256 ${actual} (${file})` }
          : { name, ok: false, detail: `changed: ${file} has sha256 ${actual}, the receipt says ${subject.digest.sha256}` },
      );
    } catch (error) {
      if (!(error instanceof ReceiptError)) throw error;
      checks.push({ name, ok: false, detail: error.message });
    }
  }
  return checks;
}

const SealsSchema = z.object({ seals: z.array(z.string()) });

export async function verifyReceiptText(input: { envelope: string; publicKeyPem: string | null }): Promise<ReceiptVerify> {
  let read: ReadEnvelope;
  try {
    read = parseEnvelope(Buffer.from(input.envelope, 'utf8'), RECEIPT_SOURCE);
  } catch (error) {
    if (!(error instanceof ReceiptError)) throw error;
    return notVerified([{ name: 'envelope', ok: false, detail: error.message }]);
  }
  const { key, check: keyCheck } = resolveKey(input.publicKeyPem);
  if (key === null) return notVerified([keyCheck]);

  const result = await verifyEnvelopeBytes(read, { publicKey: key });
  const checks: Check[] = [];
  for (const item of result.checks) {
    checks.push({ name: CHECK_NAMES[item.name], ok: item.ok, detail: item.ok ? OK_DETAILS[item.name] : item.reasons.join('; ') });
    // The key belongs right before the signature it checks.
    if (item.name === 'payload_type') checks.push(keyCheck);
  }
  if (result.statement === null) {
    // The payload is read only under a verified signature and type: say so rather than leave the line out.
    if (!result.checks.some((item) => item.name === 'statement')) {
      checks.push({ name: 'statement', ok: false, detail: 'not read: the checks above failed, so the payload cannot be trusted' });
    }
    return notVerified(checks);
  }
  checks.push(...(await subjectChecks(result.statement)));
  if (checks.some((check) => !check.ok)) return notVerified(checks);
  const seals = SealsSchema.safeParse(result.statement.predicate);
  return { ok: true, checks, message: `VERIFIED (keyid ${result.keyid})${seals.success ? `: ${seals.data.seals.join(', ')}` : ''}` };
}

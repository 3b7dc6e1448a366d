// Shared pieces of the receipt tests: temp folders, key files of every wrong kind, a small
// realistic receipt, and a CliIO that records what a command prints.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { CliIO } from '../../main/cli/cli-io.ts';
import { ReceiptError, type ReceiptErrorCode } from '../../main/core/receipt/errors.ts';
import type { Subject } from '../../main/core/receipt/in-toto.ts';
import { hashSubject } from '../../main/core/receipt/subject-files.ts';
import { tempDirTracker } from '../helpers/paths.ts';

export const { tempDir, removeTempDirs } = tempDirTracker('receipt');

export function ed25519Pair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ed25519');
}

/** PEM files that are not Ed25519 private keys, each with what the error must say. */
export function wrongPrivateKeyFiles(dir: string): { label: string; path: string; code: ReceiptErrorCode; says: string }[] {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const x25519 = generateKeyPairSync('x25519');
  const ed = generateKeyPairSync('ed25519');
  const files: [string, string | Buffer, ReceiptErrorCode, string][] = [
    ['rsa-pkcs8', rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }), 'E_KEY_TYPE', 'RSA'],
    ['rsa-pkcs1', rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }), 'E_KEY_TYPE', 'RSA'],
    ['ec-p256', ec.privateKey.export({ type: 'pkcs8', format: 'pem' }), 'E_KEY_TYPE', 'EC'],
    ['ec-sec1', ec.privateKey.export({ type: 'sec1', format: 'pem' }), 'E_KEY_TYPE', 'EC'],
    ['x25519', x25519.privateKey.export({ type: 'pkcs8', format: 'pem' }), 'E_KEY_TYPE', 'X25519'],
    ['ed25519-public', ed.publicKey.export({ type: 'spki', format: 'pem' }), 'E_KEY_FORMAT', 'public key'],
    ['ed25519-der', ed.privateKey.export({ type: 'pkcs8', format: 'der' }), 'E_KEY_FORMAT', 'not a PEM'],
    ['garbage', 'this is not a key\n', 'E_KEY_FORMAT', 'not a PEM'],
    ['empty', '', 'E_KEY_FORMAT', 'not a PEM'],
    ['broken-pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', 'E_KEY_FORMAT', 'not a readable PEM private key'],
    ['encrypted', ed.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }), 'E_KEY_FORMAT', 'encrypted'],
  ];
  mkdirSync(dir, { recursive: true });
  return files.map(([label, content, code, says]) => {
    const path = join(dir, `${label}.pem`);
    writeFileSync(path, content);
    return { label, path, code, says };
  });
}

/** Asserts `action` throws a ReceiptError with `code` whose file is `file` and message names it. */
export async function expectReceiptError(action: () => unknown, code: ReceiptErrorCode, file: string): Promise<ReceiptError> {
  let thrown: unknown;
  try {
    await action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected ${code} for ${file}`).toBeInstanceOf(ReceiptError);
  const error = thrown as ReceiptError;
  expect(error.code).toBe(code);
  expect(error.file).toBe(file);
  expect(error.message).toContain(file);
  return error;
}

/** Three subject files like the gate's (engine library, reference manifest, weights). */
export async function writeSubjectFiles(dir: string): Promise<{ files: Record<string, string>; subjects: Subject[] }> {
  mkdirSync(join(dir, 'reference'), { recursive: true });
  const contents: Record<string, Buffer> = {
    'libengine.so': Buffer.from('\x7fELF pretend engine library \x00\x01\x02'),
    'reference/manifest.json': Buffer.from('{"schema":"trace-inspector.bundle"}\n'),
    'weights.safetensors': Buffer.alloc(4096, 7),
  };
  const files: Record<string, string> = {};
  const subjects: Subject[] = [];
  for (const [name, bytes] of Object.entries(contents)) {
    const path = join(dir, name);
    files[name] = path;
    writeFileSync(path, bytes);
    subjects.push(await hashSubject(path, name));
  }
  return { files, subjects };
}

/** A predicate shaped like the gate's, with the non-finite statistics a receipt must keep. */
export function samplePredicate(): Record<string, unknown> {
  return {
    seals: ['FIDELITY: OK', 'OVERALL: PASSED'],
    gaps: [],
    strict: false,
    tool: { name: 'trace-inspector', version: '0.1.0', commit: 'a10b415' },
    times: { started: '2025-01-01T00:00:00.000Z', finished: '2025-01-01T00:00:01.500Z' },
    boundaries: [
      { pass: 0, boundary: 'backbone.logits', verdict: 'PASS', max_abs: 1.5e-7, max_ulp: 2, rmse: -0 },
      { pass: 0, boundary: 'nan_inf.probe', verdict: 'PASS', max_abs: NaN, max_ulp: Infinity, min: -Infinity },
    ],
  };
}

export interface RecordingIO extends CliIO {
  out: () => string;
  err: () => string;
}

export function recordingIO(cwd: string, env: Record<string, string | undefined>): RecordingIO {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    stderrIsTTY: false,
    cwd,
    env,
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

// Ed25519 key files for receipts: PKCS#8 PEM private keys (mode 0600, never overwritten) and
// SPKI PEM public keys, the per-user default key, and loaders that refuse anything that is not
// the expected kind of Ed25519 key with an error naming the file.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, lstatSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { GuardedReadError, readRegularFileSync } from '../io/guarded-read.ts';
import { keyIdOf } from './dsse.ts';
import { ReceiptError, describeFsError, errnoCode } from './errors.ts';
import { createOutputFolderSync } from '../io/output-folder.ts';

export const PRIVATE_KEY_FILE = 'trace-inspector-ed25519.key';
export const PUBLIC_KEY_FILE = 'trace-inspector-ed25519.pub';
/** Environment variable that replaces the per-user config folder (tests, CI). */
export const CONFIG_DIR_ENV = 'TRACE_INSPECTOR_CONFIG_DIR';

const PRIVATE_KEY_MODE = 0o600;
const PUBLIC_KEY_MODE = 0o644;
const KEY_DIR_MODE = 0o700;
/** A PEM Ed25519 key is ~120 bytes; anything far larger is the wrong file. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

export type Env = Readonly<Record<string, string | undefined>>;

export interface KeyPairFiles {
  privateKeyPath: string;
  publicKeyPath: string;
  /** sha256 hex of the public key's SPKI DER: the keyid receipts carry. */
  keyid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface DefaultUserKey {
  privateKey: KeyObject;
  privateKeyPath: string;
  publicKeyPath: string;
  keyid: string;
  /** True when this call generated the key (the caller should say where it now lives). */
  created: boolean;
}

function pathExists(path: string): boolean {
  try {
    lstatSync(path); // lstat: a dangling symlink still occupies the name
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw new ReceiptError('E_KEY_READ', path, `cannot inspect: ${describeFsError(error)}`, { cause: error });
  }
}

function makeKeyDir(dir: string): void {
  try {
    createOutputFolderSync(dir, 'the key folder', KEY_DIR_MODE);
  } catch (error) {
    throw new ReceiptError('E_KEY_WRITE', dir, `cannot create the key folder: ${describeFsError(error)}`, { cause: error });
  }
}

/**
 * Creates `path` with exactly `mode` and writes `text`; O_EXCL makes it fail, atomically, when
 * the name is taken (even by a dangling symlink), so an existing key is never overwritten.
 */
function writeNewFile(path: string, text: string, mode: number): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', mode);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') throw new ReceiptError('E_KEY_EXISTS', path, 'already exists; refusing to overwrite a key file', { cause: error });
    throw new ReceiptError('E_KEY_WRITE', path, `cannot create: ${describeFsError(error)}`, { cause: error });
  }
  try {
    fchmodSync(fd, mode); // the umask may have removed bits; the mode must be exact
    const bytes = Buffer.from(text, 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(path);
    throw new ReceiptError('E_KEY_WRITE', path, `cannot write: ${describeFsError(error)}`, { cause: error });
  }
  closeSync(fd);
}

function publicPem(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'pem' }).toString();
}

/**
 * Generates an Ed25519 key pair into `outDir` (created with mode 0700 when missing):
 * trace-inspector-ed25519.key (PKCS#8 PEM, mode 0600) and trace-inspector-ed25519.pub (SPKI
 * PEM). Refuses with E_KEY_EXISTS, writing nothing, when either file exists.
 */
export function generateKeyPair(outDir: string): KeyPairFiles {
  const privateKeyPath = join(outDir, PRIVATE_KEY_FILE);
  const publicKeyPath = join(outDir, PUBLIC_KEY_FILE);
  makeKeyDir(outDir);
  for (const path of [privateKeyPath, publicKeyPath]) {
    if (pathExists(path))
      throw new ReceiptError('E_KEY_EXISTS', path, 'already exists; refusing to overwrite a key file (move it away or choose another --out)');
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeNewFile(privateKeyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), PRIVATE_KEY_MODE);
  try {
    writeNewFile(publicKeyPath, publicPem(publicKey), PUBLIC_KEY_MODE);
  } catch (error) {
    unlinkSync(privateKeyPath); // no half pair: the private key is useless without its .pub
    throw error;
  }
  return { privateKeyPath, publicKeyPath, keyid: keyIdOf(publicKey), privateKey, publicKey };
}

function readKeyText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readRegularFileSync(path, MAX_KEY_FILE_BYTES);
  } catch (error) {
    if (error instanceof GuardedReadError && error.problem === 'too_large') {
      throw new ReceiptError('E_KEY_FORMAT', path, `is larger than ${MAX_KEY_FILE_BYTES} bytes; not a PEM key file`, { cause: error });
    }
    throw new ReceiptError('E_KEY_READ', path, `cannot read the key file: ${describeFsError(error)}`, { cause: error });
  }
  const text = bytes.toString('utf8');
  requirePem(text, path);
  return text;
}

function requirePem(text: string, source: string): void {
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text)) throw new ReceiptError('E_KEY_FORMAT', source, 'is not a PEM key file (no "-----BEGIN ...-----" line)');
}

function requireEd25519(key: KeyObject, path: string, kind: 'private' | 'public'): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519') {
    const type = (key.asymmetricKeyType ?? 'unknown').toUpperCase();
    const article = /^[AEFHILMNORSX]/.test(type) ? 'an' : 'a'; // "an RSA", "an EC", "a DSA"
    throw new ReceiptError(
      'E_KEY_TYPE',
      path,
      `is ${article} ${type} ${kind} key; trace-inspector receipts use Ed25519 only (make one with: trace-inspector keygen --out <dir>)`,
    );
  }
  return key;
}

/** Loads an unencrypted PEM Ed25519 private key (PKCS#8 as written by keygen). */
export function loadPrivateKey(path: string): KeyObject {
  const text = readKeyText(path);
  if (!text.includes('PRIVATE KEY-----')) {
    const hint = text.includes('PUBLIC KEY-----') ? 'is a public key; signing needs the private key (the .key file)' : 'does not hold a PEM private key';
    throw new ReceiptError('E_KEY_FORMAT', path, hint);
  }
  if (text.includes('ENCRYPTED PRIVATE KEY-----')) {
    throw new ReceiptError('E_KEY_FORMAT', path, 'is an encrypted private key; trace-inspector reads unencrypted PKCS#8 PEM protected by file mode 0600');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch (error) {
    throw new ReceiptError('E_KEY_FORMAT', path, `is not a readable PEM private key (${(error as Error).message})`, { cause: error });
  }
  return requireEd25519(key, path, 'private');
}

/** Loads a PEM Ed25519 public key (SPKI as written by keygen). Refuses private keys. */
export function loadPublicKey(path: string): KeyObject {
  return parsePublicKeyPem(readKeyText(path), path);
}

/**
 * A PEM Ed25519 public key given as text (the app hands one over; `source` names it in errors),
 * with the same refusals as loadPublicKey.
 */
export function parsePublicKeyPem(text: string, source: string): KeyObject {
  requirePem(text, source);
  if (text.includes('PRIVATE KEY-----')) {
    throw new ReceiptError('E_KEY_FORMAT', source, 'is a private key; verifying needs only the public key (the .pub file) — do not hand out the private key');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch (error) {
    throw new ReceiptError('E_KEY_FORMAT', source, `is not a readable PEM public key (${(error as Error).message})`, { cause: error });
  }
  return requireEd25519(key, source, 'public');
}

/**
 * A warning when a private key file can be read by group or others (as ssh warns), else null.
 * Not an error: CI secrets are often written with the default umask.
 */
export function privateKeyModeWarning(path: string): string | null {
  if (process.platform === 'win32') return null;
  // chmod is advice for a key file; a device or FIFO is refused by the loader, never advised on.
  let info;
  try {
    info = statSync(path);
  } catch {
    return null;
  }
  if (!info.isFile()) return null;
  const mode = info.mode & 0o777;
  if ((mode & 0o077) === 0) return null;
  return `${path} is readable by other users (mode 0${mode.toString(8)}); run: chmod 600 ${path}`;
}

/**
 * The per-user config folder: $TRACE_INSPECTOR_CONFIG_DIR, else $XDG_CONFIG_HOME/trace-inspector
 * (an XDG path must be absolute; a relative one is ignored, as the XDG spec says), else
 * ~/.config/trace-inspector.
 */
export function userConfigDir(env: Env = process.env): string {
  const override = env[CONFIG_DIR_ENV];
  if (override !== undefined && override !== '') return resolve(override);
  const xdg = env['XDG_CONFIG_HOME'];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'trace-inspector');
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  return join(home, '.config', 'trace-inspector');
}

/** Where the per-user default key lives; looks only, creates nothing. */
export function defaultUserKeyPaths(env: Env = process.env): { dir: string; privateKeyPath: string; publicKeyPath: string } {
  const dir = userConfigDir(env);
  return { dir, privateKeyPath: join(dir, PRIVATE_KEY_FILE), publicKeyPath: join(dir, PUBLIC_KEY_FILE) };
}

/**
 * The per-user signing key, generated on first use (folder 0700, private key 0600). When the
 * private key exists but its .pub was deleted, the .pub is written again from it.
 */
export function defaultUserKey(env: Env = process.env): DefaultUserKey {
  const { dir, privateKeyPath, publicKeyPath } = defaultUserKeyPaths(env);
  makeKeyDir(dir);
  if (!pathExists(privateKeyPath)) {
    if (pathExists(publicKeyPath)) {
      throw new ReceiptError(
        'E_KEY_EXISTS',
        publicKeyPath,
        `exists without its private key ${privateKeyPath}; restore the private key, or remove the .pub to generate a new pair`,
      );
    }
    try {
      const pair = generateKeyPair(dir);
      return { privateKey: pair.privateKey, privateKeyPath, publicKeyPath, keyid: pair.keyid, created: true };
    } catch (error) {
      // Another process created the key between our check and our write: use theirs.
      if (!(error instanceof ReceiptError && error.code === 'E_KEY_EXISTS')) throw error;
    }
  }
  const privateKey = loadPrivateKey(privateKeyPath);
  const keyid = keyIdOf(privateKey);
  if (!pathExists(publicKeyPath)) {
    try {
      writeNewFile(publicKeyPath, publicPem(createPublicKey(privateKey)), PUBLIC_KEY_MODE);
    } catch (error) {
      if (!(error instanceof ReceiptError && error.code === 'E_KEY_EXISTS')) throw error;
    }
  }
  // verify falls back to this .pub: a .pub of another key would fail every receipt we sign.
  if (keyIdOf(loadPublicKey(publicKeyPath)) !== keyid) {
    throw new ReceiptError(
      'E_KEY_FORMAT',
      publicKeyPath,
      `is not the public half of ${privateKeyPath}; remove it and it will be written again from the private key`,
    );
  }
  return { privateKey, privateKeyPath, publicKeyPath, keyid, created: false };
}

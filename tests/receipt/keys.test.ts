// Key files: keygen writes a 0600 PKCS#8 private key and an SPKI public key and never overwrites;
// the loaders refuse every file that is not the expected Ed25519 key, naming the file; the
// per-user default key is created once (folder 0700, key 0600) and reused.
import { createPublicKey } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { keyIdOf } from '../../main/core/receipt/dsse.ts';
import {
  PRIVATE_KEY_FILE,
  PUBLIC_KEY_FILE,
  defaultUserKey,
  defaultUserKeyPaths,
  generateKeyPair,
  loadPrivateKey,
  loadPublicKey,
  privateKeyModeWarning,
  userConfigDir,
} from '../../main/core/receipt/keys.ts';
import { ed25519Pair, expectReceiptError, removeTempDirs, tempDir, wrongPrivateKeyFiles } from './receipt-fixtures.ts';

afterAll(removeTempDirs);

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('generateKeyPair', () => {
  it('writes a PKCS#8 PEM private key with mode 0600 and an SPKI PEM public key of the same pair', () => {
    const dir = join(tempDir('keygen'), 'new', 'keys');
    const pair = generateKeyPair(dir);
    expect(pair.privateKeyPath).toBe(join(dir, PRIVATE_KEY_FILE));
    expect(pair.publicKeyPath).toBe(join(dir, PUBLIC_KEY_FILE));
    expect(PRIVATE_KEY_FILE).toBe('trace-inspector-ed25519.key');
    expect(PUBLIC_KEY_FILE).toBe('trace-inspector-ed25519.pub');
    expect(modeOf(pair.privateKeyPath)).toBe(0o600);
    expect(modeOf(dir)).toBe(0o700);
    expect(readFileSync(pair.privateKeyPath, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readFileSync(pair.publicKeyPath, 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const privateKey = loadPrivateKey(pair.privateKeyPath);
    const publicKey = loadPublicKey(pair.publicKeyPath);
    expect(keyIdOf(privateKey)).toBe(pair.keyid);
    expect(keyIdOf(publicKey)).toBe(pair.keyid);
    expect(privateKeyModeWarning(pair.privateKeyPath)).toBeNull();
  });

  // process.umask cannot be changed from a worker thread (vitest's "threads" pool).
  it.skipIf(!isMainThread)('makes the private key 0600 even under a permissive umask', () => {
    const previous = process.umask(0o000);
    try {
      const pair = generateKeyPair(tempDir('umask'));
      expect(modeOf(pair.privateKeyPath)).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('refuses to overwrite an existing private key, leaving both files as they were', async () => {
    const dir = tempDir('no-overwrite');
    const first = generateKeyPair(dir);
    const privateBefore = readFileSync(first.privateKeyPath);
    const publicBefore = readFileSync(first.publicKeyPath);
    await expectReceiptError(() => generateKeyPair(dir), 'E_KEY_EXISTS', first.privateKeyPath);
    expect(readFileSync(first.privateKeyPath)).toEqual(privateBefore);
    expect(readFileSync(first.publicKeyPath)).toEqual(publicBefore);
  });

  it('refuses when only the public key exists, writing no private key', async () => {
    const dir = tempDir('pub-only');
    writeFileSync(join(dir, PUBLIC_KEY_FILE), 'precious');
    await expectReceiptError(() => generateKeyPair(dir), 'E_KEY_EXISTS', join(dir, PUBLIC_KEY_FILE));
    expect(existsSync(join(dir, PRIVATE_KEY_FILE))).toBe(false);
    expect(readFileSync(join(dir, PUBLIC_KEY_FILE), 'utf8')).toBe('precious');
  });

  it('refuses a dangling symlink in place of the private key (never writes through it)', async () => {
    const dir = tempDir('symlink');
    const target = join(dir, 'elsewhere.key');
    symlinkSync(target, join(dir, PRIVATE_KEY_FILE));
    await expectReceiptError(() => generateKeyPair(dir), 'E_KEY_EXISTS', join(dir, PRIVATE_KEY_FILE));
    expect(existsSync(target)).toBe(false);
  });
});

describe('loadPrivateKey', () => {
  const dir = tempDir('wrong-keys');
  const cases = wrongPrivateKeyFiles(dir);

  it.each(cases.map((entry) => [entry.label, entry] as const))('refuses %s with a ReceiptError naming the file', async (_label, entry) => {
    const error = await expectReceiptError(() => loadPrivateKey(entry.path), entry.code, entry.path);
    expect(error.message).toContain(entry.says);
  });

  it('refuses a missing file and a folder with E_KEY_READ', async () => {
    const missing = join(dir, 'missing.key');
    expect((await expectReceiptError(() => loadPrivateKey(missing), 'E_KEY_READ', missing)).message).toContain('does not exist');
    await expectReceiptError(() => loadPrivateKey(dir), 'E_KEY_READ', dir);
  });

  it('refuses a huge file without reading it as a key', async () => {
    const huge = join(dir, 'huge.key');
    writeFileSync(huge, Buffer.alloc(1024 * 1024, 0x41));
    await expectReceiptError(() => loadPrivateKey(huge), 'E_KEY_FORMAT', huge);
  });

  it('warns about a private key other users can read', () => {
    const pair = generateKeyPair(tempDir('loose'));
    chmodSync(pair.privateKeyPath, 0o644);
    expect(privateKeyModeWarning(pair.privateKeyPath)).toContain('chmod 600');
    expect(loadPrivateKey(pair.privateKeyPath).asymmetricKeyType).toBe('ed25519');
  });
});

describe('loadPublicKey', () => {
  it('refuses a private key (a verifier never needs one), an RSA public key and garbage, naming the file', async () => {
    const dir = tempDir('wrong-pub');
    const pair = generateKeyPair(dir);
    await expectReceiptError(() => loadPublicKey(pair.privateKeyPath), 'E_KEY_FORMAT', pair.privateKeyPath);
    const rsaPath = join(dir, 'rsa.pub');
    const rsa = wrongPrivateKeyFiles(join(dir, 'wrong')).find((entry) => entry.label === 'rsa-pkcs8');
    writeFileSync(rsaPath, publicPemOf(rsa?.path ?? ''));
    expect((await expectReceiptError(() => loadPublicKey(rsaPath), 'E_KEY_TYPE', rsaPath)).message).toContain('RSA public key');
    const garbage = join(dir, 'garbage.pub');
    writeFileSync(garbage, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 user@host\n');
    await expectReceiptError(() => loadPublicKey(garbage), 'E_KEY_FORMAT', garbage);
  });
});

/** The SPKI PEM public half of a PEM private key file (node:crypto, no openssl). */
function publicPemOf(privatePemPath: string): string {
  return createPublicKey(readFileSync(privatePemPath, 'utf8')).export({ type: 'spki', format: 'pem' }).toString();
}

describe('the per-user default key', () => {
  it('lives in $TRACE_INSPECTOR_CONFIG_DIR, else $XDG_CONFIG_HOME/trace-inspector, else ~/.config/trace-inspector', () => {
    expect(userConfigDir({ TRACE_INSPECTOR_CONFIG_DIR: '/tmp/ti-conf', XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/tmp/ti-conf');
    expect(userConfigDir({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/x/trace-inspector');
    expect(userConfigDir({ XDG_CONFIG_HOME: 'relative/ignored', HOME: '/h' })).toBe('/h/.config/trace-inspector');
    expect(userConfigDir({ HOME: '/h' })).toBe('/h/.config/trace-inspector');
    expect(defaultUserKeyPaths({ HOME: '/h' }).privateKeyPath).toBe('/h/.config/trace-inspector/trace-inspector-ed25519.key');
  });

  it('is created on first use (folder 0700, key 0600) and reused afterwards', () => {
    const configDir = join(tempDir('default'), 'config', 'trace-inspector');
    const env = { TRACE_INSPECTOR_CONFIG_DIR: configDir };
    const first = defaultUserKey(env);
    expect(first.created).toBe(true);
    expect(first.privateKeyPath).toBe(join(configDir, PRIVATE_KEY_FILE));
    expect(first.publicKeyPath).toBe(join(configDir, PUBLIC_KEY_FILE));
    expect(modeOf(configDir)).toBe(0o700);
    expect(modeOf(first.privateKeyPath)).toBe(0o600);
    const second = defaultUserKey(env);
    expect(second.created).toBe(false);
    expect(second.keyid).toBe(first.keyid);
    expect(keyIdOf(loadPublicKey(second.publicKeyPath))).toBe(first.keyid);
  });

  it('follows XDG_CONFIG_HOME when there is no override', () => {
    const xdg = tempDir('xdg');
    const key = defaultUserKey({ XDG_CONFIG_HOME: xdg, HOME: '/nonexistent-home' });
    expect(key.privateKeyPath).toBe(join(xdg, 'trace-inspector', PRIVATE_KEY_FILE));
  });

  it('writes its .pub again from the private key when the .pub was deleted', () => {
    const env = { TRACE_INSPECTOR_CONFIG_DIR: tempDir('repub') };
    const first = defaultUserKey(env);
    rmSync(first.publicKeyPath);
    const again = defaultUserKey(env);
    expect(again.created).toBe(false);
    expect(keyIdOf(loadPublicKey(again.publicKeyPath))).toBe(first.keyid);
  });

  it('refuses a .pub that belongs to another key, and a .pub without its private key', async () => {
    const env = { TRACE_INSPECTOR_CONFIG_DIR: tempDir('mismatch') };
    const first = defaultUserKey(env);
    writeFileSync(first.publicKeyPath, ed25519Pair().publicKey.export({ type: 'spki', format: 'pem' }));
    await expectReceiptError(() => defaultUserKey(env), 'E_KEY_FORMAT', first.publicKeyPath);
    rmSync(first.privateKeyPath);
    await expectReceiptError(() => defaultUserKey(env), 'E_KEY_EXISTS', first.publicKeyPath);
    expect(existsSync(first.privateKeyPath)).toBe(false);
  });

  it('refuses a default key file that is not Ed25519, naming it', async () => {
    const configDir = tempDir('default-rsa');
    mkdirSync(configDir, { recursive: true });
    const rsa = wrongPrivateKeyFiles(join(configDir, 'wrong')).find((entry) => entry.label === 'rsa-pkcs8');
    writeFileSync(join(configDir, PRIVATE_KEY_FILE), readFileSync(rsa?.path ?? ''));
    await expectReceiptError(() => defaultUserKey({ TRACE_INSPECTOR_CONFIG_DIR: configDir }), 'E_KEY_TYPE', join(configDir, PRIVATE_KEY_FILE));
  });
});

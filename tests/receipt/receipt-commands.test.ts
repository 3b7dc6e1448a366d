// `verify` and `keygen` as the CLI will run them: exit 0 verified, 1 not verified with the
// reasons printed, InputError (exit 2 in run-cli) for bad usage or unreadable input.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeygenCommand } from '../../main/cli/commands/keygen-command.ts';
import { runVerifyCommand } from '../../main/cli/commands/verify-command.ts';
import type { Subject } from '../../main/core/receipt/in-toto.ts';
import { defaultUserKey, generateKeyPair, loadPrivateKey } from '../../main/core/receipt/keys.ts';
import { writeReceipt } from '../../main/core/receipt/receipt.ts';
import { hashSubject } from '../../main/core/receipt/subject-files.ts';
import { BUNDLES_DIR, CASES } from '../helpers/paths.ts';
import { mkfifo } from '../security/hostile-fixtures.ts';
import { recordingIO, removeTempDirs, samplePredicate, tempDir, writeSubjectFiles } from './receipt-fixtures.ts';
import { InputError } from '../../main/core/io/input-error.ts';

afterAll(removeTempDirs);

let work: string;
let subjects: Subject[];
let subjectFiles: Record<string, string>;

beforeAll(async () => {
  work = tempDir('commands');
  ({ subjects, files: subjectFiles } = await writeSubjectFiles(join(work, 'subjects')));
});

async function usageError(action: Promise<number>, expected: string): Promise<void> {
  await expect(action).rejects.toBeInstanceOf(InputError);
  await expect(action).rejects.toThrow(expected);
}

describe('trace-inspector keygen', () => {
  it('writes the pair into --out (relative to the cwd) and prints both paths and the keyid', async () => {
    const io = recordingIO(work, {});
    expect(await runKeygenCommand(['--out', 'keys'], io)).toBe(0);
    const keyPath = join(work, 'keys', 'trace-inspector-ed25519.key');
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(io.out()).toContain(`private key ${keyPath}`);
    expect(io.out()).toContain(join(work, 'keys', 'trace-inspector-ed25519.pub'));
    expect(io.out()).toMatch(/keyid {7}[0-9a-f]{64}\n/);
  });

  it('refuses to overwrite (InputError naming the key file), leaving it unchanged', async () => {
    const keyPath = join(work, 'keys', 'trace-inspector-ed25519.key');
    const before = readFileSync(keyPath);
    await usageError(runKeygenCommand(['--out', join(work, 'keys')], recordingIO(work, {})), keyPath);
    expect(readFileSync(keyPath)).toEqual(before);
  });

  it('defaults to the per-user key folder', async () => {
    const configDir = join(tempDir('keygen-default'), 'conf');
    const io = recordingIO(work, { TRACE_INSPECTOR_CONFIG_DIR: configDir });
    expect(await runKeygenCommand([], io)).toBe(0);
    expect(existsSync(join(configDir, 'trace-inspector-ed25519.key'))).toBe(true);
  });

  it.each([
    [['--frobnicate'], 'frobnicate'],
    [['stray'], 'stray'],
    [['--out'], '--out'],
  ])('rejects bad usage %j', async (argv, expected) => {
    await usageError(runKeygenCommand(argv, recordingIO(work, {})), expected);
  });
});

describe('trace-inspector verify', () => {
  let receipt: string;
  const pubkey = (): string => join(work, 'keys', 'trace-inspector-ed25519.pub');

  beforeAll(async () => {
    receipt = join(work, 'gate-receipt.json');
    const privateKey = loadPrivateKey(join(work, 'keys', 'trace-inspector-ed25519.key'));
    await writeReceipt(receipt, { subjects, predicate: samplePredicate(), privateKey });
  });

  it('exits 0 and prints VERIFIED, the key, each subject and the seals', async () => {
    const io = recordingIO(work, {});
    const code = await runVerifyCommand(['gate-receipt.json', '--pubkey', 'keys/trace-inspector-ed25519.pub', '--subjects', 'subjects'], io);
    expect(io.out()).toContain('VERIFIED');
    expect(code).toBe(0);
    expect(io.out()).toContain(`public key ${pubkey()}, keyid `);
    expect(io.out()).toMatch(/subject {4}weights\.safetensors: OK sha256 [0-9a-f]{64}/);
    expect(io.out()).toContain('sealed     OVERALL: PASSED');
    expect(io.out()).not.toContain('NOT VERIFIED');
  });

  it('accepts several --subjects and says which subjects it did not check', async () => {
    const io = recordingIO(work, {});
    const weights = subjectFiles['weights.safetensors'] ?? '';
    const engine = subjectFiles['libengine.so'] ?? '';
    expect(await runVerifyCommand([receipt, '--pubkey', pubkey(), '--subjects', weights, '--subjects', engine], io)).toBe(0);
    expect(io.out()).toContain('subject    reference/manifest.json: not checked (no file given)');
  });

  it('exits 1 and prints the reason when a subject changed', async () => {
    const copy = tempDir('verify-changed');
    const { files } = await writeSubjectFiles(copy);
    writeFileSync(files['libengine.so'] ?? '', 'a different engine');
    const io = recordingIO(work, {});
    expect(await runVerifyCommand([receipt, '--pubkey', pubkey(), '--subjects', copy], io)).toBe(1);
    expect(io.out()).toContain('NOT VERIFIED');
    expect(io.out()).toContain('subject "libengine.so" changed');
    expect(io.out()).not.toContain('sealed'); // no "OVERALL: PASSED" beside a changed subject
  });

  it('exits 1 with another key', async () => {
    const otherDir = tempDir('other-key');
    await runKeygenCommand(['--out', otherDir], recordingIO(work, {}));
    const io = recordingIO(work, {});
    expect(await runVerifyCommand([receipt, '--pubkey', join(otherDir, 'trace-inspector-ed25519.pub')], io)).toBe(1);
    expect(io.out()).toContain('no signature by the public key used');
  });

  it('falls back to the default user key and names it', async () => {
    const env = { TRACE_INSPECTOR_CONFIG_DIR: tempDir('verify-default-cli') };
    const userKey = defaultUserKey(env);
    const signed = join(work, 'default-signed.json');
    await writeReceipt(signed, { subjects, predicate: {}, privateKey: userKey.privateKey });
    const io = recordingIO(work, env);
    expect(await runVerifyCommand([signed], io)).toBe(0);
    expect(io.out()).toContain(`public key ${userKey.publicKeyPath} (your default user key)`);
  });

  it('bad usage and unreadable input are UsageErrors (exit 2) naming the file', async () => {
    const notJson = join(work, 'not-a-receipt.txt');
    writeFileSync(notJson, 'hello');
    await usageError(runVerifyCommand([], recordingIO(work, {})), 'expected exactly one receipt file, got none');
    await usageError(runVerifyCommand([receipt, 'extra'], recordingIO(work, {})), 'expected exactly one receipt file, got 2');
    await usageError(runVerifyCommand([receipt, '--frobnicate'], recordingIO(work, {})), 'frobnicate');
    await usageError(runVerifyCommand([notJson, '--pubkey', pubkey()], recordingIO(work, {})), notJson);
    await usageError(runVerifyCommand([receipt, '--pubkey', join(work, 'missing.pub')], recordingIO(work, {})), join(work, 'missing.pub'));
    const noKeyEnv = { TRACE_INSPECTOR_CONFIG_DIR: join(tempDir('no-key'), 'absent') };
    await usageError(runVerifyCommand([receipt], recordingIO(work, noKeyEnv)), '--pubkey');
    await usageError(runVerifyCommand([receipt, '--pubkey', pubkey(), '--subjects', join(work, 'absent-dir')], recordingIO(work, {})), 'absent-dir');
    // Neither a file nor a folder: bad usage (exit 2), never read, never a verification failure.
    const fifo = mkfifo(join(work, 'subjects.fifo'));
    await usageError(
      runVerifyCommand([receipt, '--pubkey', pubkey(), '--subjects', fifo], recordingIO(work, {})),
      `${fifo} is a FIFO (named pipe), not a file or folder`,
    );
    await usageError(runVerifyCommand([receipt, '--pubkey', pubkey(), '--subjects', '/dev/zero'], recordingIO(work, {})), '/dev/zero is a character device');
  });
});

describe('verify --subjects <bundle folder>: subjects matched by their recorded path', () => {
  // A receipt like the gate's over every committed case: one "<case>/<folder>/manifest.json"
  // subject per reference and oracle bundle, all with the base name manifest.json.
  it('one bundle folder checks exactly its own manifest; the others are "not found", never CHANGED', async () => {
    const keys = generateKeyPair(tempDir('bundle-folder-keys'));
    const manifests: Subject[] = [];
    for (const caseId of CASES) {
      for (const folder of ['reference', 'oracle-f64']) {
        const name = `${caseId}/${folder}/manifest.json`;
        manifests.push(await hashSubject(join(BUNDLES_DIR, name), name));
      }
    }
    const receipt = join(tempDir('bundle-folder'), 'receipt.json');
    await writeReceipt(receipt, { subjects: manifests, predicate: samplePredicate(), privateKey: keys.privateKey });

    for (const given of [join(BUNDLES_DIR, 'greedy', 'reference'), join(BUNDLES_DIR, 'greedy'), BUNDLES_DIR]) {
      const io = recordingIO(work, {});
      expect(await runVerifyCommand([receipt, '--pubkey', keys.publicKeyPath, '--subjects', given], io), given).toBe(0);
      const out = io.out();
      expect(out).not.toContain('CHANGED');
      expect(out).toContain(`subject    greedy/reference/manifest.json: OK sha256`);
      expect(out).toContain('VERIFIED');
    }
    const io = recordingIO(work, {});
    await runVerifyCommand([receipt, '--pubkey', keys.publicKeyPath, '--subjects', join(BUNDLES_DIR, 'greedy', 'reference')], io);
    const lines = io.out().split('\n');
    expect(lines.filter((line) => line.includes(': OK sha256'))).toHaveLength(1);
    const notFound = lines.filter((line) => line.includes(': not found (no folder given holds it at its recorded path; not checked)'));
    expect(notFound).toHaveLength(2 * CASES.length - 1);
    expect(notFound.some((line) => line.includes('greedy/oracle-f64/manifest.json'))).toBe(true);

    // Given by file, a subject not given is "not checked (no file given)", not "not found".
    const byFile = recordingIO(work, {});
    await runVerifyCommand([receipt, '--pubkey', keys.publicKeyPath, '--subjects', join(BUNDLES_DIR, 'greedy', 'reference', 'manifest.json')], byFile);
    expect(byFile.out()).toContain('subject    speech/reference/manifest.json: not checked (no file given)');
  });

  it('a changed manifest in the given bundle folder is still CHANGED, naming it', async () => {
    const dir = join(tempDir('bundle-folder-changed'), 'greedy', 'reference');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'manifest.json'), '{"a":1}\n');
    const keys = generateKeyPair(tempDir('bundle-folder-changed-keys'));
    const receipt = join(tempDir('bundle-folder-changed-receipt'), 'receipt.json');
    const name = 'greedy/reference/manifest.json';
    await writeReceipt(receipt, { subjects: [{ name, digest: { sha256: 'a'.repeat(64) } }], predicate: samplePredicate(), privateKey: keys.privateKey });
    const io = recordingIO(work, {});
    expect(await runVerifyCommand([receipt, '--pubkey', keys.publicKeyPath, '--subjects', dir], io)).toBe(1);
    expect(io.out()).toContain(`subject    ${name}: CHANGED`);
  });
});

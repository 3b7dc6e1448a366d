// session-receipt: exporting runs the real gate on one committed case and signs its receipt;
// verifying a receipt text reports one check per step and fails at the step that broke — a
// changed payload at the signature, a reformatted file at the envelope, another key at the
// signature, a changed subject file at that subject — and never throws for bad input.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf } from '../../main/core/receipt/dsse.ts';
import { CONFIG_DIR_ENV, defaultUserKeyPaths } from '../../main/core/receipt/keys.ts';
import { exportSessionReceipt, verifyReceiptText } from '../../main/session/session-receipt.ts';
import { ReceiptExportSchema, ReceiptVerifySchema, type ReceiptExport, type ReceiptVerify } from '../../protocol/inspector-api.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';
import { REFERENCE_ENGINE, freshTempDir, oracleBundle, referenceBundle } from '../helpers/paths.ts';

const root = freshTempDir('session-receipt');
const configDir = join(root, 'config');
const previousConfig = process.env[CONFIG_DIR_ENV];
process.env[CONFIG_DIR_ENV] = configDir; // the per-user default key lives here, never in ~/.config
afterAll(() => {
  if (previousConfig === undefined) delete process.env[CONFIG_DIR_ENV];
  else process.env[CONFIG_DIR_ENV] = previousConfig;
  rmSync(root, { recursive: true, force: true });
});

const CASE = 'prefill_1tok';
const exportCase = (over: Partial<Parameters<typeof exportSessionReceipt>[0]> = {}): Promise<ReceiptExport> =>
  exportSessionReceipt({
    library: REFERENCE_ENGINE,
    referenceDir: referenceBundle(CASE),
    oracleDir: oracleBundle(CASE),
    engineOptions: {},
    teacherForce: false,
    isolation: 'process',
    workDir: join(root, 'work'),
    keyPath: null,
    ...over,
  });

const check = (result: ReceiptVerify, name: string): ReceiptVerify['checks'][number] => {
  const found = result.checks.find((item) => item.name === name);
  if (found === undefined) throw new Error(`no check "${name}" in ${result.checks.map((item) => item.name).join(', ')}`);
  return found;
};
const firstFailure = (result: ReceiptVerify): string | undefined => result.checks.find((item) => !item.ok)?.name;

/** The envelope with one character of its base64 payload changed (still canonical base64). */
function tamperPayload(envelope: string): string {
  const parsed = JSON.parse(envelope) as { payload: string };
  const at = Math.floor(parsed.payload.length / 2);
  const swapped = parsed.payload[at] === 'A' ? 'B' : 'A';
  const payload = `${parsed.payload.slice(0, at)}${swapped}${parsed.payload.slice(at + 1)}`;
  return envelope.replace(parsed.payload, payload);
}

describe('exportSessionReceipt with the per-user default key', () => {
  let exported: ReceiptExport;
  beforeAll(async () => {
    exported = ReceiptExportSchema.parse(await exportCase());
  });

  it('runs the gate on the case and signs the receipt with the default key, created in the config folder', () => {
    const { publicKeyPath } = defaultUserKeyPaths(process.env);
    expect(publicKeyPath.startsWith(configDir)).toBe(true);
    expect(exported.publicKeyPem).toBe(readFileSync(publicKeyPath, 'utf8'));
    expect(exported.keyId).toBe(keyIdOf(createPublicKey(exported.publicKeyPem)));
    expect(exported.path.startsWith(join(root, 'work', 'receipt-'))).toBe(true);
    expect(readFileSync(exported.path, 'utf8')).toBe(exported.envelope);
  });

  it('carries the seals the gate printed: the clean engine passes the case', () => {
    expect(exported.seals.slice(0, 2)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect([exported.fidelity, exported.overall]).toEqual(['OK', 'PASSED']);
    const payload = JSON.parse(Buffer.from((JSON.parse(exported.envelope) as { payload: string }).payload, 'base64').toString('utf8')) as {
      subject: { name: string }[];
      predicate: { seals: string[]; cases: { id: string }[] };
    };
    expect(payload.predicate.seals).toEqual(exported.seals);
    expect(payload.predicate.cases.map((item) => item.id)).toEqual([CASE]);
    expect(payload.subject.map((subject) => subject.name)).toEqual([
      'libti_reference.so',
      `${CASE}/reference/manifest.json`,
      `${CASE}/oracle-f64/manifest.json`,
      'tiny-lfm2.5-audio.safetensors',
    ]);
  });

  it('verifies with the default public key: every check ok, every subject re-hashed', async () => {
    const result = ReceiptVerifySchema.parse(await verifyReceiptText({ envelope: exported.envelope, publicKeyPem: null }));
    expect(result.checks.filter((item) => !item.ok)).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.checks.map((item) => item.name)).toEqual([
      'envelope',
      'payload type',
      'public key',
      'signature',
      'statement',
      'subject libti_reference.so',
      `subject ${CASE}/reference/manifest.json`,
      `subject ${CASE}/oracle-f64/manifest.json`,
      'subject tiny-lfm2.5-audio.safetensors',
    ]);
    for (const item of result.checks.filter((candidate) => candidate.name.startsWith('subject '))) expect(item.detail).toMatch(/^ok: sha256 [0-9a-f]{64} \(\//);
    expect(check(result, 'public key').detail).toContain(configDir);
    expect(result.message).toBe(`VERIFIED (keyid ${exported.keyId}): FIDELITY: OK, OVERALL: PASSED`);
  });

  it('fails a changed payload at the signature, and reads nothing from it', async () => {
    const result = await verifyReceiptText({ envelope: tamperPayload(exported.envelope), publicKeyPem: exported.publicKeyPem });
    expect(result.ok).toBe(false);
    expect(check(result, 'envelope').ok).toBe(true);
    expect(firstFailure(result)).toBe('signature');
    expect(check(result, 'signature').detail).toMatch(/does not match the payload/);
    expect(check(result, 'statement')).toMatchObject({ ok: false, detail: expect.stringMatching(/^not read/) });
    expect(result.checks.some((item) => item.name.startsWith('subject '))).toBe(false);
    expect(result.message).toMatch(/^NOT VERIFIED: signature: /);
  });

  it('fails a reformatted file at the envelope, though the signature still holds', async () => {
    const pretty = `${JSON.stringify(JSON.parse(exported.envelope), null, 2)}\n`;
    const result = await verifyReceiptText({ envelope: pretty, publicKeyPem: exported.publicKeyPem });
    expect(result.ok).toBe(false);
    expect(firstFailure(result)).toBe('envelope');
    expect(check(result, 'envelope').detail).toMatch(/not byte-identical/);
    expect(check(result, 'signature').ok).toBe(true);
  });

  it('fails another key at the signature, naming both keyids', async () => {
    const other = generateKeyPairSync('ed25519').publicKey;
    const result = await verifyReceiptText({ envelope: exported.envelope, publicKeyPem: other.export({ type: 'spki', format: 'pem' }).toString() });
    expect(result.ok).toBe(false);
    expect(check(result, 'public key').ok).toBe(true);
    expect(firstFailure(result)).toBe('signature');
    expect(check(result, 'signature').detail).toContain(`no signature by the public key used (keyid ${keyIdOf(other)})`);
    expect(check(result, 'signature').detail).toContain(exported.keyId);
  });

  it('answers bad input with a failed check, never a throw', async () => {
    const malformed = await verifyReceiptText({ envelope: '{"payload": "abc", ', publicKeyPem: null });
    expect(malformed).toMatchObject({ ok: false, checks: [{ name: 'envelope', ok: false }] });
    expect(malformed.checks[0]?.detail).toMatch(/is not a JSON receipt \(.+\)/);
    const notEnvelope = await verifyReceiptText({ envelope: '{"hello": 1}', publicKeyPem: null });
    expect(notEnvelope.checks[0]?.detail).toMatch(/is not a DSSE envelope/);
    const badKey = await verifyReceiptText({ envelope: exported.envelope, publicKeyPem: 'not a key' });
    expect(badKey).toMatchObject({ ok: false, checks: [{ name: 'public key', ok: false }] });
    expect(badKey.checks[0]?.detail).toMatch(/not a PEM key/);
    const privateKey = readFileSync(defaultUserKeyPaths(process.env).privateKeyPath, 'utf8');
    const refused = await verifyReceiptText({ envelope: exported.envelope, publicKeyPem: privateKey });
    expect(refused.checks[0]?.detail).toMatch(/is a private key/);
  });
});

describe('exportSessionReceipt with a given key, then a changed subject file', () => {
  it('signs with that key, and verification fails at the subject whose file changed', async () => {
    mkdirSync(join(root, 'keys'));
    const keys = keyFiles(join(root, 'keys'));
    // A copy of the engine, so that changing it leaves the build alone.
    const library = join(root, 'libti_reference.so');
    copyFileSync(REFERENCE_ENGINE, library);
    const exported = await exportCase({ library, keyPath: keys.privateKeyPath });
    expect(exported.keyId).toBe(keyIdOf(createPublicKey(readFileSync(keys.publicKeyPath, 'utf8'))));
    const publicKeyPem = readFileSync(keys.publicKeyPath, 'utf8');
    expect((await verifyReceiptText({ envelope: exported.envelope, publicKeyPem })).ok).toBe(true);

    appendFileSync(library, Buffer.from([0]));
    const result = await verifyReceiptText({ envelope: exported.envelope, publicKeyPem });
    expect(result.ok).toBe(false);
    expect(firstFailure(result)).toBe('subject libti_reference.so');
    expect(check(result, 'subject libti_reference.so').detail).toMatch(
      new RegExp(`^changed: ${library} has sha256 [0-9a-f]{64}, the receipt says [0-9a-f]{64}$`),
    );
    expect(check(result, 'signature').ok).toBe(true);
    expect(check(result, `subject ${CASE}/reference/manifest.json`).ok).toBe(true);
    // Verifying with the default key instead: that is another signer.
    expect(firstFailure(await verifyReceiptText({ envelope: exported.envelope, publicKeyPem: null }))).toBe('signature');
  });
});

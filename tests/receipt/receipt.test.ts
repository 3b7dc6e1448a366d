// Receipts on disk: written atomically and never over an existing file; verified with the given
// key or the default user key; any changed byte of the file, of the payload, of the signature
// or of a subject fails with a reason; input that is not an envelope is a ReceiptError.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBase64Strict, encodeBase64 } from '../../main/core/receipt/base64.ts';
import { canonicalJson, canonicalNumberSchema } from '../../main/core/receipt/canonical-json.ts';
import { IN_TOTO_PAYLOAD_TYPE, keyIdOf, signEnvelope, type DsseEnvelope } from '../../main/core/receipt/dsse.ts';
import { ReceiptError } from '../../main/core/receipt/errors.ts';
import type { Subject } from '../../main/core/receipt/in-toto.ts';
import { defaultUserKey, generateKeyPair, type KeyPairFiles } from '../../main/core/receipt/keys.ts';
import { envelopeTextPieces, readEnvelope, serializeEnvelope, verifyReceipt, writeReceipt } from '../../main/core/receipt/receipt.ts';
import { ed25519Pair, expectReceiptError, removeTempDirs, samplePredicate, tempDir, writeSubjectFiles } from './receipt-fixtures.ts';

afterAll(removeTempDirs);

let keys: KeyPairFiles;
let subjectDir: string;
let subjectFiles: Record<string, string>;
let subjects: Subject[];
let receipt: string;
let receiptBytes: Buffer;

beforeAll(async () => {
  keys = generateKeyPair(tempDir('keys'));
  subjectDir = tempDir('subjects');
  ({ files: subjectFiles, subjects } = await writeSubjectFiles(subjectDir));
  receipt = join(tempDir('receipt'), 'gate-receipt.json');
  await writeReceipt(receipt, { subjects, predicate: samplePredicate(), privateKey: keys.privateKey });
  receiptBytes = readFileSync(receipt);
});

/** Writes `bytes` as a new receipt file and verifies it with the test key. */
async function verifyBytes(bytes: Uint8Array | string, label: string, subjectPaths: string[] = []) {
  const file = join(tempDir(`case-${label}`), 'receipt.json');
  writeFileSync(file, bytes);
  return verifyReceipt(file, { publicKey: keys.publicKeyPath, subjectFiles: subjectPaths });
}

function envelopeOf(bytes: Buffer): DsseEnvelope {
  return JSON.parse(bytes.toString('utf8')) as DsseEnvelope;
}

describe('writeReceipt', () => {
  it('writes a canonical DSSE envelope over the statement and reports its keyid', async () => {
    const folder = join(tempDir('write'), 'nested');
    const file = join(folder, 'r.json');
    const written = await writeReceipt(file, { subjects, predicate: { seals: ['OVERALL: PASSED'] }, privateKey: keys.privateKey });
    expect(written.keyid).toBe(keys.keyid);
    const text = readFileSync(file, 'utf8');
    const envelope = envelopeOf(Buffer.from(text));
    expect(text).toBe(`${canonicalJson(envelope)}\n`);
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    expect(envelope.signatures.map((signature) => signature.keyid)).toEqual([keys.keyid]);
    expect(JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'))).toEqual(written.statement);
    expect(readdirSync(folder)).toEqual(['r.json']); // no temporary file left behind
  });

  it('writes the envelope in pieces that join to its canonical text, the payload one of them as it is', () => {
    const payload = Buffer.from(JSON.stringify({ predicate: 'x'.repeat(5000) }));
    const envelope = signEnvelope(payload, IN_TOTO_PAYLOAD_TYPE, keys.privateKey);
    const pieces = envelopeTextPieces(envelope);
    expect(pieces.join('')).toBe(serializeEnvelope(envelope));
    expect(pieces).toContain(envelope.payload);
    // Not base64 (a character JSON escapes): the text whole, as serializeEnvelope writes it.
    const odd = { ...envelope, payload: 'a"b\\c' };
    expect(envelopeTextPieces(odd)).toEqual([serializeEnvelope(odd)]);
  });

  it('refuses to overwrite an existing file unless asked, and then replaces it atomically', async () => {
    const dir = tempDir('overwrite');
    const file = join(dir, 'r.json');
    writeFileSync(file, 'precious');
    await expectReceiptError(() => writeReceipt(file, { subjects, predicate: {}, privateKey: keys.privateKey }), 'E_RECEIPT_EXISTS', file);
    expect(readFileSync(file, 'utf8')).toBe('precious');
    await writeReceipt(file, { subjects, predicate: {}, privateKey: keys.privateKey, overwrite: true });
    expect((await verifyReceipt(file, { publicKey: keys.publicKeyPath })).ok).toBe(true);
    expect(readdirSync(dir)).toEqual(['r.json']);
  });

  it('refuses invalid subjects before writing anything', async () => {
    const file = join(tempDir('bad-subject'), 'r.json');
    const bad = [{ name: '../escape', digest: { sha256: 'a'.repeat(64) } }];
    await expectReceiptError(() => writeReceipt(file, { subjects: bad, predicate: {}, privateKey: keys.privateKey }), 'E_STATEMENT', '<statement>');
    expect(existsSync(file)).toBe(false);
  });
});

describe('verifyReceipt', () => {
  it('verifies the receipt, returns the statement with non-finite numbers that parse back, and checks every subject', async () => {
    const result = await verifyReceipt(receipt, { publicKey: keys.publicKeyPath, subjectFiles: [subjectDir] });
    expect(result.reasons).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.keyid).toBe(keys.keyid);
    expect(result.publicKey).toEqual({ source: 'file', path: keys.publicKeyPath, keyid: keys.keyid });
    expect(result.subjectsChecked.map((check) => [check.name, check.ok, check.file])).toEqual([
      ['libengine.so', true, subjectFiles['libengine.so']],
      ['reference/manifest.json', true, subjectFiles['reference/manifest.json']],
      ['weights.safetensors', true, subjectFiles['weights.safetensors']],
    ]);
    expect(result.subjectsNotChecked).toEqual([]);
    const boundaries = result.statement?.predicate['boundaries'] as Record<string, unknown>[];
    expect(canonicalNumberSchema.parse(boundaries[1]?.['max_abs'])).toBeNaN();
    expect(canonicalNumberSchema.parse(boundaries[1]?.['max_ulp'])).toBe(Infinity);
    expect(canonicalNumberSchema.parse(boundaries[1]?.['min'])).toBe(-Infinity);
  });

  it('accepts a KeyObject, and reports subjects it was not given as not checked', async () => {
    const result = await verifyReceipt(receipt, { publicKey: keys.publicKey, subjectFiles: [subjectFiles['weights.safetensors'] ?? ''] });
    expect(result.ok).toBe(true);
    expect(result.publicKey.source).toBe('option');
    expect(result.subjectsChecked.map((check) => check.name)).toEqual(['weights.safetensors']);
    expect(result.subjectsNotChecked).toEqual(['libengine.so', 'reference/manifest.json']);
  });

  it('matches subject files by base name or by relative path, and a folder by either', async () => {
    const byFiles = await verifyReceipt(receipt, { publicKey: keys.publicKey, subjectFiles: Object.values(subjectFiles) });
    expect(byFiles.ok).toBe(true);
    expect(byFiles.subjectsChecked).toHaveLength(3);
    // The folder that directly holds "reference/manifest.json" finds it by base name.
    const byInnerFolder = await verifyReceipt(receipt, { publicKey: keys.publicKey, subjectFiles: [join(subjectDir, 'reference')] });
    expect(byInnerFolder.ok).toBe(true);
    expect(byInnerFolder.subjectsChecked.map((check) => check.name)).toEqual(['reference/manifest.json']);
  });

  it('fails naming the subject when one byte of a subject file changed', async () => {
    const copyDir = tempDir('changed-subject');
    const { files } = await writeSubjectFiles(copyDir);
    const weights = files['weights.safetensors'] ?? '';
    const bytes = readFileSync(weights);
    bytes[2048] = (bytes[2048] ?? 0) ^ 0x01;
    writeFileSync(weights, bytes);
    const result = await verifyReceipt(receipt, { publicKey: keys.publicKey, subjectFiles: [copyDir] });
    expect(result.ok).toBe(false);
    expect(result.reasons).toHaveLength(1);
    expect(result.reasons[0]).toContain('subject "weights.safetensors" changed');
    expect(result.reasons[0]).toContain(weights);
    expect(result.subjectsChecked.filter((check) => !check.ok).map((check) => check.name)).toEqual(['weights.safetensors']);
  });

  it('fails for a file that is no subject of the receipt, and for a folder holding none', async () => {
    const stranger = join(tempDir('stranger'), 'other.bin');
    writeFileSync(stranger, 'x');
    const result = await verifyReceipt(receipt, { publicKey: keys.publicKey, subjectFiles: [stranger, join(stranger, '..')] });
    expect(result.ok).toBe(false);
    expect(result.reasons.join('\n')).toContain(`${stranger} is not a subject of this receipt`);
    expect(result.reasons.join('\n')).toContain('no subject of this receipt is in the folder');
  });

  it('is a ReceiptError when a subject path does not exist', async () => {
    const missing = join(subjectDir, 'nope.bin');
    await expectReceiptError(() => verifyReceipt(receipt, { publicKey: keys.publicKey, subjectFiles: [missing] }), 'E_SUBJECT_READ', missing);
  });

  it('fails with another key, and then does not trust the subjects', async () => {
    const result = await verifyReceipt(receipt, { publicKey: ed25519Pair().publicKey, subjectFiles: [subjectDir] });
    expect(result.ok).toBe(false);
    expect(result.statement).toBeNull();
    expect(result.subjectsChecked).toEqual([]);
    expect(result.reasons.join('\n')).toContain('no signature by the public key used');
    expect(result.reasons.join('\n')).toContain('subject files were not checked');
  });

  it('falls back to the default user key and says so; without one it is E_NO_PUBLIC_KEY', async () => {
    const env = { TRACE_INSPECTOR_CONFIG_DIR: tempDir('verify-default') };
    const userKey = defaultUserKey(env);
    const file = join(tempDir('default-signed'), 'r.json');
    await writeReceipt(file, { subjects, predicate: {}, privateKey: userKey.privateKey });
    const result = await verifyReceipt(file, { env });
    expect(result.ok).toBe(true);
    expect(result.publicKey).toEqual({ source: 'default-user-key', path: userKey.publicKeyPath, keyid: userKey.keyid });
    const empty = { TRACE_INSPECTOR_CONFIG_DIR: join(tempDir('no-default'), 'absent') };
    await expectReceiptError(
      () => verifyReceipt(file, { env: empty }),
      'E_NO_PUBLIC_KEY',
      join(empty.TRACE_INSPECTOR_CONFIG_DIR, 'trace-inspector-ed25519.pub'),
    );
    expect(existsSync(empty.TRACE_INSPECTOR_CONFIG_DIR)).toBe(false); // verify never creates a key
  });
});

describe('tampering: any changed byte fails', () => {
  it('fails or is refused for every flipped byte of the receipt file', async () => {
    const dir = tempDir('flip-file');
    const file = join(dir, 'r.json');
    let refused = 0;
    let failed = 0;
    for (let index = 0; index < receiptBytes.length; index += 1) {
      const tampered = Buffer.from(receiptBytes);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      writeFileSync(file, tampered);
      try {
        const result = await verifyReceipt(file, { publicKey: keys.publicKey });
        expect(result.ok, `file byte ${index}`).toBe(false);
        expect(result.reasons.length).toBeGreaterThan(0);
        failed += 1;
      } catch (error) {
        expect(error, `file byte ${index}`).toBeInstanceOf(ReceiptError);
        refused += 1;
      }
    }
    expect(failed + refused).toBe(receiptBytes.length);
    expect(failed).toBeGreaterThan(receiptBytes.length / 2); // most flips land in base64 text
  });

  it('fails for every flipped byte of the decoded payload, re-encoded into the file', async () => {
    const envelope = envelopeOf(receiptBytes);
    const payload = decodeBase64Strict(envelope.payload) as Buffer;
    const file = join(tempDir('flip-payload'), 'r.json');
    for (let index = 0; index < payload.length; index += 1) {
      const tampered = Buffer.from(payload);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      writeFileSync(file, serializeEnvelope({ ...envelope, payload: encodeBase64(tampered) }));
      const result = await verifyReceipt(file, { publicKey: keys.publicKey });
      expect(result.ok, `payload byte ${index}`).toBe(false);
      expect(result.statement).toBeNull();
    }
  });

  it('fails for every flipped byte of the signature, re-encoded into the file', async () => {
    const envelope = envelopeOf(receiptBytes);
    const signature = envelope.signatures[0];
    const sig = decodeBase64Strict(signature?.sig ?? '') as Buffer;
    const file = join(tempDir('flip-sig'), 'r.json');
    for (let index = 0; index < sig.length; index += 1) {
      const tampered = Buffer.from(sig);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      writeFileSync(file, serializeEnvelope({ ...envelope, signatures: [{ keyid: signature?.keyid ?? '', sig: encodeBase64(tampered) }] }));
      expect((await verifyReceipt(file, { publicKey: keys.publicKey })).ok, `signature byte ${index}`).toBe(false);
    }
  });

  it('fails when the payloadType changes, even if re-signed under the new type', async () => {
    const envelope = envelopeOf(receiptBytes);
    const swapped = await verifyBytes(serializeEnvelope({ ...envelope, payloadType: 'application/json' }), 'type-swap');
    expect(swapped.ok).toBe(false);
    const payload = decodeBase64Strict(envelope.payload) as Buffer;
    const resigned = await verifyBytes(serializeEnvelope(signEnvelope(payload, 'application/json', keys.privateKey)), 'type-resigned');
    expect(resigned.ok).toBe(false);
    expect(resigned.reasons.join('\n')).toContain('payloadType is "application/json"');
    expect(resigned.statement).toBeNull();
  });

  it('fails for a re-formatted envelope whose signature still holds (whitespace is outside the signature)', async () => {
    const pretty = `${JSON.stringify(envelopeOf(receiptBytes), null, 2)}\n`;
    const result = await verifyBytes(pretty, 'pretty');
    expect(result.ok).toBe(false);
    expect(result.reasons).toEqual([expect.stringContaining('not byte-identical')]);
    expect(result.statement).not.toBeNull(); // the signed content itself is intact
  });

  it('refuses a validly signed payload that is not canonical JSON (e.g. a duplicate key)', async () => {
    const statement = JSON.parse((decodeBase64Strict(envelopeOf(receiptBytes).payload) as Buffer).toString('utf8')) as Record<string, unknown>;
    const duplicated = Buffer.from(canonicalJson(statement).replace('{"_type"', '{"_type":"x","_type"'), 'utf8');
    const result = await verifyBytes(serializeEnvelope(signEnvelope(duplicated, IN_TOTO_PAYLOAD_TYPE, keys.privateKey)), 'dup-key');
    expect(result.ok).toBe(false);
    expect(result.statement).toBeNull();
    expect(result.reasons.join('\n')).toContain('not canonical JSON');
  });

  it('refuses a validly signed statement of another predicate type', async () => {
    const statement = JSON.parse((decodeBase64Strict(envelopeOf(receiptBytes).payload) as Buffer).toString('utf8')) as Record<string, unknown>;
    const other = Buffer.from(canonicalJson({ ...statement, predicateType: 'https://slsa.dev/provenance/v1' }), 'utf8');
    const result = await verifyBytes(serializeEnvelope(signEnvelope(other, IN_TOTO_PAYLOAD_TYPE, keys.privateKey)), 'other-predicate');
    expect(result.ok).toBe(false);
    expect(result.reasons.join('\n')).toContain('predicateType');
  });

  it('fails when a keyid is relabelled', async () => {
    const envelope = envelopeOf(receiptBytes);
    const relabelled = serializeEnvelope({ ...envelope, signatures: [{ keyid: 'f'.repeat(64), sig: envelope.signatures[0]?.sig ?? '' }] });
    expect((await verifyBytes(relabelled, 'keyid')).reasons.join('\n')).toContain(`keyid ${keyIdOf(keys.publicKey)}`);
  });
});

describe('signature policy: every signature entry must verify under the trusted key (fail-closed)', () => {
  // Each envelope is written canonically, so the byte-identity check passes and only the
  // signature policy can refuse it; the genuine signature stays in place and still verifies.
  const withSignatures = (signatures: DsseEnvelope['signatures']): string => serializeEnvelope({ ...envelopeOf(receiptBytes), signatures });
  const genuine = (): DsseEnvelope['signatures'][number] => envelopeOf(receiptBytes).signatures[0] as DsseEnvelope['signatures'][number];

  it('the genuine receipt (one signature by the trusted key) verifies', async () => {
    const result = await verifyBytes(withSignatures([genuine()]), 'policy-genuine');
    expect(result.ok).toBe(true);
  });

  it('an extra garbage signature entry that verifies under no key: NOT VERIFIED, the entry named', async () => {
    const garbage = { keyid: 'e'.repeat(64), sig: encodeBase64(Buffer.alloc(64, 7)) };
    for (const [label, signatures] of [
      ['after', [genuine(), garbage]],
      ['before', [garbage, genuine()]],
    ] as const) {
      const result = await verifyBytes(withSignatures([...signatures]), `policy-garbage-${label}`);
      expect(result.ok, label).toBe(false);
      expect(result.statement).toBeNull();
      const index = label === 'after' ? 1 : 0;
      expect(result.reasons.join('\n')).toContain(`signatures[${index}] is by keyid ${'e'.repeat(64)}, not the trusted key`);
    }
  });

  it('a duplicated signature entry (the genuine one twice): NOT VERIFIED, named as a duplicate', async () => {
    const result = await verifyBytes(withSignatures([genuine(), genuine()]), 'policy-duplicate');
    expect(result.ok).toBe(false);
    expect(result.reasons.join('\n')).toContain(`signatures[1] repeats keyid ${keys.keyid} of signatures[0]`);
  });

  it('an extra valid signature from another key: NOT VERIFIED (that key is not trusted)', async () => {
    const other = ed25519Pair();
    const payload = decodeBase64Strict(envelopeOf(receiptBytes).payload) as Buffer;
    const second = signEnvelope(payload, IN_TOTO_PAYLOAD_TYPE, other.privateKey).signatures[0] as DsseEnvelope['signatures'][number];
    const result = await verifyBytes(withSignatures([genuine(), second]), 'policy-other-key');
    expect(result.ok).toBe(false);
    expect(result.reasons.join('\n')).toContain(`signatures[1] is by keyid ${keyIdOf(other.publicKey)}, not the trusted key`);
  });

  it('a changed payload byte beside the genuine signature: NOT VERIFIED', async () => {
    const envelope = envelopeOf(receiptBytes);
    const payload = Buffer.from(decodeBase64Strict(envelope.payload) as Buffer);
    payload[10] = (payload[10] ?? 0) ^ 0x20;
    const result = await verifyBytes(serializeEnvelope({ ...envelope, payload: encodeBase64(payload) }), 'policy-payload');
    expect(result.ok).toBe(false);
    expect(result.reasons.join('\n')).toContain('signatures[0]: the Ed25519 signature does not match the payload');
  });
});

describe('input that is not a receipt is a ReceiptError', () => {
  const cases: [string, string | Buffer, string][] = [
    ['an empty file', '', 'E_RECEIPT_JSON'],
    ['text that is not JSON', 'OVERALL: PASSED\n', 'E_RECEIPT_JSON'],
    ['truncated JSON', '{"payload": "e30=", ', 'E_RECEIPT_JSON'],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'E_RECEIPT_JSON'],
    ['a byte-order mark before the JSON', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]), 'E_RECEIPT_JSON'],
    ['a JSON array', '[1,2,3]', 'E_ENVELOPE_SCHEMA'],
    ['a JSON string', '"hello"', 'E_ENVELOPE_SCHEMA'],
    ['random JSON', '{"name":"trace-inspector","version":"0.1.0"}', 'E_ENVELOPE_SCHEMA'],
    ['an envelope without signatures', '{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}', 'E_ENVELOPE_SCHEMA'],
    ['an envelope with a numeric sig', '{"payload":"e30=","payloadType":"x","signatures":[{"keyid":"k","sig":5}]}', 'E_ENVELOPE_SCHEMA'],
    ['an envelope with an unknown field', '{"payload":"e30=","payloadType":"x","signatures":[{"keyid":"k","sig":"AA=="}],"extra":1}', 'E_ENVELOPE_SCHEMA'],
  ];

  it.each(cases)('%s', async (_label, content, code) => {
    const file = join(tempDir('not-envelope'), 'r.json');
    writeFileSync(file, content);
    const error = await expectReceiptError(() => verifyReceipt(file, { publicKey: keys.publicKey }), code as ReceiptError['code'], file);
    await expectReceiptError(() => readEnvelope(file), error.code, file);
  });

  it('a missing file and a folder: E_RECEIPT_READ', async () => {
    const dir = tempDir('missing-receipt');
    await expectReceiptError(() => verifyReceipt(join(dir, 'none.json'), { publicKey: keys.publicKey }), 'E_RECEIPT_READ', join(dir, 'none.json'));
    await expectReceiptError(() => verifyReceipt(dir, { publicKey: keys.publicKey }), 'E_RECEIPT_READ', dir);
  });

  it('a public key file that is not an Ed25519 public key names that file', async () => {
    await expectReceiptError(() => verifyReceipt(receipt, { publicKey: keys.privateKeyPath }), 'E_KEY_FORMAT', keys.privateKeyPath);
  });
});

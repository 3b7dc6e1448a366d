// DSSE v1: the pre-authentication encoding is byte-exact per the spec, the signature covers it,
// and any change to payload, signature, payloadType or key is refused.
import { createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeBase64Strict, encodeBase64 } from '../../main/core/receipt/base64.ts';
import { IN_TOTO_PAYLOAD_TYPE, keyIdOf, preAuthEncoding, signEnvelope, verifyEnvelope, type DsseEnvelope } from '../../main/core/receipt/dsse.ts';
import { buildStatement, statementPayload } from '../../main/core/receipt/in-toto.ts';
import { ed25519Pair, samplePredicate } from './receipt-fixtures.ts';

const HELLO_TYPE = 'http://example.com/HelloWorld';

function failureReasons(envelope: DsseEnvelope, publicKey: Parameters<typeof verifyEnvelope>[1]): string[] {
  const result = verifyEnvelope(envelope, publicKey);
  return result.ok ? [] : result.reasons;
}

describe('preAuthEncoding', () => {
  it('matches the spec example byte for byte', () => {
    // "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, written out by hand:
    // the type is 29 bytes long, "hello world" 11.
    const expected = Buffer.from('DSSEv1 29 http://example.com/HelloWorld 11 hello world', 'ascii');
    expect(preAuthEncoding(HELLO_TYPE, Buffer.from('hello world'))).toEqual(expected);
  });

  it('counts UTF-8 bytes, not characters, and keeps binary payload bytes as they are', () => {
    // "é" is two UTF-8 bytes (c3 a9); the payload holds a NUL, a space and a non-UTF-8 byte.
    const payload = Buffer.from([0x00, 0x20, 0xff]);
    const expected = Buffer.from([...Buffer.from('DSSEv1 2 ', 'ascii'), 0xc3, 0xa9, ...Buffer.from(' 3 ', 'ascii'), 0x00, 0x20, 0xff]);
    expect(preAuthEncoding('é', payload)).toEqual(expected);
  });

  it('encodes an empty payload with length 0', () => {
    expect(preAuthEncoding('t', Buffer.alloc(0))).toEqual(Buffer.from('DSSEv1 1 t 0 ', 'ascii'));
  });
});

describe('signEnvelope / verifyEnvelope', () => {
  const { privateKey, publicKey } = ed25519Pair();
  const statement = buildStatement([{ name: 'weights.safetensors', digest: { sha256: 'a'.repeat(64) } }], samplePredicate());
  const payload = statementPayload(statement);
  const envelope = signEnvelope(payload, IN_TOTO_PAYLOAD_TYPE, privateKey);

  it('signs exactly the PAE bytes (Ed25519 is deterministic, so the signature is reproducible by hand)', () => {
    const handPae = Buffer.from(`DSSEv1 28 application/vnd.in-toto+json ${payload.length} ${payload.toString('utf8')}`, 'utf8');
    const hello = signEnvelope(Buffer.from('hello world'), HELLO_TYPE, privateKey);
    expect(hello.signatures[0]?.sig).toBe(sign(null, Buffer.from('DSSEv1 29 http://example.com/HelloWorld 11 hello world'), privateKey).toString('base64'));
    expect(envelope.signatures[0]?.sig).toBe(sign(null, handPae, privateKey).toString('base64'));
  });

  it('writes the envelope fields the spec names, the keyid being sha256 of the SPKI DER public key', () => {
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const keyid = createHash('sha256').update(spki).digest('hex');
    expect(Object.keys(envelope).sort()).toEqual(['payload', 'payloadType', 'signatures']);
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    expect(Buffer.from(envelope.payload, 'base64')).toEqual(payload);
    expect(envelope.signatures).toHaveLength(1);
    expect(envelope.signatures[0]?.keyid).toBe(keyid);
    expect(keyIdOf(privateKey)).toBe(keyid);
    expect(Buffer.from(envelope.signatures[0]?.sig ?? '', 'base64')).toHaveLength(64);
  });

  it('round-trips: the verifier returns the exact signed payload bytes', () => {
    const result = verifyEnvelope(envelope, publicKey);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.payload).toEqual(payload);
      expect(result.keyid).toBe(keyIdOf(publicKey));
    }
  });

  it('fails for every single flipped byte of the decoded payload (low bit and high bit)', () => {
    expect(payload.length).toBeGreaterThan(300);
    for (const mask of [0x01, 0x80]) {
      for (let index = 0; index < payload.length; index += 1) {
        const tampered = Buffer.from(payload);
        tampered[index] = (tampered[index] ?? 0) ^ mask;
        const reasons = failureReasons({ ...envelope, payload: encodeBase64(tampered) }, publicKey);
        expect(reasons, `payload byte ${index} ^ ${mask}`).not.toEqual([]);
        expect(reasons.join(' ')).toContain('signature does not match');
      }
    }
  });

  it('fails for every single flipped byte of the signature', () => {
    const sig = decodeBase64Strict(envelope.signatures[0]?.sig ?? '');
    expect(sig).not.toBeNull();
    for (const mask of [0x01, 0x80]) {
      for (let index = 0; index < 64; index += 1) {
        const tampered = Buffer.from(sig as Buffer);
        tampered[index] = (tampered[index] ?? 0) ^ mask;
        const signatures = [{ keyid: envelope.signatures[0]?.keyid ?? '', sig: encodeBase64(tampered) }];
        expect(failureReasons({ ...envelope, signatures }, publicKey), `signature byte ${index} ^ ${mask}`).not.toEqual([]);
      }
    }
  });

  it('fails when the payloadType is changed, even to a near spelling', () => {
    for (const payloadType of ['application/vnd.in-toto+jsoN', 'application/vnd.in-toto+json ', 'text/plain', '']) {
      expect(failureReasons({ ...envelope, payloadType }, publicKey), payloadType).not.toEqual([]);
    }
  });

  it('fails with a different public key, naming both keyids', () => {
    const other = ed25519Pair();
    const reasons = failureReasons(envelope, other.publicKey);
    expect(reasons.join(' ')).toContain(keyIdOf(other.publicKey));
    expect(reasons.join(' ')).toContain(keyIdOf(publicKey));
  });

  it('fails when the keyid is relabelled to the verifier key but the signature is by another key', () => {
    const other = ed25519Pair();
    const forged = signEnvelope(payload, IN_TOTO_PAYLOAD_TYPE, other.privateKey);
    const relabelled = { ...forged, signatures: [{ keyid: keyIdOf(publicKey), sig: forged.signatures[0]?.sig ?? '' }] };
    expect(failureReasons(relabelled, publicKey).join(' ')).toContain('signature does not match');
  });

  it('refuses non-canonical base64 in the payload and the signature', () => {
    const sig = envelope.signatures[0]?.sig ?? '';
    const keyid = envelope.signatures[0]?.keyid ?? '';
    const payloadVariants = [`${envelope.payload}\n`, ` ${envelope.payload}`, envelope.payload.replace(/=+$/, ''), envelope.payload.replaceAll('/', '_')];
    for (const variant of payloadVariants.filter((text) => text !== envelope.payload)) {
      expect(failureReasons({ ...envelope, payload: variant }, publicKey).join(' '), JSON.stringify(variant.slice(-8))).toContain(
        'payload is not canonical base64',
      );
    }
    for (const variant of [`${sig}=`, sig.replace(/=+$/, ''), `${sig.slice(0, 10)}*${sig.slice(11)}`]) {
      expect(failureReasons({ ...envelope, signatures: [{ keyid, sig: variant }] }, publicKey).join(' ')).toContain('is not canonical base64');
    }
  });

  it('refuses an envelope without signatures or with a truncated signature', () => {
    expect(failureReasons({ ...envelope, signatures: [] }, publicKey)).not.toEqual([]);
    const keyid = envelope.signatures[0]?.keyid ?? '';
    const short = encodeBase64(Buffer.alloc(63, 1));
    expect(failureReasons({ ...envelope, signatures: [{ keyid, sig: short }] }, publicKey).join(' ')).toContain('63 bytes');
  });

  it('refuses to sign with anything but an Ed25519 private key, and to verify with anything but an Ed25519 public key', () => {
    expect(() => signEnvelope(payload, IN_TOTO_PAYLOAD_TYPE, publicKey)).toThrow(/Ed25519 private key/);
    expect(() => verifyEnvelope(envelope, privateKey)).toThrow(/Ed25519 public key/);
  });
});

describe('strict base64', () => {
  it('accepts exactly the canonical encoding of some bytes', () => {
    for (let length = 0; length < 8; length += 1) {
      const bytes = Buffer.from([...Array(length).keys()].map((value) => value * 37 + 1));
      expect(decodeBase64Strict(encodeBase64(bytes))).toEqual(bytes);
    }
  });

  it.each([
    ['non-zero padding bits', 'QR=='], // canonical is "QQ=="
    ['non-zero padding bits (one pad)', 'QUF='], // canonical is "QUE="
    ['missing padding', 'QQ'],
    ['URL-safe alphabet', 'a-_b'],
    ['whitespace', 'QUFB\nQUFB'],
    ['garbage character', 'QU!B'],
    ['padding in the middle', 'QQ==QUFB'],
    ['too much padding', 'QQ==='],
  ])('rejects %s', (_label, text) => {
    expect(decodeBase64Strict(text)).toBeNull();
  });
});

describe('strict base64 on large payloads', () => {
  it('decodes a multi-megabyte canonical payload without overflowing the stack', () => {
    const bytes = new Uint8Array(6 * 1024 * 1024).map((_, i) => (i * 7) & 0xff);
    const text = encodeBase64(bytes);
    expect(decodeBase64Strict(text)?.equals(Buffer.from(bytes))).toBe(true);
    expect(decodeBase64Strict(`${text.slice(0, -4)}A===`)).toBeNull();
    expect(decodeBase64Strict(`=${text.slice(1)}`)).toBeNull();
  });
});

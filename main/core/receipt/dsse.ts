// DSSE v1 (Dead Simple Signing Envelope, github.com/secure-systems-lab/dsse) with Ed25519.
// The signature covers PAE(payloadType, payload) — the exact payload bytes and their type — so
// a verifier checks those bytes as they were decoded from the envelope and never re-serialises
// JSON before checking.
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { sha256Bytes } from '../bundle/digest.ts';
import { decodeBase64Strict, encodeBase64 } from './base64.ts';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

/** Ed25519 signatures are always 64 bytes. */
const ED25519_SIGNATURE_BYTES = 64;

export const DsseSignatureSchema = z.strictObject({
  keyid: z.string(),
  sig: z.string(),
});

/** Shape only: base64 and signatures are checked by verifyEnvelope, which reports reasons. */
export const DsseEnvelopeSchema = z.strictObject({
  payload: z.string(),
  payloadType: z.string(),
  signatures: z.array(DsseSignatureSchema).min(1, { error: 'an envelope needs at least one signature' }),
});

export type DsseSignature = z.infer<typeof DsseSignatureSchema>;
export type DsseEnvelope = z.infer<typeof DsseEnvelopeSchema>;

/**
 * Pre-Authentication Encoding:
 *   "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 * LEN is the ASCII decimal byte length (of type's UTF-8 bytes, of body's bytes), SP one space.
 */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Buffer {
  const typeBytes = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${typeBytes.length} `, 'ascii'), typeBytes, Buffer.from(` ${payload.byteLength} `, 'ascii'), payload]);
}

function requireEd25519(key: KeyObject, type: 'private' | 'public', role: string): void {
  if (key.type !== type || key.asymmetricKeyType !== 'ed25519') {
    const actual = key.type === 'secret' ? 'a secret key' : `a ${key.asymmetricKeyType ?? 'unknown'} ${key.type} key`;
    throw new TypeError(`${role}: expected an Ed25519 ${type} key, got ${actual}`);
  }
}

/** The keyid trace-inspector uses: sha256 (hex) of the public key's SPKI DER encoding. */
export function keyIdOf(key: KeyObject): string {
  // keyids always name the public key, also when handed the private one.
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return sha256Bytes(spki);
}

export function signEnvelope(payload: Uint8Array, payloadType: string, privateKey: KeyObject): DsseEnvelope {
  requireEd25519(privateKey, 'private', 'signEnvelope');
  const signature = sign(null, preAuthEncoding(payloadType, payload), privateKey);
  return {
    payload: encodeBase64(payload),
    payloadType,
    signatures: [{ keyid: keyIdOf(privateKey), sig: encodeBase64(signature) }],
  };
}

export type EnvelopeVerification = { ok: true; keyid: string; payloadType: string; payload: Buffer } | { ok: false; keyid: string; reasons: string[] };

/**
 * Checks `envelope` against `publicKey`, fail-closed: the payload must be canonical base64, and
 * EVERY signature entry must be a valid Ed25519 signature by the trusted key over
 * PAE(payloadType, decoded payload) (canonical base64 of 64 bytes). An entry under another keyid
 * (an unknown key, or garbage that verifies under no key), an entry that does not verify, and a
 * keyid listed twice are each refused with the reason named: a receipt verifies only when every
 * byte of it is accounted for by the trusted key (docs/receipts.md, "Signature policy").
 * On success the decoded payload bytes are returned — the only bytes a caller may trust.
 */
export function verifyEnvelope(envelope: DsseEnvelope, publicKey: KeyObject): EnvelopeVerification {
  requireEd25519(publicKey, 'public', 'verifyEnvelope');
  const keyid = keyIdOf(publicKey);
  const shape = DsseEnvelopeSchema.safeParse(envelope);
  if (!shape.success) {
    return { ok: false, keyid, reasons: [`not a DSSE envelope: ${shape.error.issues.map((issue) => issue.message).join('; ')}`] };
  }
  const { payloadType, signatures } = shape.data;
  const reasons: string[] = [];
  const payload = decodeBase64Strict(shape.data.payload);
  if (payload === null) reasons.push('payload is not canonical base64 (changed or invalid characters)');

  const firstIndexOf = new Map<string, number>();
  signatures.forEach((signature, index) => {
    const earlier = firstIndexOf.get(signature.keyid);
    if (earlier !== undefined) {
      reasons.push(
        `signatures[${index}] repeats keyid ${signature.keyid || '(empty keyid)'} of signatures[${earlier}]: a receipt holds one signature per key, a duplicated entry is refused`,
      );
    } else firstIndexOf.set(signature.keyid, index);
  });
  if (!firstIndexOf.has(keyid)) {
    reasons.push(
      `no signature by the public key used (keyid ${keyid}); the envelope is signed by keyid ${signatures.map((signature) => signature.keyid || '(empty keyid)').join(', ')}`,
    );
  }
  signatures.forEach((signature, index) => {
    if (signature.keyid !== keyid) {
      reasons.push(
        `signatures[${index}] is by keyid ${signature.keyid || '(empty keyid)'}, not the trusted key (keyid ${keyid}): every signature entry must verify under a trusted key, so an entry from an unknown key (or one that verifies under no key) is refused`,
      );
    }
  });
  if (payload !== null) {
    const pae = preAuthEncoding(payloadType, payload);
    signatures.forEach((signature, index) => {
      if (signature.keyid !== keyid) return;
      const sig = decodeBase64Strict(signature.sig);
      if (sig === null) {
        reasons.push(`signatures[${index}].sig is not canonical base64 (changed or invalid characters)`);
      } else if (sig.byteLength !== ED25519_SIGNATURE_BYTES) {
        reasons.push(`signatures[${index}].sig is ${sig.byteLength} bytes; an Ed25519 signature is ${ED25519_SIGNATURE_BYTES}`);
      } else if (!verify(null, pae, publicKey, sig)) {
        reasons.push(
          `signatures[${index}]: the Ed25519 signature does not match the payload and payloadType (the receipt was changed after signing, or signed by another key)`,
        );
      }
    });
  }
  if (payload === null || reasons.length > 0) return { ok: false, keyid, reasons };
  return { ok: true, keyid, payloadType, payload };
}

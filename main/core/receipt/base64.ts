// Strict base64 (RFC 4648 §4, standard alphabet, `=` padding) for envelope fields.
// Node's Buffer.from(text, 'base64') skips characters outside the alphabet and accepts
// URL-safe letters, missing padding and non-zero padding bits, so several texts decode to the
// same bytes. A receipt must have exactly one spelling: any changed character has to be seen,
// so decoding here refuses everything but the canonical encoding of some byte string.

// Checked as alphabet + length rather than one repeated group: a backtracking regex over
// (?:x{4})* overflows the stack on multi-megabyte payloads.
const ALPHABET_WITH_PADDING = /^[A-Za-z0-9+/]*={0,2}$/;

function hasCanonicalShape(text: string): boolean {
  return text.length % 4 === 0 && ALPHABET_WITH_PADDING.test(text);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * The bytes `text` encodes, or null when it is not canonical base64: a character outside
 * A-Z a-z 0-9 + /, whitespace, missing or extra padding, or padding bits that are not zero.
 */
export function decodeBase64Strict(text: string): Buffer | null {
  if (!hasCanonicalShape(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  // Non-zero bits in the last character before the padding decode to the same bytes as the
  // zero-bit spelling; only the spelling that re-encodes to itself is accepted.
  return bytes.toString('base64') === text ? bytes : null;
}

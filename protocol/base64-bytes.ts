// Base64 <-> bytes without atob/btoa or Buffer: the same decoder runs in Node (the core validates
// what it sends) and in the renderer (which validates and reads every base64 field it receives).
// The core encodes with Node's Buffer (rows-encoding.ts and the other encoders), which
// is ~200 times faster than bytesToBase64's string building; bytesToBase64 is the portable
// inverse the tests build replies with.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Char code -> 6-bit value, 255 for characters outside the alphabet. */
const DECODE = new Uint8Array(128).fill(255);
for (let i = 0; i < ALPHABET.length; i += 1) DECODE[ALPHABET.charCodeAt(i)] = i;

/** Canonical padded base64 of `bytes`. */
export function bytesToBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  // Joined in chunks: one string concatenation per byte triple would build a deep rope.
  const CHUNK = 3 * 4096;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const end = Math.min(bytes.length, start + CHUNK);
    let text = '';
    for (let i = start; i < end; i += 3) {
      const a = bytes[i] ?? 0;
      const b = bytes[i + 1] ?? 0;
      const c = bytes[i + 2] ?? 0;
      const triple = (a << 16) | (b << 8) | c;
      text += ALPHABET[triple >> 18] ?? '';
      text += ALPHABET[(triple >> 12) & 63] ?? '';
      text += i + 1 < end ? (ALPHABET[(triple >> 6) & 63] ?? '') : '=';
      text += i + 2 < end ? (ALPHABET[triple & 63] ?? '') : '=';
    }
    parts.push(text);
  }
  return parts.join('');
}

/** The bytes of canonical padded base64, or null when `text` is not that. */
export function base64ToBytes(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) return null;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - padding);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const last = i + 4 === text.length;
    const a = DECODE[text.charCodeAt(i)] ?? 255;
    const b = DECODE[text.charCodeAt(i + 1)] ?? 255;
    const c = last && padding >= 2 ? 0 : (DECODE[text.charCodeAt(i + 2)] ?? 255);
    const d = last && padding >= 1 ? 0 : (DECODE[text.charCodeAt(i + 3)] ?? 255);
    if ((a | b | c | d) > 63) return null;
    const triple = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = triple >> 16;
    if (o < out.length) out[o++] = (triple >> 8) & 255;
    if (o < out.length) out[o++] = triple & 255;
  }
  return out;
}

// The per-run secret of serve mode. Anything on this machine can reach a loopback port, and a
// web page can make the browser connect to one; the token is what tells our renderer apart.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes as base64url (43 characters, URL-safe without escaping). */
export function createServeToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Constant-time comparison. Both sides are hashed first so the comparison is over equal
 * lengths and its time does not reveal the token's length or a matching prefix.
 */
export function tokensEqual(expected: string, presented: string | null): boolean {
  if (presented === null) return false;
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(presented, 'utf8').digest();
  return timingSafeEqual(a, b);
}

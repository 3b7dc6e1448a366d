// Who may talk to the serve-mode server. Every HTTP request and every WebSocket upgrade passes
// these checks before anything else happens:
// - Host must name the loopback address and our port: a DNS-rebinding page (evil.example
//   resolving to 127.0.0.1) reaches the socket with its own name in Host, and is refused.
// - Origin, when a browser sends one, must be this same origin: a foreign page cannot drive
//   the API from the user's browser even if it guessed the port.
// - The token is checked by the caller only where it is required (the index and /api).
import type { IncomingHttpHeaders } from 'node:http';

export interface Refusal {
  status: 403 | 400;
  reason: string;
}

/** The Host values that name this server: 127.0.0.1:<port> and localhost:<port>. */
function allowedHosts(port: number): ReadonlySet<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
}

/**
 * A single-valued header. Node keeps only the first of repeated Host headers and joins repeated
 * Origin headers into one string, so repetition is counted in the raw header list: any is refused.
 */
function single(headers: IncomingHttpHeaders, rawHeaders: readonly string[], name: 'host' | 'origin'): string | null | 'duplicate' {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) count += 1;
  if (count > 1) return 'duplicate';
  const value: unknown = headers[name];
  if (value === undefined) return null;
  if (typeof value !== 'string') return 'duplicate';
  return value;
}

/** Returns why the request must be refused, or null when its Host and Origin are ours. */
export function checkHostAndOrigin(headers: IncomingHttpHeaders, rawHeaders: readonly string[], port: number): Refusal | null {
  const host = single(headers, rawHeaders, 'host');
  if (host === null || host === 'duplicate') return { status: 400, reason: 'missing or repeated Host header' };
  if (!allowedHosts(port).has(host.toLowerCase())) {
    return { status: 403, reason: `Host "${host}" is not this server (expected 127.0.0.1:${port} or localhost:${port})` };
  }
  const origin = single(headers, rawHeaders, 'origin');
  // Browsers always send Origin on WebSocket upgrades and on cross-origin requests; a request
  // without one comes from a non-browser client, which the token alone governs.
  if (origin === null) return null;
  if (origin === 'duplicate') return { status: 400, reason: 'repeated Origin header' };
  if (origin.toLowerCase() !== `http://${host.toLowerCase()}`) {
    return { status: 403, reason: `Origin "${origin}" is not this server (http://${host})` };
  }
  return null;
}

/** The ?token= query parameter of a request target, or null. */
export function tokenOf(target: URL): string | null {
  const all = target.searchParams.getAll('token');
  return all.length === 1 ? (all[0] ?? null) : null;
}

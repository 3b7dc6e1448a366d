// Response headers of serve mode. The Content-Security-Policy is the one the renderer declares
// in its own index.html (so the app and the browser face run under the same policy), sent as a
// header so that frame-ancestors (ignored in a <meta>) applies, with connect-src widened to this
// server's WebSocket and the directives that must never be missing forced on.
import type { OutgoingHttpHeaders } from 'node:http';

/** Used when the built index.html declares no policy: no looser than renderer/index.html's (no blob: sources). */
const FALLBACK_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** The content of the index's <meta http-equiv="Content-Security-Policy">, or null. */
function metaCspOf(html: string): string | null {
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    if (!/http-equiv\s*=\s*["']content-security-policy["']/i.test(tag)) continue;
    const content = /content\s*=\s*"([^"]*)"/i.exec(tag) ?? /content\s*=\s*'([^']*)'/i.exec(tag);
    if (content?.[1] !== undefined) return content[1].replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&');
  }
  return null;
}

function parseCsp(policy: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), values);
  }
  return directives;
}

/** The policy sent with every response of a server on `port`. */
export function serveCsp(indexHtml: string, port: number): string {
  const directives = parseCsp(metaCspOf(indexHtml) ?? FALLBACK_CSP);
  const connect = directives.get('connect-src') ?? ["'self'"];
  for (const source of [`ws://127.0.0.1:${port}`, `ws://localhost:${port}`]) {
    if (!connect.includes(source)) connect.push(source);
  }
  directives.set('connect-src', connect);
  // Not negotiable whatever the renderer declares: no plugins, no <base> rewrites, no framing.
  directives.set('object-src', ["'none'"]);
  directives.set('base-uri', ["'none'"]);
  directives.set('frame-ancestors', ["'none'"]);
  if (!directives.has('default-src')) directives.set('default-src', ["'self'"]);
  return [...directives].map(([name, values]) => [name, ...values].join(' ')).join('; ');
}

/** Headers every response carries (including refusals). */
export function baseHeaders(csp: string): OutgoingHttpHeaders {
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // The page URL carries the token; it must never leave in a Referer.
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  };
}

// Path-confined static serving of the built renderer (out/renderer). A request path is
// resolved segment by segment; "..", ".", encoded separators and NUL bytes are refused outright
// (not normalised away), and the resolved file's real path must still lie inside the root, so a
// symlink inside the build output cannot lead out of it either.
import { realpath, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export type StaticLookup = { kind: 'file'; path: string; size: number } | { kind: 'refused'; reason: string } | { kind: 'missing' };

/** Splits the raw request path (before any ?query) into decoded, individually safe segments. */
export function safeSegments(rawPath: string): string[] | null {
  if (!rawPath.startsWith('/')) return null;
  const segments: string[] = [];
  for (const raw of rawPath.slice(1).split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) return null;
    segments.push(segment);
  }
  return segments;
}

/** Finds the file a request path names inside `root` (an absolute folder), or says why not. */
export async function lookupStatic(root: string, rawPath: string): Promise<StaticLookup> {
  const segments = safeSegments(rawPath);
  if (segments === null) return { kind: 'refused', reason: `path "${rawPath}" leaves the served folder or is malformed` };
  const rootReal = await realpath(root);
  const candidate = resolve(rootReal, ...segments);
  if (candidate !== rootReal && !candidate.startsWith(rootReal + sep)) {
    return { kind: 'refused', reason: `path "${rawPath}" leaves the served folder` };
  }
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return { kind: 'missing' };
  }
  if (!real.startsWith(rootReal + sep)) return { kind: 'refused', reason: `path "${rawPath}" resolves outside the served folder` };
  const info = await stat(real);
  // Folders are not listed and have no implicit index: only the root document is an index.
  if (!info.isFile()) return { kind: 'missing' };
  return { kind: 'file', path: real, size: info.size };
}

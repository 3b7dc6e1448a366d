// What the serve-mode tests run the real server with: a temporary built-renderer folder (an
// index.html with the renderer's CSP, one asset, a secret file beside it that must never be
// served) and a small real core that dispatches the way dispatchCall does — method, request
// and response each validated against INSPECTOR_METHODS — over a few real handlers.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import WebSocket from 'ws';
import { INSPECTOR_METHODS, InspectorMethodSchema, type InspectorEvent, type SessionSnapshot } from '../../protocol/inspector-api.ts';
import type { DispatchOutcome, ServeCore } from '../../main/serve/api-socket.ts';
import { freshTempDir } from '../helpers/paths.ts';

export const SECRET = 'this file lies outside the served folder';
export const ASSET_BODY = 'export const asset = 1;\n';

/** tmp/secret.txt beside tmp/renderer/{index.html, assets/app.js, assets/escape.js -> ../../secret.txt}. */
export function makeRendererDir(): { rendererDir: string; secretPath: string } {
  const root = freshTempDir('serve');
  const rendererDir = join(root, 'renderer');
  mkdirSync(join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(
    join(rendererDir, 'index.html'),
    `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'" /><title>trace-inspector</title></head><body><script type="module" src="/assets/app.js"></script></body></html>`,
  );
  writeFileSync(join(rendererDir, 'assets', 'app.js'), ASSET_BODY);
  const secretPath = join(root, 'secret.txt');
  writeFileSync(secretPath, SECRET);
  // A link inside the build output that points out of it: its real path must be refused.
  symlinkSync(secretPath, join(rendererDir, 'assets', 'escape.js'));
  return { rendererDir, secretPath };
}

export function snapshot(teacherForce: boolean): SessionSnapshot {
  const zero = { PASS: 0, FAIL: 0, GAP: 0, KNOWN_GAP: 0, REVIEW_REQUIRED: 0 };
  return {
    engine: null,
    bundle: null,
    openedRun: null,
    openedRunKind: null,
    comparison: { contracts: null, contractsFile: null, defaultContract: { contract: 'bit_exact', everyBoundary: false }, mapFile: null, map: null },
    oracle: 'reference',
    isolation: 'process',
    teacherForce,
    engineOptions: {},
    timeline: [],
    nextPass: null,
    run: { status: 'idle', message: '' },
    busy: null,
    rowsVersion: 0,
    rowCount: 0,
    counts: zero,
    firstDivergence: null,
    errors: [],
    recent: { engines: [], bundles: [] },
    workDir: '/tmp/work',
  };
}

export interface TestCore extends ServeCore {
  emit(event: InspectorEvent): void;
  listenerCount(): number;
}

/** getSession and setTeacherForce, real enough to round-trip and to broadcast a snapshot. */
export function makeTestCore(): TestCore {
  const listeners = new Set<(event: InspectorEvent) => void>();
  let teacherForce = false;
  const emit = (event: InspectorEvent): void => {
    for (const listener of listeners) listener(event);
  };
  const handlers: { [name: string]: (request: unknown) => Promise<unknown> } = {
    getSession: async () => snapshot(teacherForce),
    setTeacherForce: async (request) => {
      teacherForce = INSPECTOR_METHODS.setTeacherForce.request.parse(request).on;
      const next = snapshot(teacherForce);
      emit({ type: 'snapshot', snapshot: next });
      return next;
    },
  };
  return {
    async dispatch(method, rawRequest): Promise<DispatchOutcome> {
      const known = InspectorMethodSchema.safeParse(method);
      if (!known.success) return { ok: false, error: { code: 'unknown_method', message: `unknown method "${method}"` } };
      const request = INSPECTOR_METHODS[known.data].request.safeParse(rawRequest);
      if (!request.success) return { ok: false, error: { code: 'bad_request', message: `${method}: ${request.error.message}` } };
      const handler = handlers[known.data];
      if (!handler) return { ok: false, error: { code: 'not_implemented', message: `${method} is not part of the test core` } };
      const response = INSPECTOR_METHODS[known.data].response.safeParse(await handler(request.data));
      if (!response.success) return { ok: false, error: { code: 'bad_response', message: response.error.message } };
      return { ok: true, response: response.data };
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit,
    listenerCount: () => listeners.size,
  };
}

export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP request: the path is sent exactly as given (no normalisation of "..") and Host can be forged. */
export function rawGet(options: { host?: string; port: number; path: string; headers?: Record<string, string>; method?: string }): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: options.host ?? '127.0.0.1', port: options.port, path: options.path, method: options.method ?? 'GET', headers: options.headers ?? {} },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** Opens a WebSocket; resolves with the socket, or with the HTTP status that refused the upgrade. */
export function openSocket(
  url: string,
  options: { headers?: Record<string, string>; origin?: string } = {},
): Promise<{ socket: WebSocket } | { refused: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: options.headers ?? {}, ...(options.origin ? { origin: options.origin } : {}) });
    socket.once('open', () => resolve({ socket }));
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ refused: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    socket.once('error', reject);
  });
}

/** Collects every parsed JSON text frame a socket receives. */
export function collectFrames(socket: WebSocket): unknown[] {
  const frames: unknown[] = [];
  socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8'))));
  return frames;
}

export async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 5000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

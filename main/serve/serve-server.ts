// Serve mode's server: the built renderer over HTTP and the inspector API over a WebSocket,
// on 127.0.0.1 only.
//
// Access rule (docs/app.md, "Serve mode"):
// - every request and upgrade: Host must be 127.0.0.1:<port> or localhost:<port>, and Origin,
//   when sent, must be that same origin (DNS rebinding, cross-site pages);
// - the document (/ or /index.html) and the API (/api, WebSocket) require ?token=<per-run
//   token>, compared in constant time;
// - the other static files are the public build output (the same bytes as out/renderer in
//   any checkout) and are served without the token, path-confined to out/renderer. They are
//   inert without the document, and the document is what reaches the API.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { join, resolve } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { attachApiSocket, type ServeCore } from './api-socket.ts';
import { checkHostAndOrigin, tokenOf, type Refusal } from './request-guard.ts';
import { baseHeaders, serveCsp } from './security-headers.ts';
import { contentTypeOf, lookupStatic, safeSegments } from './static-files.ts';
import { createServeToken, tokensEqual } from './serve-token.ts';

/** The largest inbound frame: verifyReceipt carries an envelope of up to 64 MiB as JSON text. */
export const MAX_INBOUND_FRAME_BYTES = 96 * 1024 * 1024;
export const API_PATH = '/api';
const LOOPBACK = '127.0.0.1';

export interface ServeServerOptions {
  /** The built renderer (out/renderer): index.html and its assets. */
  rendererDir: string;
  /** 0 picks a free port. */
  port: number;
  core: ServeCore;
  /** Tests pass their own; otherwise a fresh 32-byte token per run. */
  token?: string;
  /** Refusals and socket errors; silent by default. */
  log?: (line: string) => void;
}

export interface ServeServer {
  readonly port: number;
  readonly token: string;
  /** http://127.0.0.1:<port>/?token=<token> */
  readonly url: string;
  /** Open API connections (for tests and the shutdown message). */
  clientCount(): number;
  close(): Promise<void>;
}

export class ServeSetupError extends Error {
  override name = 'ServeSetupError';
}

const TOKEN_REFUSAL = 'missing or wrong token: open the URL that `trace-inspector serve` printed (it ends in ?token=...)';

function isIndex(rawPath: string): boolean {
  const segments = safeSegments(rawPath);
  return segments !== null && (segments.length === 0 || (segments.length === 1 && segments[0] === 'index.html'));
}

function rawPathOf(request: IncomingMessage): string {
  const target = request.url ?? '/';
  const query = target.indexOf('?');
  return query >= 0 ? target.slice(0, query) : target;
}

function targetUrl(request: IncomingMessage): URL | null {
  try {
    return new URL(request.url ?? '/', `http://${LOOPBACK}`);
  } catch {
    return null;
  }
}

export async function startServeServer(options: ServeServerOptions): Promise<ServeServer> {
  const rendererDir = resolve(options.rendererDir);
  const indexPath = join(rendererDir, 'index.html');
  let indexHtml: string;
  try {
    indexHtml = await readFile(indexPath, 'utf8');
  } catch {
    throw new ServeSetupError(`the built renderer is missing (${indexPath}): run \`npm run build\` first`);
  }
  const token = options.token ?? createServeToken();
  const log = options.log ?? (() => {});
  const clients = new Set<WebSocket>();
  // Set once the port is known; requests cannot arrive before listen() resolves.
  let port = 0;
  let headers: OutgoingHttpHeaders = {};

  const refuse = (response: ServerResponse, refusal: Refusal): void => {
    log(`serve: refused a request: ${refusal.reason}`);
    response.writeHead(refusal.status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    response.end(`${refusal.status === 403 ? 'Forbidden' : 'Bad Request'}: ${refusal.reason}\n`);
  };

  const serveFile = (request: IncomingMessage, response: ServerResponse, path: string, size: number, cache: string): void => {
    response.writeHead(200, { ...headers, 'Content-Type': contentTypeOf(path), 'Content-Length': size, 'Cache-Control': cache });
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    const stream = createReadStream(path);
    stream.on('error', () => response.destroy());
    stream.pipe(response);
  };

  const handleRequest = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const guard = checkHostAndOrigin(request.headers, request.rawHeaders, port);
    if (guard) return refuse(response, guard);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { ...headers, Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('Method Not Allowed: serve mode only answers GET and HEAD\n');
      return;
    }
    const rawPath = rawPathOf(request);
    const target = targetUrl(request);
    if (target === null) return refuse(response, { status: 400, reason: 'malformed request target' });
    if (rawPath === API_PATH) {
      response.writeHead(426, { ...headers, Upgrade: 'websocket', 'Content-Type': 'text/plain; charset=utf-8' });
      response.end(`Upgrade Required: ${API_PATH} is the WebSocket API\n`);
      return;
    }
    if (isIndex(rawPath)) {
      if (!tokensEqual(token, tokenOf(target))) return refuse(response, { status: 403, reason: TOKEN_REFUSAL });
      // The document is never cached: it embeds nothing secret, but a cached copy would
      // outlive the run whose token its URL carries.
      serveFile(request, response, indexPath, Buffer.byteLength(indexHtml), 'no-store');
      return;
    }
    const found = await lookupStatic(rendererDir, rawPath);
    if (found.kind === 'refused') return refuse(response, { status: 403, reason: found.reason });
    if (found.kind === 'missing') {
      response.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
      response.end(`Not Found: ${rawPath}\n`);
      return;
    }
    serveFile(request, response, found.path, found.size, 'no-cache');
  };

  const refuseUpgrade = (socket: Duplex, refusal: Refusal): void => {
    log(`serve: refused a WebSocket upgrade: ${refusal.reason}`);
    const body = `${refusal.status === 403 ? 'Forbidden' : 'Bad Request'}: ${refusal.reason}\n`;
    socket.end(
      `HTTP/1.1 ${refusal.status} ${refusal.status === 403 ? 'Forbidden' : 'Bad Request'}\r\n` +
        'Connection: close\r\nContent-Type: text/plain; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INBOUND_FRAME_BYTES, perMessageDeflate: false });
  wss.on('error', (error) => log(`serve: WebSocket server error: ${error.message}`));

  const server = createServer((request, response) => {
    handleRequest(request, response).catch((error: unknown) => {
      log(`serve: request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) response.writeHead(500, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('Internal Server Error\n');
    });
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const guard = checkHostAndOrigin(request.headers, request.rawHeaders, port);
    if (guard) return refuseUpgrade(socket, guard);
    const target = targetUrl(request);
    if (target === null || rawPathOf(request) !== API_PATH) return refuseUpgrade(socket, { status: 400, reason: `the WebSocket API is at ${API_PATH}` });
    if (!tokensEqual(token, tokenOf(target))) return refuseUpgrade(socket, { status: 403, reason: TOKEN_REFUSAL });
    wss.handleUpgrade(request, socket, head, (client) => {
      clients.add(client);
      client.on('close', () => clients.delete(client));
      attachApiSocket(client, options.core, log);
    });
  });

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen({ host: LOOPBACK, port: options.port, exclusive: true }, () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  port = (server.address() as AddressInfo).port;
  headers = baseHeaders(serveCsp(indexHtml, port));

  // Session events go to every connected client; serialised once per event.
  const unsubscribe = options.core.subscribe((event) => {
    const text = JSON.stringify({ event });
    for (const client of clients) if (client.readyState === client.OPEN) client.send(text);
  });

  let closing: Promise<void> | null = null;
  return {
    port,
    token,
    url: `http://${LOOPBACK}:${port}/?token=${token}`,
    clientCount: () => clients.size,
    close() {
      closing ??= (async () => {
        unsubscribe();
        for (const client of clients) client.close(1001, 'trace-inspector serve is shutting down');
        await new Promise<void>((done) => wss.close(() => done()));
        await new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
          // Sockets that did not finish the closing handshake in time are cut.
          setTimeout(() => {
            for (const client of clients) client.terminate();
          }, 1000).unref();
        });
      })();
      return closing;
    },
  };
}

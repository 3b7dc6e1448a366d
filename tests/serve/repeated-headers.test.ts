// docs/app.md: "a missing or repeated Host gets 400 Bad Request". Node keeps only the first of
// two Host headers (and joins two Origin headers into one string), so a request whose first
// Host is valid used to pass as if it had one. Sent here over a raw socket, byte for byte, to
// the document, the public assets and the WebSocket upgrade.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeServer, type ServeServer } from '../../main/serve/serve-server.ts';
import { makeRendererDir, makeTestCore } from './serve-fixture.ts';

let server: ServeServer;

beforeAll(async () => {
  server = await startServeServer({ rendererDir: makeRendererDir().rendererDir, port: 0, core: makeTestCore() });
});
afterAll(async () => {
  await server.close();
});

/** Sends `head` as the request head and resolves with the status line's code. */
function rawStatus(head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match) {
        resolve(Number(match[1]));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.write(head);
  });
}

describe('serve mode refuses repeated Host and Origin headers (400)', () => {
  const good = (): string => `127.0.0.1:${server.port}`;
  const upgrade = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

  it('a single valid Host is served (the baseline the other cases differ from by one header)', async () => {
    expect(await rawStatus(`GET /?token=${server.token} HTTP/1.1\r\nHost: ${good()}\r\n\r\n`)).toBe(200);
  });

  it.each([
    ['the document', (token: string) => `GET /?token=${token} HTTP/1.1\r\n`],
    ['the WebSocket upgrade', (token: string) => `GET /api?token=${token} HTTP/1.1\r\n${upgrade}`],
  ])('two Host headers, the valid one first, on %s', async (_label, start) => {
    expect(await rawStatus(`${start(server.token)}Host: ${good()}\r\nHost: evil.example\r\n\r\n`)).toBe(400);
    expect(await rawStatus(`${start(server.token)}Host: ${good()}\r\nHost: ${good()}\r\n\r\n`)).toBe(400);
  });

  it('two Origin headers, the valid one first', async () => {
    const head = `GET /?token=${server.token} HTTP/1.1\r\nHost: ${good()}\r\nOrigin: http://${good()}\r\nOrigin: http://evil.example\r\n\r\n`;
    expect(await rawStatus(head)).toBe(400);
  });
});

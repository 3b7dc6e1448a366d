// Serve mode's server, started for real in-process on a random port: who it refuses (no or a
// wrong token, a foreign Host, a foreign Origin, another interface, a path out of its folder)
// and what it does for the one client it accepts (calls round-trip, bad frames get an error
// and the connection stays usable, events reach every client). Each case fails if the
// protection it names is taken out of main/serve.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EventFrameSchema, INSPECTOR_METHODS, ReplyFrameSchema } from '../../protocol/inspector-api.ts';
import { startServeServer, type ServeServer } from '../../main/serve/serve-server.ts';
import { createServeToken, tokensEqual } from '../../main/serve/serve-token.ts';
import { ASSET_BODY, SECRET, collectFrames, makeRendererDir, makeTestCore, openSocket, rawGet, waitFor, type TestCore } from './serve-fixture.ts';

let server: ServeServer;
let core: TestCore;
let port: number;
let token: string;
const wrongToken = createServeToken();

function apiUrl(tokenValue: string | null, host = `127.0.0.1:${0}`): string {
  return `ws://${host}/api${tokenValue === null ? '' : `?token=${encodeURIComponent(tokenValue)}`}`;
}

async function connect(): Promise<WebSocket> {
  const opened = await openSocket(apiUrl(token, `127.0.0.1:${port}`), { origin: `http://127.0.0.1:${port}` });
  if (!('socket' in opened)) throw new Error(`upgrade refused with ${opened.refused}: ${opened.body}`);
  return opened.socket;
}

beforeAll(async () => {
  const { rendererDir } = makeRendererDir();
  core = makeTestCore();
  server = await startServeServer({ rendererDir, port: 0, core });
  port = server.port;
  token = server.token;
});

afterAll(async () => {
  await server.close();
});

describe('serve mode: the token', () => {
  it('is 32 random bytes in base64url, fresh per run, compared exactly', () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(createServeToken()).not.toBe(token);
    expect(server.url).toBe(`http://127.0.0.1:${port}/?token=${token}`);
    expect(tokensEqual(token, token)).toBe(true);
    expect(tokensEqual(token, `${token}x`)).toBe(false);
    expect(tokensEqual(token, token.slice(0, -1))).toBe(false);
    expect(tokensEqual(token, null)).toBe(false);
  });

  it('serves the document only with the token, under the strict headers', async () => {
    const ok = await rawGet({ port, path: `/?token=${token}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('<title>trace-inspector</title>');
    expect(ok.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    expect(ok.headers['referrer-policy']).toBe('no-referrer');
    const csp = String(ok.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}`);
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect((await rawGet({ port, path: `/index.html?token=${token}` })).status).toBe(200);
  });

  it('refuses the document without a token or with a wrong one (403, plain text)', async () => {
    for (const path of [
      '/',
      '/index.html',
      `/?token=${wrongToken}`,
      `/index.html?token=${token.slice(0, -1)}`,
      `/?token=${token}&token=${token}`,
      `/?tok=${token}`,
    ]) {
      const refused = await rawGet({ port, path });
      expect(refused.status, path).toBe(403);
      expect(refused.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(refused.body).toMatch(/^Forbidden: missing or wrong token/);
      expect(refused.body).not.toContain('<title>');
    }
  });

  it('serves the public build assets without the token, with their type', async () => {
    const asset = await rawGet({ port, path: '/assets/app.js' });
    expect(asset.status).toBe(200);
    expect(asset.body).toBe(ASSET_BODY);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['x-content-type-options']).toBe('nosniff');
    expect((await rawGet({ port, path: '/assets/missing.js' })).status).toBe(404);
    expect((await rawGet({ port, path: '/assets' })).status).toBe(404);
  });

  it('refuses a WebSocket upgrade without a token or with a wrong one', async () => {
    for (const url of [apiUrl(null, `127.0.0.1:${port}`), apiUrl(wrongToken, `127.0.0.1:${port}`), apiUrl(`${token}A`, `127.0.0.1:${port}`)]) {
      const opened = await openSocket(url);
      expect(opened, url).toEqual({ refused: 403, body: expect.stringMatching(/^Forbidden: missing or wrong token/) });
    }
    expect(server.clientCount()).toBe(0);
  });

  it('refuses an upgrade anywhere but /api', async () => {
    const opened = await openSocket(`ws://127.0.0.1:${port}/?token=${token}`);
    expect(opened).toMatchObject({ refused: 400 });
  });
});

describe('serve mode: Host, Origin and interface', () => {
  it('refuses a foreign Host header (DNS rebinding), on HTTP and on the upgrade', async () => {
    for (const host of [`evil.example:${port}`, 'localhost', `127.0.0.1:${port + 1}`, `127.0.0.1.evil.example:${port}`]) {
      const refused = await rawGet({ port, path: `/?token=${token}`, headers: { Host: host } });
      expect(refused.status, host).toBe(403);
      expect(refused.body).toContain(`Host "${host}" is not this server`);
      const asset = await rawGet({ port, path: '/assets/app.js', headers: { Host: host } });
      expect(asset.status, host).toBe(403);
      const opened = await openSocket(apiUrl(token, `127.0.0.1:${port}`), { headers: { Host: host } });
      expect(opened, host).toMatchObject({ refused: 403 });
    }
    const localhost = await rawGet({ port, path: `/?token=${token}`, headers: { Host: `localhost:${port}` } });
    expect(localhost.status).toBe(200);
  });

  it('refuses a foreign Origin, on HTTP and on the upgrade', async () => {
    for (const origin of ['http://evil.example', `http://localhost:${port + 1}`, `https://127.0.0.1:${port}`, 'null']) {
      const refused = await rawGet({ port, path: `/?token=${token}`, headers: { Origin: origin } });
      expect(refused.status, origin).toBe(403);
      expect(refused.body).toContain(`Origin "${origin}" is not this server`);
      const opened = await openSocket(apiUrl(token, `127.0.0.1:${port}`), { origin });
      expect(opened, origin).toMatchObject({ refused: 403 });
    }
    // Same origin (either loopback name, matching the Host it came with) is accepted.
    const same = await openSocket(apiUrl(token, `localhost:${port}`), { origin: `http://localhost:${port}` });
    expect('socket' in same).toBe(true);
    if ('socket' in same) same.socket.close();
  });

  it('listens on 127.0.0.1 only: another loopback address of this machine is refused', async () => {
    // Linux routes all of 127.0.0.0/8 to lo: a server bound to 0.0.0.0 (or ::) would answer
    // 127.0.0.2 too; one bound to 127.0.0.1 does not.
    await expect(rawGet({ host: '127.0.0.2', port, path: `/?token=${token}`, headers: { Host: `127.0.0.1:${port}` } })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await expect(rawGet({ host: '::1', port, path: `/?token=${token}`, headers: { Host: `127.0.0.1:${port}` } })).rejects.toMatchObject({
      code: expect.stringMatching(/ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH/),
    });
  });

  it('answers GET and HEAD only', async () => {
    expect((await rawGet({ port, path: `/?token=${token}`, method: 'POST' })).status).toBe(405);
    const head = await rawGet({ port, path: `/?token=${token}`, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });
});

describe('serve mode: path confinement', () => {
  it('refuses every path that leaves the served folder and never serves the file beside it', async () => {
    const paths = [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/%2E%2E/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/..%5csecret.txt',
      '/assets/%00app.js',
      '/assets/%zz',
    ];
    for (const path of paths) {
      const refused = await rawGet({ port, path });
      expect(refused.status, path).toBe(403);
      expect(refused.body, path).not.toContain(SECRET);
    }
  });

  it('refuses a symlink inside the build output that points out of it', async () => {
    const refused = await rawGet({ port, path: '/assets/escape.js' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('resolves outside the served folder');
    expect(refused.body).not.toContain(SECRET);
  });
});

describe('serve mode: the API', () => {
  it('round-trips a call: CallFrame in, ReplyFrame out, the response valid for its method', async () => {
    const socket = await connect();
    const frames = collectFrames(socket);
    socket.send(JSON.stringify({ id: 1, method: 'getSession', request: {} }));
    const reply = ReplyFrameSchema.parse(await waitFor(() => frames[0], 'the reply'));
    expect(reply).toMatchObject({ id: 1, ok: true });
    if (!reply.ok) throw new Error('unreachable');
    expect(INSPECTOR_METHODS.getSession.response.parse(reply.response).teacherForce).toBe(false);
    socket.close();
  });

  it('answers a bad frame that names a call id with an error reply, and the connection stays usable', async () => {
    const socket = await connect();
    const frames = collectFrames(socket);
    socket.send(JSON.stringify({ id: 5, method: 'formatDisk', request: {} }));
    socket.send(JSON.stringify({ id: 6, request: {} }));
    socket.send(JSON.stringify({ id: 7, method: 'setTeacherForce', request: { on: 'yes' } }));
    socket.send(JSON.stringify({ id: 8, method: 'getSession', request: {} }));
    await waitFor(() => (frames.length >= 4 ? true : undefined), 'four replies');
    const replies = frames.map((frame) => ReplyFrameSchema.parse(frame)).sort((a, b) => a.id - b.id);
    expect(replies[0]).toMatchObject({ id: 5, ok: false, error: { code: 'bad_frame', message: expect.stringContaining('method') } });
    expect(replies[1]).toMatchObject({ id: 6, ok: false, error: { code: 'bad_frame', message: expect.stringContaining('method') } });
    expect(replies[2]).toMatchObject({ id: 7, ok: false, error: { code: 'bad_request' } });
    expect(replies[3]).toMatchObject({ id: 8, ok: true });
    expect(socket.readyState).toBe(WebSocket.OPEN);
    socket.close();
  });

  it('closes a connection whose frame names no call (not JSON, no id, binary) with the reason, and keeps serving others', async () => {
    const cases: Array<[string | Buffer, number, RegExp]> = [
      ['{not json', 1007, /^frame is not JSON/],
      [JSON.stringify({ method: 'getSession', request: {} }), 1007, /^frame has no call id/],
      [JSON.stringify({ id: -1, method: 'getSession', request: {} }), 1007, /^frame has no call id/],
      [Buffer.from([1, 2, 3]), 1003, /^binary frames are not accepted/],
    ];
    for (const [payload, code, reason] of cases) {
      const socket = await connect();
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.once('close', (closeCode, closeReason) => resolve({ code: closeCode, reason: closeReason.toString('utf8') })),
      );
      socket.send(payload);
      const result = await closed;
      expect(result.code).toBe(code);
      expect(result.reason).toMatch(reason);
    }
    const socket = await connect();
    const frames = collectFrames(socket);
    socket.send(JSON.stringify({ id: 9, method: 'getSession', request: {} }));
    expect(ReplyFrameSchema.parse(await waitFor(() => frames[0], 'the reply'))).toMatchObject({ id: 9, ok: true });
    socket.close();
  });

  it('broadcasts session events to every connected client as EventFrames', async () => {
    const first = await connect();
    const second = await connect();
    const firstFrames = collectFrames(first);
    const secondFrames = collectFrames(second);
    await waitFor(() => (server.clientCount() >= 2 ? true : undefined), 'two clients');
    first.send(JSON.stringify({ id: 3, method: 'setTeacherForce', request: { on: true } }));
    const event = (frames: unknown[]) => frames.map((frame) => EventFrameSchema.safeParse(frame)).find((parsed) => parsed.success)?.data;
    for (const frames of [firstFrames, secondFrames]) {
      const frame = await waitFor(() => event(frames), 'the snapshot event');
      expect(frame.event.type).toBe('snapshot');
      if (frame.event.type === 'snapshot') expect(frame.event.snapshot.teacherForce).toBe(true);
    }
    expect(ReplyFrameSchema.parse(await waitFor(() => firstFrames.find((frame) => ReplyFrameSchema.safeParse(frame).success), 'the reply'))).toMatchObject({
      id: 3,
      ok: true,
    });
    core.emit({ type: 'progress', pass: 2, kind: 'decode', records: 17, lastBoundary: 'backbone.logits' });
    await waitFor(() => (secondFrames.filter((frame) => EventFrameSchema.safeParse(frame).success).length >= 2 ? true : undefined), 'the progress event');
    expect(secondFrames.at(-1)).toEqual({ event: { type: 'progress', pass: 2, kind: 'decode', records: 17, lastBoundary: 'backbone.logits' } });
    first.close();
    second.close();
  });
});

describe('serve mode: shutdown', () => {
  it('closes its clients and unsubscribes from the session', async () => {
    const { rendererDir } = makeRendererDir();
    const ownCore = makeTestCore();
    const own = await startServeServer({ rendererDir, port: 0, core: ownCore });
    expect(ownCore.listenerCount()).toBe(1);
    const opened = await openSocket(`ws://127.0.0.1:${own.port}/api?token=${own.token}`);
    if (!('socket' in opened)) throw new Error('refused');
    const closed = new Promise<number>((resolve) => opened.socket.once('close', (code) => resolve(code)));
    await own.close();
    expect(await closed).toBe(1001);
    expect(ownCore.listenerCount()).toBe(0);
    await expect(rawGet({ port: own.port, path: `/?token=${own.token}` })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('refuses to start without a built renderer, naming the missing file', async () => {
    await expect(startServeServer({ rendererDir: '/nonexistent/renderer', port: 0, core: makeTestCore() })).rejects.toThrow(
      /the built renderer is missing \(\/nonexistent\/renderer\/index.html\): run `npm run build` first/,
    );
  });
});

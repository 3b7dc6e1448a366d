// Issue 10, classes 1-2 in serve mode, against the real `trace-inspector serve` over its
// WebSocket: every API method that takes a path (exportReceipt keyPath, openBundle, openRun,
// setOracleBundle, setContractsFile, setMapFile, openEngine) and a bundle whose weights_file is special, each fed a character device, a FIFO,
// a folder, a symlink and an oversized file. Each must be an error reply naming the file, never
// an internal error, a dead server or a wedged session: after every refusal the server answers
// getSession, and at the end the embedded default still runs a prefill.
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplyFrameSchema, type ReplyFrame } from '../../protocol/inspector-api.ts';
import { startServe, type ServeProcess } from '../e2e/serve-harness.ts';
import {
  copyBundle,
  hostileTargets,
  removeTempDirs,
  tempDir,
  userNamedVariant,
  variantInsideBundle,
  VARIANTS,
  type HostileTargets,
} from './hostile-fixtures.ts';

/** How long one reply may take: refusals are immediate; a prefill of the default case is seconds. */
const REPLY_BOUND_MS = 30_000;

let serve: ServeProcess;
let socket: WebSocket;
let targets: HostileTargets;
let nextId = 1;
const replies = new Map<number, ReplyFrame>();

async function call(method: string, request: object): Promise<ReplyFrame> {
  const id = nextId++;
  socket.send(JSON.stringify({ id, method, request }));
  const start = Date.now();
  while (!replies.has(id)) {
    if (Date.now() - start > REPLY_BOUND_MS) throw new Error(`${method}: no reply within ${REPLY_BOUND_MS} ms (the server is wedged)\n${serve.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return replies.get(id) as ReplyFrame;
}

async function connect(server: ServeProcess): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${new URL(server.url).port}/api?token=${encodeURIComponent(server.token)}`, { origin: server.origin });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { id?: unknown };
    if (typeof frame.id === 'number') replies.set(frame.id, ReplyFrameSchema.parse(frame));
  });
  return ws;
}

/** The server still answers, and is not left busy. */
async function expectServerUsable(after: string): Promise<void> {
  const reply = await call('getSession', {});
  expect(reply.ok, `getSession after ${after}`).toBe(true);
  if (reply.ok) expect((reply.response as { busy: unknown }).busy, `busy after ${after}`).toBeNull();
}

function expectRefusal(reply: ReplyFrame, said: string, names: readonly string[]): void {
  expect(reply.ok, said).toBe(false);
  if (reply.ok) return;
  expect(reply.error.code, `${said}: ${reply.error.message}`).not.toBe('E_INTERNAL');
  for (const name of names) expect(reply.error.message, said).toContain(name);
  expect(reply.error.message, said).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  expect(reply.error.message, said).not.toContain(targets.outsideSha256);
}

beforeAll(async () => {
  targets = hostileTargets(join(tempDir('serve-targets'), 'targets'));
  serve = await startServe();
  socket = await connect(serve);
}, 120_000);

afterAll(async () => {
  socket?.close();
  await serve?.stop();
  removeTempDirs();
});

describe('serve mode: every API path refuses special files and the session stays usable', () => {
  it('exportReceipt keyPath', async () => {
    for (const variant of VARIANTS) {
      const path = userNamedVariant(targets, variant, tempDir(`key-${variant}`), 64 * 1024);
      if (path === null) continue;
      expectRefusal(await call('exportReceipt', { keyPath: path }), `exportReceipt ${variant}`, [path]);
      await expectServerUsable(`exportReceipt ${variant}`);
    }
  }, 180_000);

  it('openEngine library', async () => {
    for (const variant of VARIANTS) {
      const path = userNamedVariant(targets, variant, tempDir(`engine-${variant}`), null);
      if (path === null) continue;
      expectRefusal(await call('openEngine', { library: path }), `openEngine ${variant}`, [path]);
      await expectServerUsable(`openEngine ${variant}`);
    }
  }, 180_000);

  // The comparison files (compare's --contracts / --map), read as JSON under a 16 MiB cap.
  for (const method of ['setContractsFile', 'setMapFile'] as const) {
    it(`${method} file`, async () => {
      for (const variant of VARIANTS) {
        const path = userNamedVariant(targets, variant, tempDir(`${method}-${variant}`), 16 * 1024 * 1024);
        if (path === null) continue;
        expectRefusal(await call(method, { file: path }), `${method} ${variant}`, [path]);
        await expectServerUsable(`${method} ${variant}`);
      }
    }, 180_000);
  }

  for (const method of ['openBundle', 'openRun', 'setOracleBundle'] as const) {
    it(`${method}: manifest.json`, async () => {
      for (const variant of VARIANTS) {
        const bundle = copyBundle(join(tempDir(`${method}-${variant}`), 'bundle'));
        variantInsideBundle(targets, variant, bundle, 'manifest.json', 256 * 1024 * 1024);
        expectRefusal(await call(method, { dir: bundle }), `${method} ${variant}`, [join(bundle, 'manifest.json')]);
        await expectServerUsable(`${method} ${variant}`);
      }
    }, 180_000);
  }

  it('prefill of a bundle whose weights_file is special or outside: an error reply, and reset is not busy', async () => {
    for (const variant of VARIANTS) {
      const bundle = copyBundle(join(tempDir(`weights-${variant}`), 'bundle'), (manifest) => {
        manifest.provenance.model.weights_file = 'weights.safetensors';
      });
      if (!variantInsideBundle(targets, variant, bundle, 'weights.safetensors', null)) continue;
      const opened = await call('openBundle', { dir: bundle });
      expect(opened.ok, `openBundle weights ${variant}`).toBe(true);
      expectRefusal(await call('prefill', {}), `prefill weights ${variant}`, ['provenance.model.weights_file']);
      await expectServerUsable(`prefill weights ${variant}`);
      const reset = await call('reset', {});
      expect(reset.ok, `reset after weights ${variant}`).toBe(true);
    }
  }, 180_000);

  it('after all of it, the embedded default still opens and runs a prefill', async () => {
    expect((await call('openDefault', {})).ok).toBe(true);
    const prefill = await call('prefill', {});
    expect(prefill.ok, prefill.ok ? '' : prefill.error.message).toBe(true);
  }, 120_000);
});

describe('serve mode: a work folder on a special file system', () => {
  it('prefill with --work under /proc is an error reply naming it, and the server keeps answering', async () => {
    const procServe = await startServe(['--work', '/proc/ti-no-such/work']);
    const saved = { serve, socket };
    try {
      serve = procServe;
      socket = await connect(procServe);
      expectRefusal(await call('prefill', {}), 'prefill --work /proc', ['/proc/ti-no-such/work']);
      await expectServerUsable('prefill --work /proc');
    } finally {
      socket.close();
      ({ serve, socket } = saved);
      await procServe.stop();
    }
  }, 120_000);
});

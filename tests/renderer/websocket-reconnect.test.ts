// Serve mode's WebSocket host: calls made while the socket is down wait and go out on open; a
// drop rejects only the calls already sent (their outcome is unknown), reports "reconnecting",
// and reopens after a backoff that doubles to a ceiling and resets once connected. The socket is
// a stand-in that records what the transport does; the timers are vitest's fake clock.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocketTransport } from '../../renderer/src/api/websocket-transport.ts';
import type { ConnectionState } from '../../renderer/src/api/connection-state.ts';

type Listener = (event: { data?: unknown; code?: number }) => void;

class FakeSocket {
  static readonly OPEN = 1;
  static readonly opened: FakeSocket[] = [];
  readyState = 0;
  readonly sent: string[] = [];
  private readonly listeners = new Map<string, Listener[]>();

  constructor(readonly url: string) {
    FakeSocket.opened.push(this);
  }

  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  send(data: string): void {
    if (this.readyState !== FakeSocket.OPEN) throw new Error('send on a socket that is not open');
    this.sent.push(data);
  }

  private fire(type: string, event: { data?: unknown; code?: number }): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  serverOpens(): void {
    this.readyState = FakeSocket.OPEN;
    this.fire('open', {});
  }

  serverSends(frame: unknown): void {
    this.fire('message', { data: typeof frame === 'string' ? frame : JSON.stringify(frame) });
  }

  serverCloses(code: number): void {
    this.readyState = 3;
    this.fire('close', { code });
  }
}

const latest = (): FakeSocket => FakeSocket.opened.at(-1) as FakeSocket;
const sentIds = (socket: FakeSocket): number[] => socket.sent.map((text) => (JSON.parse(text) as { id: number }).id);

let states: Array<[ConnectionState, string]>;
let transport: WebSocketTransport;

beforeEach(() => {
  vi.useFakeTimers();
  FakeSocket.opened.length = 0;
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal('window', { setTimeout: (run: () => void, ms: number) => setTimeout(run, ms) });
  transport = new WebSocketTransport('ws://127.0.0.1:1/api?token=t');
  states = [];
  transport.onConnection((state, detail) => states.push([state, detail]));
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('WebSocketTransport', () => {
  it('queues a call made before the socket opens and sends it on open; the reply resolves it', async () => {
    const call = transport.call('getSession', {});
    expect(latest().sent).toEqual([]);
    latest().serverOpens();
    expect(states.at(-1)?.[0]).toBe('connected');
    expect(sentIds(latest())).toEqual([1]);
    latest().serverSends({ id: 1, ok: true, response: { answer: 42 } });
    await expect(call).resolves.toEqual({ answer: 42 });
  });

  it('rejects a sent call when the socket drops, keeps an unsent one, and sends it after reconnecting', async () => {
    latest().serverOpens();
    const sent = transport.call('getSession', {});
    const first = latest();
    first.serverCloses(1006);
    await expect(sent).rejects.toMatchObject({ code: 'disconnected' });
    expect(states.at(-1)).toEqual(['reconnecting', 'connection closed (code 1006); retrying in 250 ms']);

    const queued = transport.call('getSession', {});
    expect(FakeSocket.opened).toHaveLength(1);
    vi.advanceTimersByTime(249);
    expect(FakeSocket.opened).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.opened).toHaveLength(2);
    expect(latest().url).toBe(first.url);
    latest().serverOpens();
    expect(sentIds(latest())).toEqual([2]);
    latest().serverSends({ id: 2, ok: false, error: { code: 'E_BUSY', message: 'a run is in progress' } });
    await expect(queued).rejects.toMatchObject({ code: 'E_BUSY', message: 'a run is in progress' });
  });

  it('keeps a call that never went out when the socket drops before opening, and sends it on the next socket', async () => {
    const waiting = transport.call('getSession', {});
    latest().serverCloses(1006);
    vi.advanceTimersByTime(250);
    latest().serverOpens();
    expect(sentIds(latest())).toEqual([1]);
    latest().serverSends({ id: 1, ok: true, response: 'after the drop' });
    await expect(waiting).resolves.toBe('after the drop');
  });

  it('doubles the backoff on every failed attempt up to 5 s, and starts over once connected', () => {
    const delays: number[] = [];
    for (let attempt = 0; attempt < 7; attempt += 1) {
      const before = FakeSocket.opened.length;
      latest().serverCloses(1006);
      const detail = states.at(-1)?.[1] ?? '';
      delays.push(Number(/retrying in (\d+) ms/.exec(detail)?.[1]));
      vi.advanceTimersByTime(delays.at(-1) ?? 0);
      expect(FakeSocket.opened).toHaveLength(before + 1);
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    latest().serverOpens();
    latest().serverCloses(1001);
    expect(states.at(-1)?.[1]).toMatch(/retrying in 250 ms/);
  });

  it('reports malformed frames as transport errors and passes events to subscribers', () => {
    const errors: string[] = [];
    transport.onTransportError((message) => errors.push(message));
    const events: unknown[] = [];
    transport.subscribe((event) => events.push(event));
    latest().serverOpens();
    latest().serverSends('not json');
    latest().serverSends({ id: 'x', ok: true });
    latest().serverSends({ event: { type: 'no-such-event' } });
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/not JSON/);
    expect(errors[1]).toMatch(/reply frame .* malformed/);
    expect(errors[2]).toMatch(/event frame .* malformed/);
    expect(events).toEqual([]);
    const progress = { type: 'progress', pass: 3, kind: 'decode', records: 17, lastBoundary: 'depthformer.out' };
    latest().serverSends({ event: progress });
    expect(events).toEqual([progress]);
    expect(errors).toHaveLength(3);
  });
});

// The preload on the real preload/index.ts with `electron` replaced by recording stand-ins: it
// exposes one object with call and subscribe, and it is where each reply and event is validated
// on the Electron path (once: the main process answers through runCall and the renderer does not
// parse again), so a malformed or off-schema reply is refused here with a stable code.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { InspectorEvent, InspectorTransport } from '../../protocol/inspector-api.ts';
import { IPC_CHANNELS } from '../../protocol/ipc-channels.ts';
import { snapshot } from '../serve/serve-fixture.ts';

const bridge = vi.hoisted(() => ({
  exposed: [] as Array<[string, Record<string, unknown>]>,
  invoked: [] as Array<[string, unknown]>,
  reply: null as unknown,
  eventListener: null as ((event: unknown, raw: unknown) => void) | null,
}));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (name: string, api: Record<string, unknown>) => bridge.exposed.push([name, api]) },
  ipcRenderer: {
    invoke: (channel: string, payload: unknown) => {
      bridge.invoked.push([channel, payload]);
      return Promise.resolve(bridge.reply);
    },
    on: (channel: string, listener: (event: unknown, raw: unknown) => void) => {
      if (channel === 'inspector:event') bridge.eventListener = listener;
    },
  },
}));

await import('../../preload/index.ts');
const api = bridge.exposed[0]?.[1] as unknown as InspectorTransport;

beforeEach(() => {
  bridge.invoked.length = 0;
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});

describe('the preload bridge', () => {
  it('exposes exactly one object, traceInspector, holding call and subscribe only', () => {
    expect(bridge.exposed).toHaveLength(1);
    expect(bridge.exposed[0]?.[0]).toBe('traceInspector');
    expect(Object.keys(bridge.exposed[0]?.[1] ?? {}).sort()).toEqual(['call', 'subscribe']);
  });

  it('sends { method, request } on the call channel and returns the validated response', async () => {
    bridge.reply = { ok: true, response: snapshot(false) };
    await expect(api.call('getSession', {})).resolves.toEqual(snapshot(false));
    expect(bridge.invoked).toEqual([[IPC_CHANNELS.call, { method: 'getSession', request: {} }]]);
  });

  it('refuses a response that breaks its method schema (invalid_response) and a malformed reply (bad_reply)', async () => {
    bridge.reply = { ok: true, response: { ...snapshot(false), rowsVersion: -1 } };
    await expect(api.call('getSession', {})).rejects.toMatchObject({ name: 'InspectorCallError', code: 'invalid_response' });
    bridge.reply = { status: 'fine' };
    await expect(api.call('getSession', {})).rejects.toMatchObject({ name: 'InspectorCallError', code: 'bad_reply' });
  });

  it('passes a failure on with its code, and refuses an unknown method before anything is sent', async () => {
    bridge.reply = { ok: false, error: { code: 'E_BUSY', message: 'a run is in progress' } };
    await expect(api.call('getSession', {})).rejects.toEqual({ name: 'InspectorCallError', code: 'E_BUSY', message: 'a run is in progress' });
    bridge.invoked.length = 0;
    await expect(api.call('dropTables' as 'getSession', {})).rejects.toMatchObject({ code: 'unknown_method' });
    expect(bridge.invoked).toEqual([]);
  });

  it('hands subscribers only the events that match the API', () => {
    const seen: InspectorEvent[] = [];
    const unsubscribe = api.subscribe((event) => seen.push(event));
    const progress = { type: 'progress', pass: 2, kind: 'decode', records: 9, lastBoundary: 'x' };
    bridge.eventListener?.({}, progress);
    bridge.eventListener?.({}, { type: 'progress', pass: -2 });
    bridge.eventListener?.({}, { type: 'takeover' });
    expect(seen).toEqual([progress]);
    unsubscribe();
    bridge.eventListener?.({}, progress);
    expect(seen).toHaveLength(1);
  });
});

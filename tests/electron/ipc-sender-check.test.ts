// The IPC bridge on the real main/electron/ipc-bridge.ts with `electron` replaced by a recording
// ipcMain: a call is answered only from the main frame of our own window showing our renderer
// file; anything else is refused before dispatch, and a malformed payload never reaches it.
import { pathToFileURL } from 'node:url';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { InspectorEvent } from '../../protocol/inspector-api.ts';
import { IPC_CHANNELS, type IpcOutcome } from '../../protocol/ipc-channels.ts';

type CallHandler = (event: unknown, payload: unknown) => Promise<IpcOutcome>;

const ipc = vi.hoisted(() => ({ handlers: new Map<string, (event: unknown, payload: unknown) => Promise<unknown>>() }));

vi.mock('electron', () => ({
  ipcMain: {
    handle: (channel: string, handler: (event: unknown, payload: unknown) => Promise<unknown>) => {
      if (ipc.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      ipc.handlers.set(channel, handler);
    },
    removeHandler: (channel: string) => ipc.handlers.delete(channel),
  },
  // main-window.ts is imported for RENDERER_INDEX; its BrowserWindow is never constructed here.
  BrowserWindow: class {},
}));

const { connectWindow } = await import('../../main/electron/ipc-bridge.ts');
const { RENDERER_INDEX } = await import('../../main/electron/main-window.ts');

const OUR_URL = pathToFileURL(RENDERER_INDEX).href;

function fakeWindow() {
  const mainFrame = { processId: 7, routingId: 1, url: OUR_URL };
  const sent: Array<[string, unknown]> = [];
  const webContents = { mainFrame, send: (channel: string, data: unknown) => sent.push([channel, data]) };
  let destroyed = false;
  return {
    window: { webContents, isDestroyed: () => destroyed },
    mainFrame,
    sent,
    destroy: () => {
      destroyed = true;
    },
  };
}

let win: ReturnType<typeof fakeWindow>;
let dispatch: ReturnType<typeof vi.fn<(method: string, request: unknown) => Promise<IpcOutcome>>>;
let listeners: Array<(event: InspectorEvent) => void>;
let disconnect: () => void;

const handler = (): CallHandler => ipc.handlers.get(IPC_CHANNELS.call) as CallHandler;
const fromFrame = (frame: Record<string, unknown> | null, sender: unknown = win.window.webContents) => ({ sender, senderFrame: frame });
const CALL = { method: 'getSession', request: {} };

beforeEach(() => {
  ipc.handlers.clear();
  win = fakeWindow();
  dispatch = vi.fn(async () => ({ ok: true as const, response: 'answered' }));
  listeners = [];
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
  disconnect = connectWindow(win.window as never, dispatch, (listener) => {
    listeners.push(listener);
    return () => {
      listeners = listeners.filter((other) => other !== listener);
    };
  });
});

describe('connectWindow: who may call', () => {
  it('answers the main frame of our window showing our renderer file (query and hash ignored)', async () => {
    await expect(handler()(fromFrame(win.mainFrame), CALL)).resolves.toEqual({ ok: true, response: 'answered' });
    await expect(handler()(fromFrame({ ...win.mainFrame, url: `${OUR_URL}?x=1#top` }), CALL)).resolves.toEqual({ ok: true, response: 'answered' });
    expect(dispatch).toHaveBeenCalledWith('getSession', {});
  });

  const refused: Array<[string, () => unknown]> = [
    ['another web contents', () => fromFrame(win.mainFrame, { other: true })],
    ['a subframe of our window', () => fromFrame({ ...win.mainFrame, routingId: 2 })],
    ['a frame of another process', () => fromFrame({ ...win.mainFrame, processId: 8 })],
    ['no frame', () => fromFrame(null)],
    ['a remote page', () => fromFrame({ ...win.mainFrame, url: 'https://example.com/index.html' })],
    ['another local file', () => fromFrame({ ...win.mainFrame, url: pathToFileURL('/tmp/evil/index.html').href })],
    ['an unparsable URL', () => fromFrame({ ...win.mainFrame, url: 'not a url' })],
  ];
  for (const [who, event] of refused) {
    it(`refuses ${who} before dispatch`, async () => {
      await expect(handler()(event(), CALL)).resolves.toMatchObject({ ok: false, error: { code: 'forbidden' } });
      expect(dispatch).not.toHaveBeenCalled();
    });
  }

  it('refuses every call once the window is destroyed', async () => {
    win.destroy();
    await expect(handler()(fromFrame(win.mainFrame), CALL)).resolves.toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(dispatch).not.toHaveBeenCalled();
  });

  it('parses the payload before dispatch: an unknown method or extra field is a bad frame', async () => {
    for (const payload of [null, { method: 'deleteEverything', request: {} }, { ...CALL, extra: 1 }]) {
      const outcome = await handler()(fromFrame(win.mainFrame), payload);
      expect(outcome).toMatchObject({ ok: false, error: { code: 'bad_frame' } });
    }
    expect(dispatch).not.toHaveBeenCalled();
  });
});

describe('connectWindow: events and unwiring', () => {
  it('pushes session events to the window on the event channel, not after it is destroyed', () => {
    const event: InspectorEvent = { type: 'progress', pass: 1, kind: 'decode', records: 4, lastBoundary: null };
    for (const listener of listeners) listener(event);
    expect(win.sent).toEqual([[IPC_CHANNELS.event, event]]);
    win.destroy();
    for (const listener of listeners) listener(event);
    expect(win.sent).toHaveLength(1);
  });

  it('removes its handler and its subscription when unwired', () => {
    disconnect();
    expect(ipc.handlers.has(IPC_CHANNELS.call)).toBe(false);
    expect(listeners).toHaveLength(0);
  });
});

// IPC between the window's renderer and the core: one invoke channel for calls, one channel
// that pushes session events. A call is answered only when it comes from our own window's
// main frame showing our own renderer file; its payload is parsed with zod before dispatch.
import { fileURLToPath } from 'node:url';
import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import type { InspectorEvent } from '../../protocol/inspector-api.ts';
import { IPC_CHANNELS, IpcCallSchema, type IpcOutcome } from '../../protocol/ipc-channels.ts';
import { RENDERER_INDEX } from './main-window.ts';

export type Dispatch = (method: string, request: unknown) => Promise<IpcOutcome>;

/** True only for the main frame of `window`, showing out/renderer/index.html from disk. */
function isOurRenderer(event: IpcMainInvokeEvent, window: BrowserWindow): boolean {
  if (window.isDestroyed() || event.sender !== window.webContents) return false;
  const frame = event.senderFrame;
  const main = window.webContents.mainFrame;
  if (frame === null || frame.processId !== main.processId || frame.routingId !== main.routingId) return false;
  let url: URL;
  try {
    url = new URL(frame.url);
  } catch {
    return false;
  }
  if (url.protocol !== 'file:') return false;
  url.search = '';
  url.hash = '';
  return fileURLToPath(url) === RENDERER_INDEX;
}

/** Wires the window to the core; returns the function that unwires it. */
export function connectWindow(window: BrowserWindow, dispatch: Dispatch, subscribe: (listener: (event: InspectorEvent) => void) => () => void): () => void {
  ipcMain.handle(IPC_CHANNELS.call, async (event, payload: unknown): Promise<IpcOutcome> => {
    if (!isOurRenderer(event, window)) {
      console.error(`trace-inspector: refused an IPC call from ${event.senderFrame?.url ?? 'an unknown frame'}`);
      return { ok: false, error: { code: 'forbidden', message: 'this frame may not call the inspector' } };
    }
    const call = IpcCallSchema.safeParse(payload);
    if (!call.success) {
      const detail = call.error.issues.map((issue) => `${issue.path.join('.') || 'call'}: ${issue.message}`).join('; ');
      return { ok: false, error: { code: 'bad_frame', message: `bad IPC call: ${detail}` } };
    }
    return dispatch(call.data.method, call.data.request);
  });
  const unsubscribe = subscribe((inspectorEvent) => {
    if (!window.isDestroyed()) window.webContents.send(IPC_CHANNELS.event, inspectorEvent);
  });
  return () => {
    unsubscribe();
    ipcMain.removeHandler(IPC_CHANNELS.call);
  };
}

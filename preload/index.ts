// Preload: exposes the typed inspector API to the sandboxed renderer and validates every
// reply from the main process before the renderer sees it.
import { contextBridge, ipcRenderer } from 'electron';
import { IPC_CHANNELS } from '../main/electron/ipc-channels.ts';
import { CaptureSummaryMessageSchema, type InspectorApi } from './inspector-api.ts';

const api: InspectorApi = {
  async captureDefault() {
    return CaptureSummaryMessageSchema.parse(await ipcRenderer.invoke(IPC_CHANNELS.captureDefault));
  },
};

contextBridge.exposeInMainWorld('traceInspector', api);

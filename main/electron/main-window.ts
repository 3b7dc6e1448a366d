// The app's one window: our renderer from out/renderer, loaded from disk, under the sandbox
// with context isolation and no Node integration. The preload is the only bridge.
import { join } from 'node:path';
import { BrowserWindow } from 'electron';

/** Built layout: out/main/index.js beside out/preload/index.cjs and out/renderer/index.html. */
export const RENDERER_INDEX = join(import.meta.dirname, '..', 'renderer', 'index.html');
const PRELOAD = join(import.meta.dirname, '..', 'preload', 'index.cjs');

export function createMainWindow(): BrowserWindow {
  const window = new BrowserWindow({
    width: 1440,
    height: 920,
    minWidth: 960,
    minHeight: 600,
    title: 'trace-inspector',
    show: false,
    webPreferences: {
      preload: PRELOAD,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
    },
  });
  window.once('ready-to-show', () => window.show());
  void window.loadFile(RENDERER_INDEX);
  return window;
}

// The application menu: File › Open Engine…, Open Bundle…, Open Run…, Open Recent, Contracts File…,
// Map File…, Export Receipt…, Quit.
// Every item goes through the same dispatch as the renderer's calls; failures are shown in a
// native dialog (the renderer also lists them under the session's errors).
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { app, dialog, Menu, type BrowserWindow, type MenuItemConstructorOptions, type OpenDialogOptions, type SaveDialogOptions } from 'electron';
import { INSPECTOR_METHODS, type SessionSnapshot } from '../../protocol/inspector-api.ts';
import type { Dispatch } from './ipc-bridge.ts';

export type RecentItems = SessionSnapshot['recent'];

export interface MenuContext {
  window: () => BrowserWindow | null;
  dispatch: Dispatch;
}

/** Menu accelerators; the renderer's own shortcuts must not reuse them (docs/app.md). */
export const MENU_ACCELERATORS = {
  openEngine: 'CmdOrCtrl+O',
  openBundle: 'CmdOrCtrl+Shift+O',
  exportReceipt: 'CmdOrCtrl+Shift+E',
} as const;

async function showError(context: MenuContext, action: string, message: string): Promise<void> {
  const window = context.window();
  const options = { type: 'error' as const, message: `Could not ${action}`, detail: message };
  await (window ? dialog.showMessageBox(window, options) : dialog.showMessageBox(options));
}

type MenuMethod = 'openEngine' | 'openBundle' | 'openRun' | 'setContractsFile' | 'setMapFile';

async function run(context: MenuContext, action: string, method: MenuMethod, request: object): Promise<void> {
  const outcome = await context.dispatch(method, request);
  if (!outcome.ok) await showError(context, action, outcome.error.message);
}

async function openEngine(context: MenuContext): Promise<void> {
  const window = context.window();
  const options: OpenDialogOptions = {
    title: 'Open Engine',
    properties: ['openFile'],
    filters: [
      { name: 'Engine library', extensions: ['so', 'dylib', 'dll'] },
      { name: 'All files', extensions: ['*'] },
    ],
  };
  const picked = await (window ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options));
  const library = picked.filePaths[0];
  // Loading a library runs its code: only the file the user picked here is ever loaded.
  if (!picked.canceled && library !== undefined) await run(context, 'open the engine', 'openEngine', { library });
}

async function openBundle(context: MenuContext): Promise<void> {
  const window = context.window();
  const options: OpenDialogOptions = { title: 'Open Bundle', properties: ['openDirectory'] };
  const picked = await (window ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options));
  const dir = picked.filePaths[0];
  if (!picked.canceled && dir !== undefined) await run(context, 'open the bundle', 'openBundle', { dir });
}

async function openRun(context: MenuContext): Promise<void> {
  const window = context.window();
  const options: OpenDialogOptions = { title: 'Open Run (a captured bundle to compare with the open bundle)', properties: ['openDirectory'] };
  const picked = await (window ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options));
  const dir = picked.filePaths[0];
  if (!picked.canceled && dir !== undefined) await run(context, 'open the run', 'openRun', { dir });
}

/** Contracts File… / Map File…: the file the session judges two bundles with (compare's --contracts / --map). */
async function pickComparisonFile(context: MenuContext, what: 'contracts' | 'map'): Promise<void> {
  const window = context.window();
  const options: OpenDialogOptions = {
    title: what === 'contracts' ? 'Contracts File' : 'Map File',
    properties: ['openFile'],
    filters: [
      { name: what === 'contracts' ? 'Contracts file' : 'Map file', extensions: ['json'] },
      { name: 'All files', extensions: ['*'] },
    ],
  };
  const picked = await (window ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options));
  const file = picked.filePaths[0];
  if (picked.canceled || file === undefined) return;
  if (what === 'contracts') await run(context, 'set the contracts file', 'setContractsFile', { file });
  else await run(context, 'set the map file', 'setMapFile', { file });
}

async function exportReceipt(context: MenuContext): Promise<void> {
  const window = context.window();
  const options: SaveDialogOptions = {
    title: 'Export Receipt',
    defaultPath: join(app.getPath('documents'), 'trace-inspector-receipt.dsse.json'),
    filters: [{ name: 'DSSE envelope', extensions: ['json'] }],
  };
  const target = await (window ? dialog.showSaveDialog(window, options) : dialog.showSaveDialog(options));
  if (target.canceled || !target.filePath) return;
  const outcome = await context.dispatch('exportReceipt', { keyPath: null });
  if (!outcome.ok) return showError(context, 'export the receipt', outcome.error.message);
  const receipt = INSPECTOR_METHODS.exportReceipt.response.parse(outcome.response);
  try {
    await writeFile(target.filePath, receipt.envelope);
  } catch (error) {
    return showError(context, 'export the receipt', `${target.filePath}: ${(error as Error).message}`);
  }
  const info = {
    type: 'info' as const,
    message: `Receipt written to ${basename(target.filePath)}`,
    detail: `${receipt.seals.join('\n')}\n\nSigned by key ${receipt.keyId}; the session's copy is ${receipt.path}.`,
  };
  await (window ? dialog.showMessageBox(window, info) : dialog.showMessageBox(info));
}

function recentSubmenu(context: MenuContext, recent: RecentItems): MenuItemConstructorOptions[] {
  const items: MenuItemConstructorOptions[] = [];
  const section = (label: string, paths: readonly string[], method: 'openEngine' | 'openBundle'): void => {
    items.push({ label, enabled: false });
    if (paths.length === 0) items.push({ label: 'None yet', enabled: false });
    for (const path of paths) {
      const request = method === 'openEngine' ? { library: path } : { dir: path };
      items.push({ label: path, click: () => void run(context, `open ${path}`, method, request) });
    }
  };
  section('Engines', recent.engines, 'openEngine');
  items.push({ type: 'separator' });
  section('Bundles', recent.bundles, 'openBundle');
  return items;
}

/** Builds and installs the menu; call again when the recent items change. */
export function installAppMenu(context: MenuContext, recent: RecentItems): void {
  const file: MenuItemConstructorOptions = {
    label: 'File',
    submenu: [
      { label: 'Open Engine…', accelerator: MENU_ACCELERATORS.openEngine, click: () => void openEngine(context) },
      { label: 'Open Bundle…', accelerator: MENU_ACCELERATORS.openBundle, click: () => void openBundle(context) },
      { label: 'Open Run…', click: () => void openRun(context) },
      { label: 'Open Recent', submenu: recentSubmenu(context, recent) },
      { type: 'separator' },
      { label: 'Contracts File…', click: () => void pickComparisonFile(context, 'contracts') },
      { label: 'Map File…', click: () => void pickComparisonFile(context, 'map') },
      { type: 'separator' },
      { label: 'Export Receipt…', accelerator: MENU_ACCELERATORS.exportReceipt, click: () => void exportReceipt(context) },
      { type: 'separator' },
      { role: 'quit' },
    ],
  };
  const template: MenuItemConstructorOptions[] = [
    ...(process.platform === 'darwin' ? [{ role: 'appMenu' as const }] : []),
    file,
    { role: 'editMenu' },
    { role: 'viewMenu' },
    { role: 'windowMenu' },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

// The Electron main process: the only code that imports electron. It stays thin — a window,
// IPC wiring and the headless dispatch — and calls the same core as the terminal CLI.
import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, type IpcMainInvokeEvent } from 'electron';
import { runCli } from '../cli/run-cli.ts';
import { processIO } from '../cli/cli-io.ts';
import { HEADLESS_COMMANDS, IPC_CHANNELS } from './ipc-channels.ts';
import { captureDefaultCase } from './capture-default.ts';

/** Arguments after the app path: `electron . capture ...` runs the CLI with no window. */
function headlessArgs(argv: readonly string[]): string[] | null {
  const args = argv.slice(app.isPackaged ? 1 : 2);
  return args.length > 0 && HEADLESS_COMMANDS.has(args[0] as string) ? args : null;
}

/** Only our own renderer, loaded from disk, may call the core. */
function assertTrustedSender(event: IpcMainInvokeEvent): void {
  const url = event.senderFrame?.url ?? '';
  if (!url.startsWith('file://')) throw new Error(`refused IPC from ${url || 'an unknown frame'}`);
}

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1280,
    height: 860,
    title: 'trace-inspector',
    webPreferences: {
      preload: join(import.meta.dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  // No remote content: navigation and new windows are refused.
  window.webContents.on('will-navigate', (event) => event.preventDefault());
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  void window.loadFile(join(import.meta.dirname, '../renderer/index.html'));
}

const cliArgs = headlessArgs(process.argv);
if (cliArgs) {
  void app.whenReady().then(async () => {
    const code = await runCli(cliArgs, processIO());
    app.exit(code);
  });
} else {
  ipcMain.handle(IPC_CHANNELS.captureDefault, async (event) => {
    assertTrustedSender(event);
    return captureDefaultCase();
  });
  void app.whenReady().then(createWindow);
  app.on('window-all-closed', () => app.quit());
}

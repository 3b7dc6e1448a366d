// The Electron main process: the only code that imports electron. It stays thin — the window,
// the menu, IPC wiring and the headless dispatch — and drives the same InspectorSession and
// request checks (runCall) as serve mode. The engine still runs in a forked engine-host process
// (main/engine-host: child_process.fork, which Electron runs as Node), so an engine crash costs the
// run, never the app.
import { join } from 'node:path';
import { app, type BrowserWindow } from 'electron';
import { processIO } from '../cli/cli-io.ts';
import { HEADLESS_COMMANDS, runCli } from '../cli/run-cli.ts';
import { InspectorSession, runCall } from '../session/inspector-session.ts';
import { INSPECTOR_METHODS, type InspectorEvent } from '../../protocol/inspector-api.ts';
import { installAppMenu, type RecentItems } from './app-menu.ts';
import { connectWindow, type Dispatch } from './ipc-bridge.ts';
import { createMainWindow } from './main-window.ts';
import { applyAppSecurity } from './window-security.ts';

/** Arguments after the app path: `electron . capture ...` runs the CLI with no window. */
function headlessArgs(argv: readonly string[]): string[] | null {
  const args = argv.slice(app.isPackaged ? 1 : 2);
  return args.length > 0 && HEADLESS_COMMANDS.has(args[0] as string) ? args : null;
}

function startWindowed(): void {
  applyAppSecurity();
  let window: BrowserWindow | null = null;
  let disconnect: (() => void) | null = null;
  let session: InspectorSession | null = null;

  void app.whenReady().then(async () => {
    const userData = app.getPath('userData');
    const live = InspectorSession.create({ workDir: join(userData, 'runs'), recentFile: join(userData, 'recent.json') });
    session = live;
    // Each reply is validated once, where it enters the renderer (the preload parses it with the
    // API's schemas); the menu parses what it uses itself.
    const dispatch: Dispatch = (method, request) => runCall(live.handlers, method, request);
    const context = { window: () => window, dispatch };

    // The Open Recent menu follows the session's recent items.
    let recentKey = '';
    const showRecent = (recent: RecentItems): void => {
      const key = JSON.stringify(recent);
      if (key === recentKey) return;
      recentKey = key;
      installAppMenu(context, recent);
    };
    live.subscribe((event: InspectorEvent) => {
      if (event.type === 'snapshot') showRecent(event.snapshot.recent);
    });
    showRecent({ engines: [], bundles: [] });

    window = createMainWindow();
    disconnect = connectWindow(window, dispatch, (listener) => live.subscribe(listener));
    window.on('closed', () => {
      disconnect?.();
      disconnect = null;
      window = null;
    });

    // `npm start` opens on the embedded default: the reference engine and its default case.
    const opened = await dispatch('openDefault', {});
    if (opened.ok) showRecent(INSPECTOR_METHODS.openDefault.response.parse(opened.response).recent);
    else console.error(`trace-inspector: could not open the embedded default: ${opened.error.message}`);
  });

  app.on('window-all-closed', () => app.quit());
  // The engine-host process and open bundles are released before the app exits.
  let closed = false;
  app.on('will-quit', (event) => {
    if (closed || session === null) return;
    event.preventDefault();
    const closing = session;
    session = null;
    void closing.close().finally(() => {
      closed = true;
      app.quit();
    });
  });
}

const cliArgs = headlessArgs(process.argv);
if (cliArgs) {
  void app.whenReady().then(async () => {
    const code = await runCli(cliArgs, processIO());
    app.exit(code);
  });
} else {
  startWindowed();
}

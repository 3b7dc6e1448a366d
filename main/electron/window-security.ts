// The Electron security checklist, applied once for the whole app: every renderer sandboxed,
// no permission granted, no navigation, no new windows, no <webview>, and no request to the
// network — the app's content is its own files and nothing else.
import { app, session, type WebContents } from 'electron';

/** URL schemes the app never loads: the renderer is file:// and talks to main over IPC only. */
const REMOTE_URLS = ['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*', 'ftp://*/*'];

function hardenContents(contents: WebContents): void {
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}

/** Must run before app 'ready' (enableSandbox) and covers every web contents created later. */
export function applyAppSecurity(): void {
  app.enableSandbox();
  app.on('web-contents-created', (_event, contents) => hardenContents(contents));
  void app.whenReady().then(() => {
    const ses = session.defaultSession;
    // The app plays PCM from memory (an <audio> element needs no permission) and never
    // captures: camera, microphone, notifications, geolocation... are all refused.
    ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    ses.setPermissionCheckHandler(() => false);
    ses.setDevicePermissionHandler(() => false);
    // No remote content, even if a bug or a compromised renderer asks for it.
    ses.webRequest.onBeforeRequest({ urls: REMOTE_URLS }, (_details, callback) => callback({ cancel: true }));
  });
}

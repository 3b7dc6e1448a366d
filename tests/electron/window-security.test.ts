// The Electron host's security settings, on the real main/electron code with `electron` replaced
// by recording stand-ins (Electron's binary cannot run here): the window's webPreferences, and
// the app-wide hardening — sandbox, no navigation, no new windows, no <webview>, no permission,
// no remote request.
import { beforeEach, describe, expect, it, vi } from 'vitest';

type Handler = (...args: never[]) => unknown;

const electron = vi.hoisted(() => {
  const windows: Array<{ options: Record<string, unknown>; loaded: string[]; once: Map<string, () => void> }> = [];
  const appHandlers = new Map<string, (...args: unknown[]) => void>();
  const session = {
    permissionRequest: null as Handler | null,
    permissionCheck: null as Handler | null,
    devicePermission: null as Handler | null,
    beforeRequest: null as { filter: { urls: string[] }; listener: Handler } | null,
  };
  let ready: () => void = () => undefined;
  const whenReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  return { windows, appHandlers, session, ready: () => ready(), whenReady, enableSandbox: { calls: 0 } };
});

vi.mock('electron', () => {
  class BrowserWindow {
    readonly record: { options: Record<string, unknown>; loaded: string[]; once: Map<string, () => void> };
    constructor(options: Record<string, unknown>) {
      this.record = { options, loaded: [], once: new Map() };
      electron.windows.push(this.record);
    }
    once(event: string, listener: () => void): void {
      this.record.once.set(event, listener);
    }
    loadFile(file: string): Promise<void> {
      this.record.loaded.push(file);
      return Promise.resolve();
    }
    show(): void {}
  }
  const app = {
    enableSandbox: () => {
      electron.enableSandbox.calls += 1;
    },
    on: (event: string, listener: (...args: unknown[]) => void) => electron.appHandlers.set(event, listener),
    whenReady: () => electron.whenReady,
  };
  const defaultSession = {
    setPermissionRequestHandler: (handler: Handler) => {
      electron.session.permissionRequest = handler;
    },
    setPermissionCheckHandler: (handler: Handler) => {
      electron.session.permissionCheck = handler;
    },
    setDevicePermissionHandler: (handler: Handler) => {
      electron.session.devicePermission = handler;
    },
    webRequest: {
      onBeforeRequest: (filter: { urls: string[] }, listener: Handler) => {
        electron.session.beforeRequest = { filter, listener };
      },
    },
  };
  return { app, BrowserWindow, session: { defaultSession } };
});

const { createMainWindow, RENDERER_INDEX } = await import('../../main/electron/main-window.ts');
const { applyAppSecurity } = await import('../../main/electron/window-security.ts');

describe('the main window', () => {
  beforeEach(() => {
    electron.windows.length = 0;
  });

  it('is sandboxed and isolated, without Node integration anywhere, webviews or insecure content', () => {
    createMainWindow();
    const [window] = electron.windows;
    const preferences = window?.options.webPreferences as Record<string, unknown>;
    expect(preferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
    });
    expect(String(preferences.preload)).toMatch(/[\\/]preload[\\/]index\.cjs$/);
    expect(window?.options.show).toBe(false);
  });

  it('loads only its own renderer file from disk', () => {
    createMainWindow();
    expect(electron.windows[0]?.loaded).toEqual([RENDERER_INDEX]);
    expect(RENDERER_INDEX).toMatch(/[\\/]renderer[\\/]index\.html$/);
  });
});

describe('applyAppSecurity', () => {
  applyAppSecurity();

  it('turns the sandbox on for every renderer before the app is ready', () => {
    expect(electron.enableSandbox.calls).toBe(1);
  });

  it('refuses navigation, redirects, webviews and new windows for every web contents created', () => {
    const created = electron.appHandlers.get('web-contents-created');
    expect(created).toBeDefined();
    const events = new Map<string, (event: { preventDefault: () => void }) => void>();
    let openHandler: (() => unknown) | null = null;
    const contents = {
      on: (event: string, listener: (event: { preventDefault: () => void }) => void) => events.set(event, listener),
      setWindowOpenHandler: (handler: () => unknown) => {
        openHandler = handler;
      },
    };
    created?.({}, contents);
    for (const name of ['will-navigate', 'will-redirect', 'will-attach-webview']) {
      const preventDefault = vi.fn();
      events.get(name)?.({ preventDefault });
      expect(preventDefault, name).toHaveBeenCalledOnce();
    }
    expect(openHandler).not.toBeNull();
    expect((openHandler as unknown as () => unknown)()).toEqual({ action: 'deny' });
  });

  it('denies every permission request, check and device, and cancels every remote request', async () => {
    electron.ready();
    await electron.whenReady;
    await Promise.resolve();
    const { permissionRequest, permissionCheck, devicePermission, beforeRequest } = electron.session;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read']) {
      const callback = vi.fn();
      (permissionRequest as (contents: unknown, permission: string, callback: (granted: boolean) => void) => void)({}, permission, callback);
      expect(callback).toHaveBeenCalledWith(false);
      expect((permissionCheck as (contents: unknown, permission: string) => boolean)({}, permission)).toBe(false);
    }
    expect((devicePermission as () => boolean)()).toBe(false);
    expect(beforeRequest?.filter.urls).toEqual(expect.arrayContaining(['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*']));
    const callback = vi.fn();
    (beforeRequest?.listener as (details: unknown, callback: (response: unknown) => void) => void)({ url: 'https://example.com/' }, callback);
    expect(callback).toHaveBeenCalledWith({ cancel: true });
  });
});

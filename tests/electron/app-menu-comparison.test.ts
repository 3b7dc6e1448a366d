// The File menu's comparison items on the real main/electron/app-menu.ts with `electron` replaced
// by a recording Menu and a scripted dialog: Open Run…, Contracts File… and Map File… each show a
// file dialog and hand the picked path to the session through the same dispatch as the renderer's
// calls (openRun, setContractsFile, setMapFile); a cancelled dialog dispatches nothing; a refusal
// is shown in an error dialog with the session's message.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { IpcOutcome } from '../../protocol/ipc-channels.ts';

interface MenuItem {
  label?: string;
  click?: () => void;
  submenu?: MenuItem[];
}

const electron = vi.hoisted(() => ({
  template: [] as MenuItem[],
  picks: [] as { canceled: boolean; filePaths: string[] }[],
  dialogOptions: [] as { title?: string; properties?: string[] }[],
  messages: [] as { message?: string; detail?: string }[],
}));

vi.mock('electron', () => ({
  app: { getPath: () => '/tmp' },
  Menu: {
    buildFromTemplate: (template: MenuItem[]) => {
      electron.template = template;
      return template;
    },
    setApplicationMenu: () => undefined,
  },
  dialog: {
    showOpenDialog: async (options: { title?: string; properties?: string[] }) => {
      electron.dialogOptions.push(options);
      return electron.picks.shift() ?? { canceled: true, filePaths: [] };
    },
    showMessageBox: async (options: { message?: string; detail?: string }) => {
      electron.messages.push(options);
      return { response: 0 };
    },
    showSaveDialog: async () => ({ canceled: true }),
  },
}));

const { installAppMenu } = await import('../../main/electron/app-menu.ts');

let dispatch: ReturnType<typeof vi.fn<(method: string, request: unknown) => Promise<IpcOutcome>>>;

function item(label: string): MenuItem {
  const file = electron.template.find((entry) => entry.label === 'File');
  const found = file?.submenu?.find((entry) => entry.label === label);
  if (found?.click === undefined) throw new Error(`no File › ${label} item`);
  return found;
}

async function click(label: string): Promise<void> {
  item(label).click?.();
  // The click handlers are async (dialog, then dispatch): let them finish.
  await vi.waitFor(() => expect(electron.dialogOptions.length).toBeGreaterThan(0));
  await new Promise((resolve) => setTimeout(resolve, 0));
}

beforeEach(() => {
  electron.picks = [];
  electron.dialogOptions = [];
  electron.messages = [];
  dispatch = vi.fn(async () => ({ ok: true as const, response: {} }));
  installAppMenu({ window: () => null, dispatch }, { engines: [], bundles: [] });
});

describe('File menu: the comparison items pick with a dialog and dispatch to the session', () => {
  it('Contracts File… sets the picked file; Map File… likewise; Open Run… opens the picked folder', async () => {
    electron.picks.push({ canceled: false, filePaths: ['/data/port.contracts.json'] });
    await click('Contracts File…');
    expect(electron.dialogOptions[0]?.properties).toEqual(['openFile']);
    expect(dispatch).toHaveBeenCalledWith('setContractsFile', { file: '/data/port.contracts.json' });

    electron.dialogOptions = [];
    electron.picks.push({ canceled: false, filePaths: ['/data/port.map.json'] });
    await click('Map File…');
    expect(dispatch).toHaveBeenCalledWith('setMapFile', { file: '/data/port.map.json' });

    electron.dialogOptions = [];
    electron.picks.push({ canceled: false, filePaths: ['/data/candidate'] });
    await click('Open Run…');
    expect(electron.dialogOptions[0]?.properties).toEqual(['openDirectory']);
    expect(dispatch).toHaveBeenCalledWith('openRun', { dir: '/data/candidate' });
  });

  it('a cancelled dialog dispatches nothing; a refused file is shown with the session message', async () => {
    await click('Map File…');
    expect(dispatch).not.toHaveBeenCalled();

    electron.dialogOptions = [];
    dispatch.mockResolvedValueOnce({ ok: false, error: { code: 'E_BUNDLE', message: '/data/bad.map.json: map[0].permute: [0, 0] is not a permutation' } });
    electron.picks.push({ canceled: false, filePaths: ['/data/bad.map.json'] });
    await click('Map File…');
    await vi.waitFor(() => expect(electron.messages).toHaveLength(1));
    expect(electron.messages[0]).toMatchObject({
      message: 'Could not set the map file',
      detail: '/data/bad.map.json: map[0].permute: [0, 0] is not a permutation',
    });
  });
});

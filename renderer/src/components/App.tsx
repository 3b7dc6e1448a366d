// The window: session bar, errors, run timeline; the boundary table beside the detail panel and
// the bit inspector; a status line. Global shortcuts are bound here to module-level actions.
import { useCommand } from '../keyboard/command-registry.ts';
import { useGlobalShortcuts } from '../keyboard/use-global-shortcuts.ts';
import { jumpToFirstDivergence } from '../store/actions/selection-actions.ts';
import { prefill, resetSession, runToEnd, runToFirstDivergence, step } from '../store/actions/session-actions.ts';
import { setActivePanel, toggleShortcuts } from '../store/actions/ui-actions.ts';
import { getState } from '../store/inspector-store.ts';
import { PANELS } from '../store/slices/ui-slice.ts';
import { BitInspector } from './bits/BitInspector.tsx';
import { ErrorList } from './errors/ErrorList.tsx';
import { ShortcutsOverlay } from './help/ShortcutsOverlay.tsx';
import { ActivePanel } from './panels/ActivePanel.tsx';
import { PanelTabs } from './panels/PanelTabs.tsx';
import { SessionBar } from './session/SessionBar.tsx';
import { StatusBar } from './StatusBar.tsx';
import { BoundaryTable } from './table/BoundaryTable.tsx';
import { PassTimeline } from './timeline/PassTimeline.tsx';

function useAppCommands(): void {
  useCommand('prefill', () => void prefill());
  useCommand('step', () => void step());
  useCommand('runToEnd', () => void runToEnd());
  useCommand('runToDivergence', () => void runToFirstDivergence());
  useCommand('reset', () => void resetSession());
  useCommand('jumpFirstDivergence', () => void jumpToFirstDivergence());
  useCommand('toggleHelp', () => toggleShortcuts());
  useCommand('escape', () => {
    if (getState().shortcutsOpen) toggleShortcuts(false);
  });
  useCommand('panel1', () => setActivePanel(PANELS[0]));
  useCommand('panel2', () => setActivePanel(PANELS[1]));
  useCommand('panel3', () => setActivePanel(PANELS[2]));
  useCommand('panel4', () => setActivePanel(PANELS[3]));
  useCommand('panel5', () => setActivePanel(PANELS[4]));
  useCommand('panel6', () => setActivePanel(PANELS[5]));
}

export function App() {
  useGlobalShortcuts();
  useAppCommands();
  return (
    <div className="app">
      <SessionBar />
      <ErrorList />
      <PassTimeline />
      <main className="workspace">
        <section className="table-pane">
          <BoundaryTable />
        </section>
        <section className="detail-pane">
          <PanelTabs />
          <div className="panel-body">
            <ActivePanel />
          </div>
          <BitInspector />
        </section>
      </main>
      <StatusBar />
      <ShortcutsOverlay />
    </div>
  );
}

// Panels and overlays.
import { getState, setState } from '../inspector-store.ts';
import type { PanelName } from '../slices/ui-slice.ts';

export function setActivePanel(panel: PanelName): void {
  setState({ activePanel: panel });
}

export function toggleShortcuts(open?: boolean): void {
  setState({ shortcutsOpen: open ?? !getState().shortcutsOpen });
}

// Which panel is open, overlays, and failures of calls this renderer made (the core's own errors
// live in snapshot.errors).
export const PANELS = ['tensor', 'specials', 'isolation', 'audio', 'provenance', 'receipt'] as const;
export type PanelName = (typeof PANELS)[number];

export interface LocalError {
  id: number;
  at: string;
  action: string;
  message: string;
}

export interface UiSlice {
  activePanel: PanelName;
  shortcutsOpen: boolean;
  localErrors: LocalError[];
}

export const initialUiSlice: UiSlice = { activePanel: 'tensor', shortcutsOpen: false, localErrors: [] };

// Module-level selectors: components subscribe to exactly what they draw.
import type { BoundaryRow, SessionSnapshot } from '../../../protocol/inspector-api.ts';
import type { InspectorState } from './inspector-store.ts';

export const selectSnapshot = (state: InspectorState): SessionSnapshot | null => state.snapshot;
export const selectRows = (state: InspectorState): BoundaryRow[] => state.rows;
export const selectRowsVersion = (state: InspectorState): number => state.rowsVersion;
export const selectSelection = (state: InspectorState): InspectorState['selection'] => state.selection;
export const selectFlatIndex = (state: InspectorState): number | null => state.flatIndex;
export const selectFilters = (state: InspectorState): InspectorState['filters'] => state.filters;
export const selectSorting = (state: InspectorState): InspectorState['sorting'] => state.sorting;
export const selectActivePanel = (state: InspectorState): InspectorState['activePanel'] => state.activePanel;
export const selectShortcutsOpen = (state: InspectorState): boolean => state.shortcutsOpen;
export const selectLocalErrors = (state: InspectorState): InspectorState['localErrors'] => state.localErrors;
// A stable empty list: a selector must not return a fresh [] (useSyncExternalStore would loop).
const NO_ERRORS: SessionSnapshot['errors'] = [];
export const selectCoreErrors = (state: InspectorState): SessionSnapshot['errors'] => state.snapshot?.errors ?? NO_ERRORS;
export const selectProgress = (state: InspectorState): InspectorState['progress'] => state.progress;
export const selectConnection = (state: InspectorState): InspectorState['connection'] => state.connection;
export const selectAbx = (state: InspectorState): InspectorState['abx'] => state.abx;

/** Something is running: the core says so, or this renderer is awaiting a command. */
export const selectBusyLabel = (state: InspectorState): string | null => state.snapshot?.busy ?? state.pendingCommand;

/** The selected boundary's row (summaries only), or null. */
export const selectSelectedRow = (state: InspectorState): BoundaryRow | null => {
  const selection = state.selection;
  if (selection === null) return null;
  return state.rows.find((row) => row.pass === selection.pass && row.boundary === selection.boundary) ?? null;
};

/** For useShallow: the fields the session bar shows. */
export const selectSessionBarFields = (state: InspectorState) => ({
  engine: state.snapshot?.engine ?? null,
  bundle: state.snapshot?.bundle ?? null,
  openedRun: state.snapshot?.openedRun ?? null,
  openedRunKind: state.snapshot?.openedRunKind ?? null,
  oracle: state.snapshot?.oracle ?? 'reference',
  isolation: state.snapshot?.isolation ?? 'process',
  teacherForce: state.snapshot?.teacherForce ?? false,
  engineOptions: state.snapshot?.engineOptions ?? null,
  recent: state.snapshot?.recent ?? null,
});

/** The comparison settings in force (contracts file, default contract, map file) and what the map did. */
export const selectComparison = (state: InspectorState): SessionSnapshot['comparison'] | null => state.snapshot?.comparison ?? null;

/** For useShallow: the run state the timeline shows. */
export const selectTimelineFields = (state: InspectorState) => ({
  timeline: state.snapshot?.timeline ?? null,
  nextPass: state.snapshot?.nextPass ?? null,
  run: state.snapshot?.run ?? null,
  counts: state.snapshot?.counts ?? null,
  firstDivergence: state.snapshot?.firstDivergence ?? null,
  hasEngine: (state.snapshot?.engine ?? null) !== null || (state.snapshot?.openedRun ?? null) !== null,
  hasBundle: (state.snapshot?.bundle ?? null) !== null,
});

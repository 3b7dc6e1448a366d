// The detail panels, switched with 1..6.
import { setActivePanel } from '../../store/actions/ui-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectActivePanel } from '../../store/selectors.ts';
import { PANELS, type PanelName } from '../../store/slices/ui-slice.ts';

const PANEL_LABEL: Record<PanelName, string> = {
  tensor: 'Tensor',
  specials: 'Specials',
  isolation: 'Isolation',
  audio: 'Audio',
  provenance: 'Provenance',
  receipt: 'Receipt',
};

export function PanelTabs() {
  const active = useInspectorStore(selectActivePanel);
  return (
    <nav className="panel-tabs" role="tablist">
      {PANELS.map((panel, index) => (
        <button
          key={panel}
          type="button"
          role="tab"
          aria-selected={panel === active}
          className={panel === active ? 'active' : ''}
          onClick={() => setActivePanel(panel)}
          data-testid={`tab-${panel}`}
          title={`${PANEL_LABEL[panel]} (${index + 1})`}
        >
          <kbd>{index + 1}</kbd> {PANEL_LABEL[panel]}
        </button>
      ))}
    </nav>
  );
}

// "?" shows every shortcut, straight from the keymap the key handler uses.
import { KEYMAP, keyLabel } from '../../keyboard/keymap.ts';
import { toggleShortcuts } from '../../store/actions/ui-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectShortcutsOpen } from '../../store/selectors.ts';

const GROUPS = ['Run', 'Navigate', 'Panels', 'Help'] as const;

export function ShortcutsOverlay() {
  const open = useInspectorStore(selectShortcutsOpen);
  if (!open) return null;
  return (
    <div className="overlay" role="dialog" aria-label="Keyboard shortcuts" data-testid="shortcuts-overlay" onClick={() => toggleShortcuts(false)}>
      <div className="overlay-card" onClick={(event) => event.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <div className="shortcut-groups">
          {GROUPS.map((group) => (
            <table key={group} className="shortcut-table">
              <caption>{group}</caption>
              <tbody>
                {KEYMAP.filter((binding) => binding.group === group).map((binding) => (
                  <tr key={binding.command}>
                    <td>
                      {binding.keys.map((key) => (
                        <kbd key={key}>{keyLabel(key)}</kbd>
                      ))}
                    </td>
                    <td>{binding.label}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </div>
        <p className="muted">Keys typed into a text field stay in the field; Esc leaves it.</p>
      </div>
    </div>
  );
}

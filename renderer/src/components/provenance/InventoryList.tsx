// One inventory list (consumed / not consumed / rejected): what was and was not compared, and why.
interface InventoryListProps {
  title: string;
  tone: 'ok' | 'warn' | 'bad';
  entries: readonly { name: string; detail: string }[];
  testId: string;
}

const SHOWN_AT_ONCE = 500;

export function InventoryList({ title, tone, entries, testId }: InventoryListProps) {
  return (
    <details className={`inventory inventory-${tone}`} open={tone !== 'ok' && entries.length > 0} data-testid={testId}>
      <summary>
        {title} <span className="count">{entries.length}</span>
      </summary>
      <ul>
        {entries.slice(0, SHOWN_AT_ONCE).map((entry, index) => (
          <li key={`${entry.name}-${index}`}>
            <code>{entry.name}</code> <span className="muted">{entry.detail}</span>
          </li>
        ))}
        {entries.length > SHOWN_AT_ONCE ? <li className="muted">… and {entries.length - SHOWN_AT_ONCE} more</li> : null}
      </ul>
    </details>
  );
}

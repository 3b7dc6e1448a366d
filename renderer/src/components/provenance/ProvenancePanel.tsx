// Where every byte came from: the bundles (role, manifest digest, the generator's provenance,
// every file's digest) and the inventory — what was consumed, what was not, what was rejected.
import { formatCount, shortDigest } from '../../format/numbers.ts';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectRowsVersion } from '../../store/selectors.ts';
import { InventoryList } from './InventoryList.tsx';

// The role is the bundle's place in the session; the kind is what it is. They differ when two
// captures are compared (a native capture as the reference) or a reference is opened as the run.
const KIND_LABELS = { reference: 'a reference bundle', 'oracle-f64': 'an fp64 oracle bundle', native: 'a native capture' } as const;
const kindLabel = (kind: keyof typeof KIND_LABELS): string => KIND_LABELS[kind];

export function ProvenancePanel() {
  const version = useInspectorStore(selectRowsVersion);
  const { data: provenance, error, loading } = useApiQuery('getProvenance', {}, version);
  if (error !== null) return <div className="inline-error">{error}</div>;
  if (provenance === null) return <div className="muted panel-note">{loading ? 'loading…' : ''}</div>;
  const { inventory } = provenance;
  return (
    <div className="provenance-panel" data-testid="provenance-panel">
      <div className="inventory-lists">
        <InventoryList
          title="consumed"
          tone="ok"
          entries={inventory.consumed.map((entry) => ({ name: entry.name, detail: entry.what }))}
          testId="inventory-consumed"
        />
        <InventoryList
          title="not consumed"
          tone="warn"
          entries={inventory.notConsumed.map((entry) => ({ name: entry.name, detail: entry.why }))}
          testId="inventory-not-consumed"
        />
        <InventoryList
          title="rejected"
          tone="bad"
          entries={inventory.rejected.map((entry) => ({ name: entry.name, detail: entry.why }))}
          testId="inventory-rejected"
        />
      </div>
      {provenance.bundles.map((bundle) => (
        <section key={`${bundle.role}:${bundle.dir}`} className="provenance-bundle">
          <h3>
            <span className={`role role-${bundle.role}`}>{bundle.role}</span> <span className="muted">{kindLabel(bundle.kind)}</span> <code>{bundle.dir}</code>
          </h3>
          <div className="muted">
            manifest sha256 <code title={bundle.manifestSha256}>{shortDigest(bundle.manifestSha256, 16)}</code> · {bundle.files.length} files ·{' '}
            {formatCount(bundle.files.reduce((sum, file) => sum + file.bytes, 0))} bytes
          </div>
          <pre className="provenance-json">{bundle.provenanceJson}</pre>
          <details>
            <summary>files</summary>
            <table className="files-table">
              <tbody>
                {bundle.files.map((file) => (
                  <tr key={file.path}>
                    <td>
                      <code>{file.path}</code>
                    </td>
                    <td className="num">{formatCount(file.bytes)}</td>
                    <td>
                      <code title={file.sha256}>{shortDigest(file.sha256, 16)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </section>
      ))}
    </div>
  );
}

// How the rows are judged when two bundles are compared, as `trace-inspector compare` takes it
// from its flags: the contracts file (--contracts), the default contract (bit_exact for boundaries
// that declare none; every boundary bit_exact is --baseline), the map file (--map) and the oracle
// (--oracle: the case's fp64 oracle found beside a reference, or any bundle set here). Files are
// picked by path, like bundles (the core reads them on its own machine; the Electron menu also has
// File › Contracts File… and Map File… with a file dialog). What the map did is listed in full:
// every boundary it declared unmapped, with its reason, and every entry that matched nothing.
import { useShallow } from 'zustand/react/shallow';
import { shortDigest } from '../../format/numbers.ts';
import { setContractsFile, setEveryBoundaryBitExact, setMapFile, setOracleBundle } from '../../store/actions/session-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectBusyLabel, selectComparison, selectSessionBarFields } from '../../store/selectors.ts';
import { OpenByPath } from './OpenByPath.tsx';

export function ComparisonSettings() {
  const comparison = useInspectorStore(selectComparison);
  const { bundle, recent } = useInspectorStore(useShallow(selectSessionBarFields));
  const busy = useInspectorStore(selectBusyLabel) !== null;
  if (comparison === null) return null;
  const { contracts, contractsFile, defaultContract, mapFile, map } = comparison;
  const kept = map?.uncovered ?? [];
  return (
    <div className="session-row comparison-settings" data-testid="comparison-settings">
      <span className="summary-key">contracts</span>
      <span className="summary-line" data-testid="contracts-in-force" title={contracts?.description ?? 'no bundle open'}>
        {contractsFile !== null ? (
          <span title={`${contractsFile.path}\nsha256 ${contractsFile.sha256}`}>
            <b>{contractsFile.name}</b> <span className="muted">sha256</span> <code>{shortDigest(contractsFile.sha256)}</code> · {contractsFile.rules} rule(s)
          </span>
        ) : contracts === null ? (
          <span className="muted">no bundle open</span>
        ) : (
          <span>{contracts.description}</span>
        )}
      </span>
      {contractsFile !== null ? (
        <button
          type="button"
          disabled={busy}
          onClick={() => void setContractsFile(null)}
          data-testid="clear-contracts-file"
          title="Judge under the reference's own contracts and the default contract again"
        >
          clear
        </button>
      ) : null}
      <OpenByPath label="contracts" placeholder="contracts file (.json)" recent={[]} disabled={busy} testId="set-contracts-file" onOpen={setContractsFile} />
      <label title="Regression mode (compare --baseline): every boundary bit for bit, whatever the reference declares; a contracts file still wins where its rules match">
        <input
          type="checkbox"
          checked={defaultContract.everyBoundary}
          disabled={busy}
          onChange={(event) => void setEveryBoundaryBitExact(event.target.checked)}
          data-testid="toggle-every-boundary"
        />
        every boundary {defaultContract.contract}
      </label>
      <span className="summary-key">map</span>
      <span className="summary-line" data-testid="map-in-force">
        {mapFile === null ? (
          <span className="muted">none: boundaries are matched by name</span>
        ) : (
          <span title={`${mapFile.path}\nsha256 ${mapFile.sha256}`}>
            <b>{mapFile.name}</b> <span className="muted">sha256</span> <code>{shortDigest(mapFile.sha256)}</code>
            {map === null ? (
              <span className="muted"> · applies to a run opened with Open run</span>
            ) : (
              <>
                {' '}
                · {map.mapped.length} mapped · <span className={map.unmapped.length > 0 ? 'tag tag-warn' : ''}>{map.unmapped.length} unmapped on purpose</span>{' '}
                · <span title={`${kept.filter((row) => !row.inReference).length} of them unknown to the reference`}>{kept.length} kept by name</span>
              </>
            )}
          </span>
        )}
      </span>
      {mapFile !== null ? (
        <button
          type="button"
          disabled={busy}
          onClick={() => void setMapFile(null)}
          data-testid="clear-map-file"
          title="Match boundaries by their own names again"
        >
          clear
        </button>
      ) : null}
      <OpenByPath label="map" placeholder="map file (.json)" recent={[]} disabled={busy} testId="set-map-file" onOpen={setMapFile} />
      <span className="summary-key">oracle</span>
      <span className="summary-line" data-testid="oracle-in-force" title={bundle?.oracleDir ?? 'none'}>
        {bundle?.oracleDir != null ? (
          <span>
            {bundle.oracleDir.split('/').slice(-2).join('/')}
            {bundle.oracleKind !== null ? <span className="tag">{bundle.oracleKind}</span> : null}
          </span>
        ) : (
          <span className="muted">none</span>
        )}
      </span>
      {bundle?.oracleDir != null ? (
        <button type="button" disabled={busy} onClick={() => void setOracleBundle(null)} data-testid="clear-oracle" title="Judge against the open bundle alone">
          clear
        </button>
      ) : null}
      <OpenByPath
        label="oracle"
        placeholder="second implementation's bundle"
        recent={recent?.bundles ?? []}
        disabled={busy || bundle === null}
        testId="set-oracle-bundle"
        onOpen={setOracleBundle}
      />
      {map !== null && (map.unmapped.length > 0 || map.unusedEntries.length > 0) ? (
        <details className="map-report" data-testid="map-report">
          <summary>what the map left out</summary>
          <ul>
            {map.unmapped.map((row) => (
              <li key={row.candidate} data-testid="map-unmapped">
                <code>{row.candidate}</code> not compared ({row.passes} pass(es)): {row.reason}
              </li>
            ))}
            {map.unusedEntries.map((entry) => (
              <li key={entry} className="muted">
                {entry}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

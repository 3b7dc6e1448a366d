// What is open: the engine library (name, version, build, digest) and the reference bundle
// (case, precision, generator). The full paths and digests are in the tooltips.
import { useShallow } from 'zustand/react/shallow';
import { shortDigest } from '../../format/numbers.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectSessionBarFields } from '../../store/selectors.ts';

export function EngineSummary() {
  const { engine, bundle, openedRun, openedRunKind } = useInspectorStore(useShallow(selectSessionBarFields));
  return (
    <div className="engine-summary">
      <div className="summary-line" data-testid="engine-summary">
        <span className="summary-key">engine</span>
        {engine === null ? (
          openedRun !== null ? (
            <span title={openedRun}>
              captured run {openedRun.split('/').slice(-2).join('/')}
              {openedRunKind !== null && openedRunKind !== 'native' ? <span className="tag">{openedRunKind}</span> : null}
            </span>
          ) : (
            <span className="muted">none open</span>
          )
        ) : (
          <span title={`${engine.library}\nsha256 ${engine.sha256}\nABI ${engine.abiVersion}, ${engine.boundaryCount} boundaries`}>
            <b>{engine.name}</b> {engine.version} <span className="muted">build</span> {engine.buildId} <span className="muted">sha256</span>{' '}
            <code>{shortDigest(engine.sha256)}</code>
          </span>
        )}
      </div>
      <div className="summary-line" data-testid="bundle-summary">
        <span className="summary-key">bundle</span>
        {bundle === null ? (
          <span className="muted">none open</span>
        ) : (
          <span title={`${bundle.dir}\n${bundle.description}\noracle: ${bundle.oracleDir ?? 'none'}`}>
            <b>{bundle.caseId}</b>
            {bundle.kind !== 'reference' ? (
              <span className="tag" data-testid="bundle-kind" title="Engine against engine: this bundle is the reference side of the comparison">
                {bundle.kind}
              </span>
            ) : null}{' '}
            {bundle.precision} · {bundle.passCount} passes · {bundle.boundaryCount} boundaries · <span className="muted">{bundle.generator}</span> ·{' '}
            <span className="muted">{bundle.createdAt}</span>
            {bundle.oracleDir === null && bundle.kind === 'reference' ? <span className="tag tag-warn"> no fp64 oracle</span> : null}
          </span>
        )}
      </div>
    </div>
  );
}

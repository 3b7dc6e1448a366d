// The bits of one element on both sides: what the numbers are exactly, how far apart in ULPs,
// and where in the tensor. Elements come from heatmap clicks, special-value jumps, or typing.
import { useEffect, useState, type FormEvent } from 'react';
import { formatExactWire, formatWire } from '../../format/numbers.ts';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { useCommand } from '../../keyboard/command-registry.ts';
import { selectFlatIndex } from '../../store/actions/selection-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectFlatIndex as selectFlatIndexState, selectRowsVersion, selectSelectedRow } from '../../store/selectors.ts';
import { ElementSideRow } from './ElementSideRow.tsx';

export function BitInspector() {
  const row = useInspectorStore(selectSelectedRow);
  const flatIndex = useInspectorStore(selectFlatIndexState);
  const version = useInspectorStore(selectRowsVersion);
  const [draft, setDraft] = useState('');
  useEffect(() => setDraft(flatIndex === null ? '' : String(flatIndex)), [flatIndex]);

  const request = row === null || flatIndex === null || flatIndex >= row.elements ? null : { pass: row.pass, boundary: row.boundary, flatIndex };
  const { data: element, error, loading } = useApiQuery('getElement', request, version);
  const current =
    element !== null && row !== null && element.pass === row.pass && element.boundary === row.boundary && element.flatIndex === flatIndex ? element : null;

  const stepElement = (delta: number): void => {
    if (row === null || row.elements === 0) return;
    const from = flatIndex ?? (delta > 0 ? -1 : row.elements);
    selectFlatIndex(Math.min(row.elements - 1, Math.max(0, from + delta)));
  };
  useCommand('elementPrevious', () => stepElement(-1));
  useCommand('elementNext', () => stepElement(1));

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const value = Number(draft.trim());
    if (row !== null && Number.isInteger(value) && value >= 0 && value < row.elements) selectFlatIndex(value);
  };
  const draftValue = Number(draft.trim());
  const draftInvalid = draft.trim() !== '' && (row === null || !Number.isInteger(draftValue) || draftValue < 0 || draftValue >= row.elements);
  const differs = current !== null && current.reference !== null && current.native !== null && current.reference.hex !== current.native.hex;

  return (
    <section className="bit-inspector" data-testid="bit-inspector" data-flat-index={flatIndex ?? ''}>
      <form className="bit-header" onSubmit={submit}>
        <span className="panel-title">bits</span>
        <button type="button" onClick={() => stepElement(-1)} disabled={row === null} title="Previous element ([)">
          ‹
        </button>
        <input
          type="text"
          inputMode="numeric"
          className={`flat-index${draftInvalid ? ' invalid' : ''}`}
          value={draft}
          placeholder="flat index"
          aria-label="flat index"
          data-testid="bit-flat-index"
          disabled={row === null}
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="button" onClick={() => stepElement(1)} disabled={row === null} title="Next element (])">
          ›
        </button>
        {row !== null ? <span className="muted">of {row.elements}</span> : null}
        {current !== null ? <span className="bit-index">[{current.index.join(', ')}]</span> : null}
        <span className="spacer" />
        {current !== null ? (
          <>
            <span className="bit-metric">
              ULP <b data-testid="bit-ulp">{formatExactWire(current.ulp)}</b>
            </span>
            <span className="bit-metric">
              |diff| <b data-testid="bit-abs-diff">{formatWire(current.absDiff)}</b>
            </span>
          </>
        ) : null}
        {loading ? <span className="muted">…</span> : null}
      </form>
      {error !== null ? <div className="inline-error">{error}</div> : null}
      {row === null ? (
        <div className="muted panel-note">Select a boundary, then click a heatmap cell, a special value, or type a flat index.</div>
      ) : current === null ? (
        <div className="muted panel-note">
          {flatIndex === null
            ? 'Click a heatmap cell or type a flat index.'
            : flatIndex >= row.elements
              ? `Element ${flatIndex} is outside this boundary (${row.elements} elements).`
              : ''}
        </div>
      ) : (
        <table className="bit-table">
          <tbody>
            <ElementSideRow label="ref" side="ref" bits={current.reference} differs={differs} />
            <ElementSideRow label="nat" side="nat" bits={current.native} differs={differs} />
          </tbody>
        </table>
      )}
    </section>
  );
}

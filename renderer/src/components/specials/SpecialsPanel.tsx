// Special values of the selected boundary: the census per side, counts per mismatch class, and
// the classified mismatch list; plus jumps to the run's first NaN / infinity.
import { formatCount } from '../../format/numbers.ts';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { selectFlatIndex } from '../../store/actions/selection-actions.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectFlatIndex as selectFlatIndexState, selectRowsVersion, selectSelectedRow } from '../../store/selectors.ts';
import { CensusTable } from './CensusTable.tsx';
import { FirstSpecialButtons } from './FirstSpecialButtons.tsx';
import { MismatchList } from './MismatchList.tsx';

const MISMATCH_LIMIT = 1000;

export function SpecialsPanel() {
  const row = useInspectorStore(selectSelectedRow);
  const version = useInspectorStore(selectRowsVersion);
  const flatIndex = useInspectorStore(selectFlatIndexState);
  const {
    data: specials,
    error,
    loading,
  } = useApiQuery('getSpecials', row === null ? null : { pass: row.pass, boundary: row.boundary, limit: MISMATCH_LIMIT }, version);
  const current = specials !== null && row !== null && specials.pass === row.pass && specials.boundary === row.boundary ? specials : null;
  return (
    <div className="specials-panel" data-testid="specials-panel">
      <div className="panel-toolbar">
        <FirstSpecialButtons />
        <span className="spacer" />
        {row !== null ? (
          <span className="panel-title">
            P{row.pass} <b>{row.boundary}</b>
          </span>
        ) : null}
      </div>
      {row === null ? <div className="panel-empty">Select a boundary to see its special values.</div> : null}
      {error !== null ? <div className="inline-error">{error}</div> : null}
      {row !== null && current === null && loading ? <div className="muted panel-note">loading…</div> : null}
      {current !== null ? (
        <div className="specials-body">
          <div className="specials-summary">
            <CensusTable census={current.census} />
            <table className="class-counts" data-testid="specials-by-class">
              <thead>
                <tr>
                  <th>mismatch class</th>
                  <th className="num">count</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(current.byClass).map(([name, count]) => (
                  <tr key={name} className={count > 0 ? 'differs' : ''}>
                    <th>
                      <span className={`class-tag class-${name}`}>{name}</span>
                    </th>
                    <td className="num">{formatCount(count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <MismatchList mismatches={current.mismatches} truncated={current.truncated} selectedIndex={flatIndex} onSelect={selectFlatIndex} />
        </div>
      ) : null}
    </div>
  );
}

// Classified mismatches in element order (NaN vs number, inf sign, signed zero, tie order...).
// Clicking one opens its bits.
import type { Specials } from '../../../../protocol/inspector-api.ts';

interface MismatchListProps {
  mismatches: Specials['mismatches'];
  truncated: boolean;
  selectedIndex: number | null;
  onSelect: (flatIndex: number) => void;
}

export function MismatchList({ mismatches, truncated, selectedIndex, onSelect }: MismatchListProps) {
  if (mismatches.length === 0) return <div className="muted panel-note">No classified mismatch in this boundary.</div>;
  return (
    <div className="mismatch-list" data-testid="specials-mismatches">
      <table>
        <thead>
          <tr>
            <th className="num">flat</th>
            <th>index</th>
            <th>class</th>
            <th className="num">reference</th>
            <th className="num">native</th>
            <th>reference bits</th>
            <th>native bits</th>
          </tr>
        </thead>
        <tbody>
          {mismatches.map((entry) => (
            <tr
              key={entry.flatIndex}
              className={entry.flatIndex === selectedIndex ? 'selected' : ''}
              onClick={() => onSelect(entry.flatIndex)}
              data-testid="specials-mismatch"
              data-flat-index={entry.flatIndex}
            >
              <td className="num">{entry.flatIndex}</td>
              <td>[{entry.index.join(', ')}]</td>
              <td>
                <span className={`class-tag class-${entry.class}`}>{entry.class}</span>
              </td>
              <td className="num">{entry.reference}</td>
              <td className="num">{entry.native}</td>
              <td className="bits">{entry.referenceBits}</td>
              <td className="bits">{entry.nativeBits}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {truncated ? <div className="muted panel-note">Only the first {mismatches.length} are listed.</div> : null}
    </div>
  );
}

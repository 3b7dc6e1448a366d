// Special values per side: NaN, ±inf, -0, subnormal and finite counts. A count that differs
// between the sides is highlighted — that is usually the finding.
import type { Specials } from '../../../../protocol/inspector-api.ts';
import { formatCount } from '../../format/numbers.ts';

const CENSUS_ROWS: { key: keyof Specials['census']['native']; label: string }[] = [
  { key: 'nan', label: 'NaN' },
  { key: 'posInf', label: '+inf' },
  { key: 'negInf', label: '-inf' },
  { key: 'negZero', label: '-0' },
  { key: 'subnormal', label: 'subnormal' },
  { key: 'finite', label: 'finite' },
];

export function CensusTable({ census }: { census: Specials['census'] }) {
  return (
    <table className="census-table" data-testid="specials-census">
      <thead>
        <tr>
          <th />
          <th className="num">reference</th>
          <th className="num">native</th>
        </tr>
      </thead>
      <tbody>
        {CENSUS_ROWS.map(({ key, label }) => {
          const reference = census.reference[key];
          const native = census.native[key];
          return (
            <tr key={key} className={reference !== native ? 'differs' : ''}>
              <th>{label}</th>
              <td className="num">{formatCount(reference)}</td>
              <td className="num">{formatCount(native)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

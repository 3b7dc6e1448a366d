// One side (reference or native) of an element: decimal, hex, bit fields and class.
import type { ElementBits } from '../../../../protocol/inspector-api.ts';
import { BitFields } from './BitFields.tsx';

interface ElementSideRowProps {
  label: string;
  side: 'ref' | 'nat';
  bits: ElementBits | null;
  differs: boolean;
}

export function ElementSideRow({ label, side, bits, differs }: ElementSideRowProps) {
  if (bits === null) {
    return (
      <tr className={`bit-side bit-side-${side}`}>
        <th>{label}</th>
        <td colSpan={4} className="muted">
          no record of this boundary on this side
        </td>
      </tr>
    );
  }
  return (
    <tr className={`bit-side bit-side-${side}${differs ? ' differs' : ''}`}>
      <th>{label}</th>
      <td className="num bit-decimal" data-testid={`bit-${side}-decimal`}>
        {bits.decimal}
      </td>
      <td className="bit-hex" data-testid={`bit-${side}-hex`}>
        {bits.hex}
      </td>
      <td className={`bit-class class-${bits.class}`}>{bits.class}</td>
      <td>
        <BitFields bits={bits} />
      </td>
    </tr>
  );
}

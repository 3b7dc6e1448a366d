// An element's raw bits split into sign | exponent | mantissa, each in its own colour, with the
// unbiased exponent beside them (integers have no fields: their hex is the whole story).
import type { ElementBits } from '../../../../protocol/inspector-api.ts';

export function BitFields({ bits }: { bits: ElementBits }) {
  if (bits.fields === null) return <span className="muted">integer</span>;
  const { sign, exponent, mantissa, exponentBias } = bits.fields;
  const biased = parseInt(exponent, 2);
  const unbiased = bits.class === 'subnormal' || bits.class === 'zero' ? 1 - exponentBias : biased - exponentBias;
  return (
    <span className="bit-fields" title={`sign ${sign} · exponent ${biased} (2^${unbiased}) · mantissa ${mantissa.length} bits`}>
      <span className="bits-sign">{sign}</span>
      <span className="bits-sep">|</span>
      <span className="bits-exponent">{exponent}</span>
      <span className="bits-sep">|</span>
      <span className="bits-mantissa">{mantissa}</span>
      <span className="muted"> 2^{unbiased}</span>
    </span>
  );
}

// Number formatting for a dense instrument: three significant digits, exponent form for the
// tiny and the huge, and the non-finite values spelled out (they are findings, not blanks).
import { fromWire, type WireNumber } from '../../../protocol/inspector-api.ts';

export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  // Integers (counts, ULP distances) read best exact while they stay short.
  if (Number.isInteger(value) && Math.abs(value) < 1e6) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e4) return value.toPrecision(3);
  // "1.23e9", not "1.23e+9": one character less in a narrow column, no information lost.
  return value.toExponential(2).replace('e+', 'e');
}

export function formatWire(value: WireNumber | null | undefined, empty = '—'): string {
  if (value === null || value === undefined) return empty;
  return formatNumber(fromWire(value));
}

/** The bit inspector's figures: every digit, because there a ULP distance is evidence, not a summary. */
export function formatExactWire(value: WireNumber | null | undefined, empty = '—'): string {
  if (value === null || value === undefined) return empty;
  const number = fromWire(value);
  return Number.isInteger(number) ? number.toLocaleString('en-US', { useGrouping: false }) : formatNumber(number);
}

/** Sort key for a nullable WireNumber: not compared sorts lowest, NaN highest (it is the worst). */
export function wireSortKey(value: WireNumber | null): number {
  if (value === null) return -Infinity;
  const number = fromWire(value);
  return Number.isNaN(number) ? Number.MAX_VALUE : number;
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

export function formatDb(value: WireNumber): string {
  const number = fromWire(value);
  if (!Number.isFinite(number)) return formatNumber(number);
  return `${number.toFixed(1)} dB`;
}

export function formatShape(shape: readonly number[]): string {
  return `[${shape.join('×')}]`;
}

export function shortDigest(digest: string, length = 12): string {
  return digest.length > length ? digest.slice(0, length) : digest;
}

// The full GateResult as JSON (--json). JSON cannot hold NaN or the infinities, which gate
// statistics legitimately take (a max ULP over a tensor with NaNs): they are written as the
// strings "NaN", "Infinity" and "-Infinity", as in the receipt.
import type { GateResult } from '../gate/gate-types.ts';

function nonFiniteAsString(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  return value;
}

/** Any report value as one line of JSON, its non-finite numbers as strings (capture, verify). */
export function serializeReport(value: unknown): string {
  // Compact: a run over every committed case holds thousands of rows (use jq to read it).
  return `${JSON.stringify(value, nonFiniteAsString)}\n`;
}

export function serializeGateResult(result: GateResult): string {
  return serializeReport(result);
}

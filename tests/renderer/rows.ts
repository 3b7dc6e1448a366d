// Boundary rows for the renderer's tests: a full BoundaryRow with the fields a test names.
import type { BoundaryRow } from '../../protocol/inspector-api.ts';

export function row(order: number, fields: Partial<BoundaryRow> = {}): BoundaryRow {
  const pass = fields.pass ?? 0;
  const boundary = fields.boundary ?? `op${order}`;
  return {
    id: `${pass}:${boundary}`,
    order,
    pass,
    passKind: pass === 0 ? 'prefill' : 'decode',
    boundary,
    stage: 'backbone',
    dtype: 'F32',
    shape: [4],
    contract: 'bit_exact',
    contractKind: 'bit_exact',
    verdict: 'PASS',
    kind: null,
    reason: 'equal',
    maxAbs: 0,
    maxUlp: 0,
    mismatches: 0,
    elements: 4,
    badges: { nan: false, inf: false, negZero: false, tie: false },
    firstDivergence: false,
    pcm: false,
    ...fields,
  };
}

// The session checks every message its judging workers send (judge-messages.ts): a slice's
// verdicts and a manifest's parts are checked item by item in one loop, and any item that is not
// what the session reads refuses the whole message (the pool then fails the job, naming it).
import { describe, expect, it } from 'vitest';
import { parseFromWorker, parseManifestMessage } from '../../main/session/judge-messages.ts';

const verdict = {
  case: 'c',
  pass: 0,
  boundary: 'b',
  stage: 's',
  catalogueIndex: 0,
  verdict: 'PASS',
  kind: null,
  reason: '',
  gapId: null,
  ledgerId: null,
  inReference: true,
  inNative: true,
  reference: {
    contractId: 'k',
    dtype: 'F32',
    shape: [1],
    structural: null,
    census: {},
    ties: {},
    elements: 1,
    mismatches: 0,
    maxAbs: 0,
    maxUlp: 0,
  },
  oracleSide: 'absent',
  oracle: null,
  durationMs: 1,
};
const slice = (verdicts: unknown[]) => ({ type: 'slice', jobId: 1, slice: 0, threadId: 2, verdicts, contracts: {} });
const part = (boundaries: unknown) => ({ type: 'manifestPart', requestId: 1, head: null, pass: null, boundaries, last: false });
const entry = { name: 'b', dtype: 'F32', shape: [1], sha256: 'ab' };

describe("the workers' messages", () => {
  it('a slice of verdicts is taken as it came; one verdict missing a field, or of an unknown verdict, refuses the slice', () => {
    const ok = slice([verdict, { ...verdict, pass: 1 }]);
    expect(parseFromWorker(ok)).toEqual(ok);
    const { reason: _reason, ...noReason } = verdict;
    expect(parseFromWorker(slice([verdict, noReason]))).toBeNull();
    expect(parseFromWorker(slice([verdict, { ...verdict, verdict: 'MAYBE' }]))).toBeNull();
    expect(parseFromWorker(slice([{ ...verdict, reference: { ...verdict.reference, maxAbs: '0' } }]))).toBeNull();
    expect(parseFromWorker({ ...slice([]), verdicts: 'none' })).toBeNull();
  });

  it("a manifest part's boundary entries are checked each; one without its sha256 refuses the part", () => {
    const ok = part([entry, { ...entry, name: 'c' }]);
    expect(parseManifestMessage(ok)).toEqual(ok);
    const { sha256: _sha256, ...noDigest } = entry;
    expect(parseManifestMessage(part([entry, noDigest]))).toBeNull();
    expect(parseManifestMessage(part({ 0: entry }))).toBeNull();
  });
});

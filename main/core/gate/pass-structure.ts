// What a case's passes themselves must agree on before their boundaries can mean anything: how
// many there are (the case's stated pass_count, the reference, the fp64 oracle, the native run)
// and, pass by pass, what each was (kind prefill/decode, output mode text/audio). A reference cut
// down to fewer passes, an oracle with passes the reference lacks, an engine that ended early or
// a pass relabelled from audio to text would otherwise compare only what both sides happen to
// hold and pass. Each disagreement is a finding that case-verdicts.ts turns into a FAIL row of
// kind `pass` on the pseudo-boundary `(pass)`, at the first pass concerned.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import type { PassEntry } from '../bundle/manifest-schema.ts';

/** The pseudo-boundary a pass-level finding is reported on (no real boundary has parentheses). */
export const PASS_ROW_BOUNDARY = '(pass)';

export interface PassFinding {
  /** The pass the row goes on: the first pass not every side has, or the pass that differs. */
  pass: number;
  /** The reference has this pass / the native run has it. */
  inReference: boolean;
  inNative: boolean;
  reason: string;
}

export interface PassStructureInput {
  reference: TraceBundle;
  oracle: TraceBundle | null;
  /** Null when nothing native is readable. */
  native: TraceBundle | null;
  /**
   * Whether the native run's pass count is judged: only once the whole run is judged and it
   * ended on its own (a crash or a stop already fails every pass it did not reach).
   */
  judgeNativeCount: boolean;
}

const describePass = (pass: PassEntry): string => `${pass.kind}/${pass.mode ?? '(no mode)'}`;

function countFinding(input: PassStructureInput): PassFinding | null {
  const counts: { who: string; count: number }[] = [];
  const stated = (bundle: TraceBundle, role: string): void => {
    const count = bundle.manifest.case.pass_count;
    if (count !== undefined) counts.push({ who: `the ${role}'s case.pass_count (${bundle.manifestPath}) says ${count}`, count });
  };
  stated(input.reference, 'reference');
  if (input.oracle !== null) stated(input.oracle, 'oracle');
  counts.push({ who: `the reference has ${input.reference.passes.length}`, count: input.reference.passes.length });
  if (input.oracle !== null) counts.push({ who: `the oracle has ${input.oracle.passes.length}`, count: input.oracle.passes.length });
  if (input.native !== null && input.judgeNativeCount)
    counts.push({ who: `the native run has ${input.native.passes.length}`, count: input.native.passes.length });
  const distinct = new Set(counts.map((entry) => entry.count));
  if (distinct.size <= 1) return null;
  const first = Math.min(...distinct);
  return {
    pass: first,
    inReference: first < input.reference.passes.length,
    inNative: input.native !== null && first < input.native.passes.length,
    reason: `pass counts disagree: ${counts.map((entry) => entry.who).join(', ')}; every side must hold the same passes (pass ${first} is the first one not all of them have)`,
  };
}

function labelFindings(input: PassStructureInput): PassFinding[] {
  const findings: PassFinding[] = [];
  for (const pass of input.reference.passes) {
    const differences: string[] = [];
    const native = input.native?.passes[pass.index];
    // Modes are free labels compared when both sides give one: a native pass cut short by a
    // crash records none (the crash is its verdict), and an engine or reference may name none.
    const modesDiffer = native !== undefined && native.mode !== null && pass.mode !== null && native.mode !== pass.mode;
    if (native !== undefined && (native.kind !== pass.kind || modesDiffer)) {
      differences.push(`the native run reports ${describePass(native)}`);
    }
    const oracle = input.oracle?.passes[pass.index];
    if (oracle !== undefined && (oracle.kind !== pass.kind || oracle.mode !== pass.mode)) {
      differences.push(`the oracle says ${describePass(oracle)}`);
    }
    if (differences.length === 0) continue;
    findings.push({
      pass: pass.index,
      inReference: true,
      inNative: native !== undefined,
      reason: `pass ${pass.index} is not the same pass on every side: the reference says ${describePass(pass)} (kind/mode), ${differences.join(', ')}`,
    });
  }
  return findings;
}

/** Every pass-level disagreement of a case, in pass order. */
export function passStructureFindings(input: PassStructureInput): PassFinding[] {
  const count = countFinding(input);
  return [...(count === null ? [] : [count]), ...labelFindings(input)].sort((a, b) => a.pass - b.pass);
}

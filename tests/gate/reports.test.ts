// The gate's report faces on a hand-made result whose texts carry every character that breaks
// a careless writer (%, CR, LF, :, ,, <, &, quotes, "]]>", a control character): the human
// report ends with the seals, the JUnit XML parses back with one testcase per row, the Actions
// annotations are escaped and capped, the step summary keeps its tables intact, the JSON keeps
// non-finite statistics as strings.
import { describe, expect, it } from 'vitest';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { emptyCounts, type BoundaryVerdict, type CaseResult, type ComparisonRecord, type GateResult, type Verdict } from '../../main/core/gate/gate-types.ts';
import { gateReceiptPredicate, gateReceiptSubjects, streamedGateReceiptPredicate } from '../../main/core/gate/gate-receipt.ts';
import { buildStatement, signedStatementPayload, statementPayload } from '../../main/core/receipt/in-toto.ts';
import { computeSeals } from '../../main/core/gate/seals.ts';
import { escapeCommandData, escapeCommandProperty, formatAnnotations, formatStepSummary, workflowCommand } from '../../main/core/report/github-actions.ts';
import { formatHumanReport } from '../../main/core/report/human-report.ts';
import { escapeXmlAttribute, escapeXmlText, formatJunit } from '../../main/core/report/junit-report.ts';
import { serializeGateResult } from '../../main/core/report/json-report.ts';
import { cleanRecord, noClasses as noClassCounts } from './comparison-fixture.ts';
import { findAll, parseXml } from './mini-xml.ts';

const NASTY = 'a 50% share\r\nline two: <b> & "q" \'s\' ]]> x,y \u0001 end';

const noClasses = noClassCounts();
/** Dropped by cleanRecord (the gate stores contracts by id); the rows below name 'c0'. */
const reportContract: Contract = { kind: 'bit_exact', nan_policy: 'positions', signed_zero: 'must_match', reason: 'report test' };

function record(over: Partial<ComparisonRecord> = {}): ComparisonRecord {
  return cleanRecord({ pass: 0, boundary: 'b', stage: 's', shape: [4], contract: reportContract }, 'c0', over);
}

function row(caseId: string, pass: number, boundary: string, verdict: Verdict, reason = 'fine'): BoundaryVerdict {
  const failing = verdict === 'FAIL' || verdict === 'REVIEW_REQUIRED' || verdict === 'KNOWN_GAP';
  return {
    case: caseId,
    pass,
    boundary,
    stage: 'backbone',
    catalogueIndex: 0,
    verdict,
    kind: failing ? 'value' : null,
    reason,
    gapId: verdict === 'GAP' ? `not_in_catalogue:${boundary}` : verdict === 'KNOWN_GAP' ? 'known_gap:KG-1' : null,
    ledgerId: verdict === 'KNOWN_GAP' ? 'KG-1' : null,
    inReference: true,
    inNative: true,
    reference: failing
      ? record({
          mismatches: 3,
          mismatchShare: 0.75,
          classes: { ...noClasses, value: 3 },
          firstMismatch: {
            flatIndex: 1,
            index: [1],
            native: 1,
            reference: 2,
            absError: 1,
            ulp: 8388608,
            class: 'value',
            mismatch: true,
            nativeBits: '0x0',
            referenceBits: '0x0',
          },
          worst: {
            flatIndex: 2,
            index: [2],
            native: Number.NaN,
            reference: 2,
            absError: Number.NaN,
            ulp: Number.POSITIVE_INFINITY,
            class: 'nan_vs_number',
            mismatch: true,
            nativeBits: '0x7fc00000',
            referenceBits: '0x0',
          },
          maxAbs: Number.NaN,
          maxUlp: Number.POSITIVE_INFINITY,
          passed: false,
          outcome: 'fail',
        })
      : record(),
    oracleSide: 'compared',
    oracle: record(),
    durationMs: 1.5,
  };
}

function caseResult(id: string, verdicts: BoundaryVerdict[]): CaseResult {
  const counts = emptyCounts();
  for (const verdict of verdicts) counts[verdict.verdict] += 1;
  const first = verdicts.findIndex((verdict) => verdict.verdict === 'FAIL' || verdict.verdict === 'REVIEW_REQUIRED');
  const summary = {
    dir: `/work/ws/fixtures/${id}/reference`,
    manifestPath: `/work/ws/fixtures/${id}/reference/manifest.json`,
    manifestSha256: 'a'.repeat(64),
    subjectName: `${id}/reference/manifest.json`,
    kind: 'reference',
    caseDescription: NASTY,
    precision: 'float32',
    generator: { implementation: 'gen', revision: 'abcdef1', dirty: false },
    runtime: { torch: '1', python: '3' },
    createdAt: '2026-12-02T10:00:00Z',
    passes: 4,
    boundaries: verdicts.length,
  };
  return {
    id,
    reference: summary,
    oracle: null,
    weights: { path: '/w.safetensors', sha256: 'b'.repeat(64), subjectName: 'w.safetensors' },
    nativeDir: `/work/ws/runs/${id}/native`,
    isolatedDir: null,
    teacherForcing: null,
    run: { outcome: { status: 'completed', message: '', last_pass: 3, last_boundary: 'x' }, passesExpected: 4, passesCompleted: 4, signal: null, summary: '' },
    verdicts,
    counts,
    compared: verdicts.length,
    firstDivergence: first === -1 ? null : first,
    unreadable: null,
    gaps: [{ id: `oracle_absent:${id}`, case: id, reason: NASTY }],
    audio: [],
  };
}

function result(cases: CaseResult[]): GateResult {
  const counts = emptyCounts();
  for (const item of cases) for (const verdict of item.verdicts) counts[verdict.verdict] += 1;
  const gaps = cases.flatMap((item) => item.gaps);
  const seals = computeSeals({
    compared: 10,
    counts,
    runStatuses: ['completed'],
    emptyCases: [],
    unreadable: false,
    gapIds: gaps.map((gap) => gap.id),
    strict: false,
  });
  const firstCase = cases.find((item) => item.firstDivergence !== null);
  return {
    schema: 'trace-inspector.gate-result',
    schema_version: 1,
    tool: { name: 'trace-inspector', version: '0.1.0', commit: 'abcdef0123456789', dirty: false },
    startedAt: '2026-12-02T10:00:00.000Z',
    finishedAt: '2026-12-02T10:00:05.000Z',
    strict: false,
    options: { isolation: 'process', passTimeoutMs: 60000, engineOptions: {}, teacherForce: false, isolate: false, workDir: '/w', ledgerFile: null },
    engine: { library: '/e/lib.so', sha256: 'c'.repeat(64), subjectName: 'lib.so', name: 'toy', version: '1', buildId: 'b', abiVersion: 1, catalogue: ['x'] },
    ledger: [],
    warnings: [],
    cases,
    contracts: {},
    gaps,
    counts,
    compared: 10,
    firstDivergence: firstCase ? { case: firstCase.id, index: firstCase.firstDivergence as number } : null,
    seals,
  };
}

const mixed = (): GateResult =>
  result([
    caseResult('alpha', [
      row('alpha', 0, 'backbone.embed', 'PASS'),
      row('alpha', 3, 'backbone.l2.out', 'FAIL', NASTY),
      row('alpha', 3, 'backbone.l3.out', 'REVIEW_REQUIRED', NASTY),
    ]),
    caseResult('beta', [
      row('beta', 0, 'backbone.embed', 'PASS'),
      row('beta', 1, 'x.undeclared', 'GAP', NASTY),
      row('beta', 2, 'backbone.logits', 'KNOWN_GAP', NASTY),
    ]),
  ]);

describe('human report', () => {
  it('ends with the seals, one per line, and names the first divergence', () => {
    const gate = mixed();
    const text = formatHumanReport(gate);
    const lines = text.trimEnd().split('\n');
    expect(lines.slice(-gate.seals.lines.length)).toEqual(gate.seals.lines);
    expect(gate.seals.lines[0]).toBe('FIDELITY: FAIL');
    expect(text).toContain('first divergence: case alpha, pass 3 / backbone.l2.out');
    // Worst first: the FAIL row comes before the REVIEW_REQUIRED one, which comes before the gaps.
    expect(text.indexOf('FAIL     alpha')).toBeLessThan(text.indexOf('REVIEW_REQUIRED  alpha'));
  });
});

describe('JUnit XML', () => {
  it('escapes text and attributes', () => {
    expect(escapeXmlText('a<b & c>d ]]>')).toBe('a&lt;b &amp; c&gt;d ]]&gt;');
    expect(escapeXmlAttribute('"x"\n\'y\'')).toBe('&quot;x&quot;&#10;&apos;y&apos;');
  });

  it('parses back: one testsuite per case, one testcase per pass x boundary, failures and skips with bodies', () => {
    const gate = mixed();
    const xml = formatJunit(gate);
    const root = parseXml(xml);
    expect(root.name).toBe('testsuites');
    expect(root.attributes['tests']).toBe('6');
    const suites = findAll(root, 'testsuite');
    expect(suites.map((suite) => suite.attributes['name'])).toEqual(['alpha', 'beta']);
    const testcases = findAll(root, 'testcase');
    expect(testcases).toHaveLength(6);
    expect(testcases.map((testcase) => testcase.attributes['name'])).toContain('pass 3 / backbone.l2.out');
    const failures = findAll(root, 'failure');
    expect(failures).toHaveLength(2);
    expect(failures[0]?.attributes['message']).toContain('a 50% share');
    expect(failures[0]?.text).toContain('line two: <b> & "q"');
    expect(failures[0]?.text).toContain(']]>');
    expect(findAll(root, 'skipped')).toHaveLength(2);
    expect(suites[0]?.attributes['failures']).toBe('2');
    expect(suites[1]?.attributes['skipped']).toBe('2');
    const seals = findAll(root, 'property').filter((property) => property.attributes['name'] === 'seal');
    expect(seals.map((seal) => seal.attributes['value'])).toContain('FIDELITY: FAIL');
  });

  it('the mini parser itself rejects malformed XML (so the test above proves something)', () => {
    expect(() => parseXml('<a><b></a></b>')).toThrow();
    expect(() => parseXml('<a x=1/>')).toThrow();
    expect(() => parseXml('<a>1 < 2</a>')).toThrow();
    expect(() => parseXml('<a>&bogus;</a>')).toThrow();
    expect(() => parseXml('<a>\u0001</a>')).toThrow();
    expect(() => parseXml('<a/><b/>')).toThrow();
  });
});

describe('GitHub Actions annotations', () => {
  it('escapes message data and properties per the workflow-command rules', () => {
    expect(escapeCommandData('100% done\r\nnext: a, b')).toBe('100%25 done%0D%0Anext: a, b');
    expect(escapeCommandProperty('100% done\r\nnext: a, b')).toBe('100%25 done%0D%0Anext%3A a%2C b');
    expect(workflowCommand('error', { file: 'a,b:c.json', title: 'T: x, y' }, 'm%\n')).toBe('::error file=a%2Cb%3Ac.json,title=T%3A x%2C y::m%25%0A');
  });

  it('every annotation is one line whose message keeps %, CR, LF escaped', () => {
    const lines = formatAnnotations(mixed(), { workspace: '/work/ws' });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).not.toMatch(/[\r\n]/);
      expect(line).toMatch(/^::(error|warning|notice) /);
    }
    const first = lines[0] as string;
    expect(first.startsWith('::error file=fixtures/alpha/reference/manifest.json,title=FAIL pass 3 / backbone.l2.out (case alpha)::')).toBe(true);
    expect(first).toContain('a 50%25 share%0D%0Aline two: <b>');
    // The message part is raw after "::"; the property part has no bare ':' or ',' inside values.
    const properties = first.slice(2, first.indexOf('::', 2));
    expect(properties.split(',').every((pair) => /^(error|warning) ?[a-z]+=|^[a-z]+=/.test(pair))).toBe(true);
  });

  it('caps the annotations and says how many were left out', () => {
    const many = result([
      caseResult(
        'many',
        Array.from({ length: 30 }, (_, index) => row('many', index, `b.${index}`, 'FAIL', `failure ${index}`)),
      ),
    ]);
    const lines = formatAnnotations(many, { workspace: '/', max: 20 });
    expect(lines).toHaveLength(21);
    expect(lines.filter((line) => line.startsWith('::error'))).toHaveLength(20);
    expect(lines.at(-1)).toMatch(/^::notice title=trace-inspector gate::11 more annotation\(s\) omitted \(31 in all\)/);
  });

  it('the step summary starts with the seals and keeps table rows on one line with pipes escaped', () => {
    const summary = formatStepSummary(mixed());
    expect(summary).toContain('```text\nFIDELITY: FAIL\nOVERALL: FAIL reason=boundary_failures\n');
    const tableRows = summary.split('\n').filter((line) => line.startsWith('| FAIL') || line.startsWith('| REVIEW_REQUIRED'));
    expect(tableRows).toHaveLength(2);
    for (const line of tableRows) expect(line).toContain('line two: &lt;b&gt;');
    const piped = formatStepSummary(result([caseResult('p', [row('p', 0, 'b', 'FAIL', 'a | b')])]));
    expect(piped).toContain('a \\| b');
  });
});

describe('JSON report', () => {
  it('writes non-finite statistics as strings and parses back', () => {
    const text = serializeGateResult(mixed());
    const parsed = JSON.parse(text) as GateResult;
    const failing = parsed.cases[0]?.verdicts[1];
    expect(failing?.reference?.maxAbs).toBe('NaN');
    expect(failing?.reference?.maxUlp).toBe('Infinity');
    expect(parsed.seals.lines[0]).toBe('FIDELITY: FAIL');
  });
});

describe('audio bounds in every report', () => {
  /** A PCM case whose stream broke max_null_residual_dbfs on the row of its last pass; -Infinity and Infinity among the metrics. */
  const audioGate = (): GateResult => {
    const streamRow = row(
      'pcm',
      5,
      'detok.pcm',
      'FAIL',
      'audio stream of detok.pcm over passes 0-3, 5 (9600 samples): null-test residual -38.3 dBFS exceeds max_null_residual_dbfs -60',
    );
    streamRow.kind = 'audio';
    streamRow.reference = record({
      pass: 5,
      boundary: 'detok.pcm',
      audio: {
        samples: 1920,
        metrics: { esr: 0, snrDb: Number.POSITIVE_INFINITY, mrStft: 0, nullResidualDbfs: Number.NEGATIVE_INFINITY, nullOffset: 0 },
        bounds: { max_esr: null, min_snr_db: null, max_mr_stft: null, max_null_residual_dbfs: -60, max_null_offset: 2 },
        violations: [],
        passed: true,
      },
    });
    const item = caseResult('pcm', [row('pcm', 0, 'detok.pcm', 'PASS'), streamRow]);
    item.audio = [
      {
        boundary: 'detok.pcm',
        passes: [0, 1, 2, 3, 5],
        passRange: '0-3, 5',
        samples: 9600,
        metrics: { esr: 0.04, snrDb: 13.57, mrStft: 4.39, nullResidualDbfs: -38.31, nullOffset: 1 },
        bounds: { max_esr: null, min_snr_db: null, max_mr_stft: null, max_null_residual_dbfs: -60, max_null_offset: 2 },
        violations: [{ bound: 'max_null_residual_dbfs', value: -38.31, limit: -60 }],
        passed: false,
        verdictPass: 5,
      },
    ];
    return result([item]);
  };

  it('human, JUnit and the step summary list the stream with its metrics, bounds and verdict; the row says kind audio', () => {
    const gate = audioGate();
    const line =
      'detok.pcm passes 0-3, 5 (9600 samples): FAIL — ESR 0.04, SNR 13.57 dB, MR-STFT distance 4.39, null-test residual -38.31 dBFS (max -60), null-test offset 1 samples (max 2)';
    const human = formatHumanReport(gate);
    expect(human).toContain(`audio    pcm ${line}`);
    expect(human).toMatch(/^FAIL +pcm +5 +detok\.pcm +audio /m);
    const audioProperties = findAll(parseXml(formatJunit(gate)), 'property').filter((property) => property.attributes['name'] === 'audio');
    expect(audioProperties.map((property) => property.attributes['value'])).toEqual([line]);
    expect(formatStepSummary(gate)).toContain('**Audio streams:**\n\n- pcm: `detok.pcm` passes 0-3, 5 (9600 samples): FAIL');
    expect(formatAnnotations(gate, { workspace: '/work/ws' })[0]).toContain(
      'title=FAIL pass 5 / detok.pcm (case pcm)::first divergence: audio: audio stream of detok.pcm over passes 0-3, 5',
    );
  });

  it("JSON keeps the non-finite metrics as strings; the receipt carries the stream and each record's metrics", () => {
    const gate = audioGate();
    const parsed = JSON.parse(serializeGateResult(gate)) as {
      cases: { verdicts: { reference: { audio: { metrics: Record<string, unknown> } } }[]; audio: unknown[] }[];
    };
    expect(parsed.cases[0]?.verdicts[1]?.reference.audio.metrics).toMatchObject({ snrDb: 'Infinity', nullResidualDbfs: '-Infinity' });
    expect(parsed.cases[0]?.audio).toHaveLength(1);
    const predicate = gateReceiptPredicate(gate) as {
      cases: { audio: unknown[] }[];
      verdicts: { columns: readonly string[]; cases: { passes: { pass: number; rows: unknown[][] }[] }[] };
    };
    expect(predicate.cases[0]?.audio).toEqual([
      {
        boundary: 'detok.pcm',
        passes: '0-3, 5',
        samples: 9600,
        passed: false,
        metrics: { esr: 0.04, snrDb: 13.57, mrStft: 4.39, nullResidualDbfs: -38.31, nullOffset: 1 },
        bounds: { max_esr: null, min_snr_db: null, max_mr_stft: null, max_null_residual_dbfs: -60, max_null_offset: 2 },
        violations: [{ bound: 'max_null_residual_dbfs', value: -38.31, limit: -60 }],
      },
    ]);
    const column = predicate.verdicts.columns.indexOf('referenceAudio');
    const rowOf = (pass: number): unknown[] | undefined => predicate.verdicts.cases[0]?.passes.find((entry) => entry.pass === pass)?.rows[0];
    expect(rowOf(5)?.[column]).toEqual([0, Number.POSITIVE_INFINITY, 0, Number.NEGATIVE_INFINITY, 0, []]);
    expect(rowOf(0)?.[column]).toBeNull();
  });
});

describe('receipt predicate, streamed', () => {
  it('signs exactly the bytes of the predicate built whole: passes out of order, NaN and infinities, several cases', () => {
    const gate = mixed();
    // A pass met again after another (grouped under its first appearance) and non-finite statistics.
    const alpha = gate.cases[0] as CaseResult;
    alpha.verdicts.push({
      ...(alpha.verdicts[0] as BoundaryVerdict),
      boundary: 'backbone.final_norm',
      reference: record({ maxAbs: Number.NaN, maxUlp: Number.POSITIVE_INFINITY }),
    });
    const subjects = gateReceiptSubjects(gate);
    const whole = statementPayload(buildStatement(subjects, gateReceiptPredicate(gate)));
    const streamed = signedStatementPayload(subjects, streamedGateReceiptPredicate(gate));
    expect(streamed.toString('utf8')).toBe(whole.toString('utf8'));
    expect(streamed.toString('utf8')).toContain('"pass":0,"rows":[["backbone.embed"');
    expect(streamed.toString('utf8')).toContain('"NaN"');
  });
});

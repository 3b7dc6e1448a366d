// Audio bounds judged by the gate. On hand-made bundles: a delay that changes between passes
// keeps every record inside its bounds yet breaks the stream's, and the stream failure is a
// FAIL of kind audio on the last pass's PCM row naming the metric, the bound and the passes.
// End to end: the real reference engine on a temporary COPY of the committed speech case whose
// detok.pcm contracts gain audio bounds derived from their element bounds; the clean engine
// passes, the envelope-skip perturbation of the self-test fails with kind audio.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import type { BundleManifest } from '../../main/core/bundle/manifest-schema.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { gateReceiptPredicate } from '../../main/core/gate/gate-receipt.ts';
import { runGate } from '../../main/core/gate/gate-run.ts';
import type { BoundaryVerdict, GateResult } from '../../main/core/gate/gate-types.ts';
import { formatHumanReport } from '../../main/core/report/human-report.ts';
import { serializeGateResult } from '../../main/core/report/json-report.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import { REFERENCE_ENGINE, oracleBundle, referenceBundle } from '../helpers/paths.ts';
import { boundedSpeechCopy, FRAME, PCM_DESCRIPTION, writeDriftingDelayCase } from './audio-fixtures.ts';
import { gateOptions, removeTempDirs, tempDir } from './gate-fixtures.ts';

beforeAll(requireBuiltHost);
afterAll(removeTempDirs);

// ---- the stream on hand-made bundles ---------------------------------------------------------------

describe('the stream of a PCM boundary (judgeCase)', () => {
  it('records inside their bounds, a delay that changes between passes: FAIL of kind audio on the last pass, naming metric, bound and passes', async () => {
    // Pass 0 exact; pass 1 delayed by two samples (its first two samples are silence).
    const { referenceDir, nativeDir } = writeDriftingDelayCase(tempDir('audio-stream'));
    const [referenceBundle_, nativeBundle] = await Promise.all([openBundle(referenceDir), openBundle(nativeDir)]);
    try {
      const judged = await judgeCase({
        caseId: 'pcm',
        reference: referenceBundle_,
        native: nativeBundle,
        oracle: null,
        description: PCM_DESCRIPTION,
        ledger: [],
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      // Each record on its own: exact, or delayed by 2 with nothing left after alignment.
      expect(judged.verdicts.map((row) => row.reference?.audio?.passed)).toEqual([true, true]);
      expect(judged.verdicts[1]?.reference?.audio?.metrics).toMatchObject({ nullOffset: 2, nullResidualDbfs: Number.NEGATIVE_INFINITY });
      // The stream: no single offset nulls both halves.
      expect(judged.audio).toHaveLength(1);
      const stream = judged.audio[0];
      expect(stream).toMatchObject({ boundary: 'detok.pcm', passes: [0, 1], passRange: '0-1', samples: 2 * FRAME, passed: false, verdictPass: 1 });
      expect(stream?.violations.map((violation) => violation.bound)).toEqual(['max_null_residual_dbfs']);
      expect(judged.verdicts[0]).toMatchObject({ verdict: 'PASS' });
      expect(judged.verdicts[1]).toMatchObject({ verdict: 'FAIL', kind: 'audio', pass: 1, boundary: 'detok.pcm' });
      expect(judged.verdicts[1]?.reason).toMatch(
        /^audio stream of detok\.pcm over passes 0-1 \(3840 samples\): null-test residual -\d+(\.\d+)? dBFS exceeds max_null_residual_dbfs -60 /,
      );
      expect(judged.counts).toMatchObject({ PASS: 1, FAIL: 1 });
    } finally {
      await Promise.all([referenceBundle_.close(), nativeBundle.close()]);
    }
  });
});

// ---- end to end: the reference engine on a bounded copy of the speech case ---------------------------

async function gateSpeech(label: string, engineOptions: Record<string, string>): Promise<GateResult> {
  const root = tempDir(label);
  const referenceDir = await boundedSpeechCopy(root);
  return runGate(
    gateOptions({ library: REFERENCE_ENGINE, cases: [{ referenceDir, oracleDir: oracleBundle('speech') }], workDir: join(root, 'work'), engineOptions }),
  );
}

const pcmRows = (result: GateResult): BoundaryVerdict[] => result.cases.flatMap((item) => item.verdicts).filter((row) => row.boundary === 'detok.pcm');

/** The speech case's bounded PCM records, read from the committed manifest (not from the gate). */
const SPEECH_PCM = (() => {
  const manifest = JSON.parse(readFileSync(join(referenceBundle('speech'), 'manifest.json'), 'utf8')) as BundleManifest;
  const records = manifest.passes.flatMap((pass) =>
    pass.boundaries
      .filter((boundary) => boundary.name === 'detok.pcm' && boundary.contract?.kind === 'faithful')
      .map((boundary) => ({ pass: pass.index, samples: boundary.valid?.length ?? (boundary.shape[0] as number) })),
  );
  // Runs of consecutive passes, "a-b" (or "a" alone), joined by ", ".
  const runs: [number, number][] = [];
  for (const { pass } of records) {
    const run = runs.at(-1);
    if (run !== undefined && run[1] === pass - 1) run[1] = pass;
    else runs.push([pass, pass]);
  }
  return {
    records,
    samples: records.reduce((sum, record) => sum + record.samples, 0),
    passRange: runs.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', '),
  };
})();
const STREAM_PASSES = SPEECH_PCM.passRange;
const STREAM_SAMPLES = SPEECH_PCM.samples;
const FIRST_PCM_PASS = SPEECH_PCM.records[0]?.pass ?? -1;
const LAST_PCM_PASS = SPEECH_PCM.records.at(-1)?.pass ?? -1;

it('the expected stream follows from the committed speech manifest', () => {
  // Decoded frames only (frames with an EOA code are not detokenized), so the stream has gaps:
  // the text run and the refused frames; the first decoded frame emits 1440 samples, each later one 1920.
  expect(SPEECH_PCM.records.length).toBeGreaterThanOrEqual(8);
  expect(SPEECH_PCM.passRange.split(', ').length).toBeGreaterThanOrEqual(2);
  expect(SPEECH_PCM.records[0]?.samples).toBe(1440);
  expect(SPEECH_PCM.records.slice(1).every((record) => record.samples === 1920)).toBe(true);
  expect(STREAM_SAMPLES).toBe(1440 + 1920 * (SPEECH_PCM.records.length - 1));
});

describe('the gate on a copy of the speech case with audio bounds', () => {
  it('the clean reference engine is inside every bound: PASS, FIDELITY OK, the metrics in every report', async () => {
    const result = await gateSpeech('audio-clean', {});
    expect(result.seals.lines.slice(0, 2)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    const rows = pcmRows(result);
    expect(rows).toHaveLength(SPEECH_PCM.records.length);
    expect(rows.every((row) => row.verdict === 'PASS' && row.reference?.audio?.passed === true && row.reference.audio.bounds.max_null_offset === 0)).toBe(true);
    const stream = result.cases[0]?.audio ?? [];
    expect(stream).toHaveLength(1);
    expect(stream[0]).toMatchObject({ boundary: 'detok.pcm', passRange: STREAM_PASSES, samples: STREAM_SAMPLES, passed: true, violations: [] });
    expect(formatHumanReport(result)).toMatch(
      new RegExp(`^audio {4}speech detok\\.pcm passes ${STREAM_PASSES} \\(${STREAM_SAMPLES} samples\\): PASS — ESR `, 'm'),
    );
    const predicate = gateReceiptPredicate(result) as { cases: { audio: { passes: string; passed: boolean }[] }[] };
    expect(predicate.cases[0]?.audio).toMatchObject([{ passes: STREAM_PASSES, passed: true }]);
    expect(JSON.parse(serializeGateResult(result)).cases[0].audio[0].bounds.max_mr_stft).toBeNull();
  });

  it('the envelope-skip perturbation breaks the audio bounds: FAIL of kind audio at detok.pcm naming metric, value, bound and passes', async () => {
    const result = await gateSpeech('audio-envelope', { 'perturb.skip_envelope_division': '1' });
    expect(result.seals.lines.slice(0, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    const stream = result.cases[0]?.audio[0];
    expect(stream).toMatchObject({ boundary: 'detok.pcm', passRange: STREAM_PASSES, passed: false, verdictPass: LAST_PCM_PASS });
    expect(stream?.violations.map((violation) => violation.bound)).toEqual(expect.arrayContaining(['max_esr', 'min_snr_db', 'max_null_residual_dbfs']));
    // Every record is off by the missing division (about 1.5x): elements fail by degree and the
    // signal breaks its audio bounds, so each row is kind audio; the last also carries the stream.
    const rows = pcmRows(result);
    expect(rows.map((row) => `${row.verdict} ${row.kind}`)).toEqual(new Array(SPEECH_PCM.records.length).fill('FAIL audio'));
    const last = rows.find((row) => row.pass === LAST_PCM_PASS);
    expect(last?.reason).toMatch(
      new RegExp(
        `; and the audio stream of detok\\.pcm over passes ${STREAM_PASSES} \\(${STREAM_SAMPLES} samples\\): ESR \\S+ exceeds max_esr \\S+; SNR \\S+ dB is below min_snr_db`,
      ),
    );
    const first = rows.find((row) => row.pass === FIRST_PCM_PASS);
    expect(first?.reason).toMatch(/audio of this record \(1440 samples\): ESR \S+ exceeds max_esr/);
    const divergence = result.firstDivergence === null ? null : result.cases[0]?.verdicts[result.firstDivergence.index];
    expect(divergence).toMatchObject({ pass: FIRST_PCM_PASS, boundary: 'detok.pcm', kind: 'audio' });
  });
});

// The gate is fail-closed at the evidence end too (issue 9, part 2): each test mutates reference
// or oracle evidence the way the holes were found — in temp copies, digests kept consistent —
// and checks the mutation is caught, at the right place, with the file / tensor / pass named:
//   - a case that compares nothing fails the run, whatever the other cases did (--strict or not);
//   - pass counts (case.pass_count, reference, oracle, native run) must agree;
//   - each pass's kind and mode must agree between the reference, the oracle and the native run;
//   - every file and tensor digest of the reference and oracle is verified before the engine runs
//     (exit 2, nothing written), in the CLI, in runGate and when the app opens a reference;
//   - the reference's and oracle's padding past `valid` must keep their declared policy;
//   - a native bundle given as the reference is refused up front (gate, capture, app).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import type { BundleManifest } from '../../main/core/bundle/manifest-schema.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { gateReceiptPredicate } from '../../main/core/gate/gate-receipt.ts';
import { runGate } from '../../main/core/gate/gate-run.ts';
import type { BoundaryVerdict, GateResult } from '../../main/core/gate/gate-types.ts';
import { openReference } from '../../main/session/session-sources.ts';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import { failureOf, openSession, removeTempDirs as removeSessionTempDirs } from '../session/session-fixtures.ts';
import { REFERENCE_ENGINE, oracleBundle, referenceBundle } from '../helpers/paths.ts';
import {
  TOY_ENGINE,
  copyBundle,
  dummyWeights,
  gateOptions,
  keyFiles,
  recordingIO,
  removeTempDirs,
  tempDir,
  toyPasses,
  writeToyCase,
  type ToyCaseSpec,
} from './gate-fixtures.ts';
import { writeBundle } from '../helpers/bundle-builder.ts';
import { InputError } from '../../main/core/io/input-error.ts';

beforeAll(requireBuiltHost);
afterAll(() => {
  removeTempDirs();
  removeSessionTempDirs();
});

async function gateToys(specs: ToyCaseSpec[], over: { strict?: boolean } = {}): Promise<GateResult> {
  const root = tempDir('fc-toy');
  const cases = specs.map((spec) => {
    const toy = writeToyCase(root, spec);
    return { referenceDir: toy.referenceDir, oracleDir: toy.oracleDir };
  });
  return runGate(gateOptions({ library: TOY_ENGINE, cases, workDir: join(root, 'work'), strict: over.strict ?? false }));
}

const rows = (result: GateResult): BoundaryVerdict[] => result.cases.flatMap((item) => item.verdicts);
const passRows = (result: GateResult): BoundaryVerdict[] => rows(result).filter((row) => row.boundary === '(pass)');

function editManifest(dir: string, edit: (manifest: BundleManifest) => void): void {
  const path = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as BundleManifest;
  edit(manifest);
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
}

describe('a case that compares nothing fails the run, whatever the other cases did', () => {
  it('a zero-pass reference gated with a good case: FIDELITY: FAIL, reason=nothing_compared, exit 1 (and the receipt says so)', async () => {
    const result = await gateToys([
      { caseId: 'good', oracle: true },
      { caseId: 'empty', oracle: true, passes: 0 },
    ]);
    expect(result.cases.map((item) => [item.id, item.compared])).toEqual([
      ['good', 9],
      ['empty', 0],
    ]);
    expect(result.seals.lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=nothing_compared']);
    expect(result.seals.exitCode).toBe(1);
    expect(gateReceiptPredicate(result)).toMatchObject({ fidelity: 'FAIL', overall: 'FAIL', reason: 'nothing_compared', emptyCases: ['empty'] });
  });

  it('the same with --strict', async () => {
    const result = await gateToys(
      [
        { caseId: 'good', oracle: true },
        { caseId: 'empty', oracle: true, passes: 0 },
      ],
      { strict: true },
    );
    expect(result.seals.lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=nothing_compared']);
  });
});

describe('pass counts must agree: case.pass_count, the reference, the oracle, the native run', () => {
  it('a reference missing its last pass while the oracle has them all: FAIL (pass) at the first missing pass, naming each count', async () => {
    const result = await gateToys([{ oracle: true, editReference: (passes) => void passes.pop() }]);
    const [row, ...others] = passRows(result);
    expect(others).toEqual([]);
    expect(row).toMatchObject({ pass: 2, verdict: 'FAIL', kind: 'pass', inReference: false });
    expect(row?.reason).toContain('the reference has 2');
    expect(row?.reason).toContain('the oracle has 3');
    expect(row?.reason).toContain('the native run has 2');
    expect(result.seals.lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
  });

  it('a reference cut down to pass 0: FAIL at pass 1', async () => {
    const result = await gateToys([{ oracle: true, editReference: (passes) => void passes.splice(1) }]);
    expect(passRows(result).map((row) => [row.pass, row.verdict])).toEqual([[1, 'FAIL']]);
    expect(result.seals.exitCode).toBe(1);
  });

  it('a stated case.pass_count: kept when every side agrees, FAIL naming the manifest when it disagrees', async () => {
    const agreed = await gateToys([{ oracle: true, referencePassCount: 3, oraclePassCount: 3 }]);
    expect(agreed.seals.lines).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);

    const stated = await gateToys([{ oracle: true, referencePassCount: 4 }]);
    const row = passRows(stated)[0];
    expect(row).toMatchObject({ pass: 3, verdict: 'FAIL', kind: 'pass' });
    expect(row?.reason).toMatch(/the reference's case\.pass_count \(.*manifest\.json\) says 4/);
    expect(stated.seals.exitCode).toBe(1);

    // Reference and oracle each consistent with themselves, but not with each other.
    const both = await gateToys([{ oracle: true, referencePassCount: 2, oraclePassCount: 3, editReference: (passes) => void passes.pop() }]);
    expect(passRows(both)[0]?.reason).toContain("the oracle's case.pass_count");
    expect(both.seals.exitCode).toBe(1);
  });

  it('a native run that ends before the reference, without a crash: FAIL naming the native count; a crash is judged as one instead', async () => {
    const root = tempDir('fc-native-count');
    const toy = writeToyCase(root, { oracle: true });
    const weights = dummyWeights(root);
    const nativeDir = writeBundle(join(root, 'native'), {
      kind: 'native',
      caseId: 'toy',
      weightsFile: weights.file,
      weightsSha256: weights.sha256,
      inputs: [],
      passes: toyPasses({ passes: 2 }),
    });
    const host = await EngineHost.start({ library: TOY_ENGINE, isolation: 'process' });
    const description = host.description;
    await host.close();
    const [reference, native, oracle] = await Promise.all([openBundle(toy.referenceDir), openBundle(nativeDir), openBundle(toy.oracleDir as string)]);
    try {
      const judge = (stop: { pass: number; description: string } | null) =>
        judgeCase({ caseId: 'toy', reference, native, oracle, description, ledger: [], stop, nativeUnreadable: null, contracts: {} });
      const ended = await judge(null);
      const row = ended.verdicts.find((verdict) => verdict.boundary === '(pass)');
      expect(row).toMatchObject({ pass: 2, verdict: 'FAIL', kind: 'pass' });
      expect(row?.reason).toContain('the native run has 2');
      const crashed = await judge({ pass: 2, description: 'the engine crashed in pass 2' });
      expect(crashed.verdicts.some((verdict) => verdict.boundary === '(pass)')).toBe(false);
      expect(crashed.verdicts.filter((verdict) => verdict.pass === 2).every((verdict) => verdict.verdict === 'FAIL' && verdict.kind === 'missing')).toBe(true);
    } finally {
      await Promise.all([reference.close(), native.close(), oracle.close()]);
    }
  });
});

describe("each pass's kind and mode must agree with what the native run reports", () => {
  it('a reference pass relabelled from text to audio: FAIL (pass) of that pass, naming both labels', async () => {
    const result = await gateToys([{ oracle: true, editReference: (passes) => void ((passes[2] as { mode: string }).mode = 'audio') }]);
    const row = passRows(result)[0];
    expect(row).toMatchObject({ pass: 2, verdict: 'FAIL', kind: 'pass' });
    expect(row?.reason).toContain('the reference says decode/audio');
    expect(row?.reason).toContain('the native run reports decode/text');
    expect(result.seals.exitCode).toBe(1);
  });

  it('an oracle pass labelled differently from the reference: FAIL naming the oracle', async () => {
    const result = await gateToys([{ oracle: true, editOracle: (passes) => void ((passes[1] as { mode: string }).mode = 'audio') }]);
    const row = passRows(result)[0];
    expect(row).toMatchObject({ pass: 1, verdict: 'FAIL', kind: 'pass' });
    expect(row?.reason).toContain('the oracle says decode/audio');
  });
});

describe('every reference and oracle digest is verified before the engine runs', () => {
  it('a wrong per-tensor sha256 in the reference or the oracle: InputError naming the file and the tensor, no work folder', async () => {
    for (const side of ['reference', 'oracle'] as const) {
      const root = tempDir(`fc-digest-${side}`);
      const toy = writeToyCase(root, { oracle: true });
      editManifest(side === 'reference' ? toy.referenceDir : (toy.oracleDir as string), (manifest) => {
        (manifest.passes[1]?.boundaries[1] as { sha256: string }).sha256 = 'f'.repeat(64);
      });
      const work = join(root, 'work');
      const failure = await runGate(
        gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: toy.oracleDir }], workDir: work }),
      ).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InputError);
      expect((failure as Error).message).toContain('pass-001.safetensors');
      expect((failure as Error).message).toContain('passes[1].boundaries[1].sha256');
      expect((failure as Error).message).toContain('tensor "toy.mix"');
      expect(existsSync(work)).toBe(false);
    }
  });

  it('capture of a reference with a wrong per-tensor sha256: exit 2 naming the tensor, before any engine runs or anything is written', async () => {
    const root = tempDir('fc-digest-capture');
    const toy = writeToyCase(root);
    editManifest(toy.referenceDir, (manifest) => {
      (manifest.inputs[0] as { sha256: string }).sha256 = 'a'.repeat(64);
    });
    const out = join(root, 'out');
    const io = recordingIO(root);
    const code = await runCli(['capture', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--out', out], io);
    expect(code).toBe(2);
    expect(io.err.join('')).toContain('inputs[0].sha256: tensor "prompt_tokens"');
    expect(io.err.join('')).not.toContain('capture: engine');
    expect(existsSync(out)).toBe(false);
  });

  it('speech with a wrong detok.pcm sha256 (digests of the files kept consistent): --gate exits 2 naming file and tensor, writes nothing', async () => {
    const root = tempDir('fc-speech');
    const referenceDir = await copyBundle(referenceBundle('speech'), join(root, 'speech', 'reference'));
    await copyBundle(oracleBundle('speech'), join(root, 'speech', 'oracle-f64'));
    let where = '';
    editManifest(referenceDir, (manifest) => {
      const pass = manifest.passes.findLast((candidate) =>
        candidate.boundaries.some((boundary) => boundary.name === 'detok.pcm'),
      ) as BundleManifest['passes'][number];
      const index = pass.boundaries.findIndex((boundary) => boundary.name === 'detok.pcm');
      (pass.boundaries[index] as { sha256: string }).sha256 = '0'.repeat(64);
      where = `passes[${pass.index}].boundaries[${index}].sha256`;
    });
    const keys = keyFiles(root);
    const work = join(root, 'work');
    const receipt = join(root, 'receipt.dsse.json');
    const io = recordingIO(root);
    const code = await runCli(
      ['--gate', '--engine', REFERENCE_ENGINE, '--bundle', referenceDir, '--work', work, '--receipt', receipt, '--key', keys.privateKeyPath],
      io,
    );
    const stderr = io.err.join('');
    expect(code).toBe(2);
    expect(stderr).toContain(where);
    expect(stderr).toContain('tensor "detok.pcm"');
    expect(stderr).not.toContain('internal error');
    expect(io.out.join('')).not.toContain('OVERALL');
    expect(existsSync(work)).toBe(false);
    expect(existsSync(receipt)).toBe(false);

    // The app's open of the same reference refuses it the same way, naming the tensor.
    const opened = await openReference(join(root, 'speech')).catch((error: unknown) => error);
    expect(opened).toBeInstanceOf(BundleError);
    expect((opened as BundleError).code).toBe('E_DIGEST');
    expect((opened as BundleError).field).toBe(where);
  }, 120_000);
});

describe('the app verifies a reference in full when it opens it', () => {
  it('a wrong per-tensor sha256: the open fails naming the file, field and tensor; the session keeps what it had', async () => {
    const root = tempDir('fc-session-digest');
    const good = writeToyCase(join(root, 'good'), { oracle: true });
    const bad = writeToyCase(join(root, 'bad'), { oracle: true });
    editManifest(bad.referenceDir, (manifest) => {
      (manifest.passes[2]?.boundaries[2] as { sha256: string }).sha256 = '1'.repeat(64);
    });
    const t = openSession('fc-session-digest');
    try {
      await t.call('openBundle', { dir: good.referenceDir });
      const failure = await failureOf(t.call('openBundle', { dir: bad.referenceDir }));
      expect(failure.code).toBe('E_BUNDLE');
      expect(failure.message).toContain(join(bad.referenceDir, 'pass-002.safetensors'));
      expect(failure.message).toContain('passes[2].boundaries[2].sha256');
      expect(failure.message).toContain('tensor "toy.token"');
      const after = await t.call('getSession', {});
      expect(after.bundle?.dir).toBe(good.referenceDir);
      expect(after.errors.at(-1)?.action).toBe('open bundle');
    } finally {
      await t.session.close();
    }
  });
});

describe("the reference's own padding past `valid` keeps its declared policy", () => {
  const nonZeroPadding: ToyCaseSpec['editReference'] = (passes) => {
    for (const pass of passes) {
      const embed = pass.boundaries.find((boundary) => boundary.name === 'toy.embed');
      if (embed !== undefined) embed.valid = { axis: 1, length: 2, padding: 'zero' };
    }
  };

  it('padding "zero" holding non-zero values, in the reference or the oracle: refused before the run (E_PADDING naming the boundary and the element)', async () => {
    for (const side of ['reference', 'oracle'] as const) {
      const root = tempDir(`fc-padding-${side}`);
      const toy = writeToyCase(root, { oracle: true, ...(side === 'reference' ? { editReference: nonZeroPadding } : { editOracle: nonZeroPadding }) });
      const work = join(root, 'work');
      const failure = await runGate(
        gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: toy.oracleDir }], workDir: work }),
      ).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InputError);
      const message = (failure as Error).message;
      expect(message).toContain('passes[0].boundaries[0].valid');
      expect(message).toContain('boundary "toy.embed" of pass 0: element [0, 2]');
      expect(message).toContain('padding "zero"');
      expect(existsSync(work)).toBe(false);
    }
  });

  it('a committed reference (speech, its first detok.pcm, valid shorter than the tensor) with one padding sample set: E_PADDING; -0.0 is zero', async () => {
    const root = tempDir('fc-padding-speech');
    // The first pass whose detok.pcm has padding past its valid length, read from the manifest.
    const manifest = JSON.parse(readFileSync(join(referenceBundle('speech'), 'manifest.json'), 'utf8')) as BundleManifest;
    const spot = manifest.passes
      .map((pass) => ({ pass: pass.index, pcm: pass.boundaries.find((boundary) => boundary.name === 'detok.pcm') }))
      .find(({ pcm }) => pcm?.valid != null && pcm.valid.length < (pcm.shape[0] ?? 0));
    if (spot?.pcm?.valid == null) throw new Error('speech has no padded detok.pcm');
    const { pass: padPass } = spot;
    const validLength = spot.pcm.valid.length;
    const at = validLength + 60;
    const setSample =
      (value: number) =>
      (pass: number, boundary: string, data: Uint8Array): Uint8Array | null => {
        if (pass !== padPass || boundary !== 'detok.pcm') return null;
        const copy = data.slice();
        new DataView(copy.buffer).setFloat32(at * 4, value, true);
        return copy;
      };
    const broken = await copyBundle(referenceBundle('speech'), join(root, 'broken'), setSample(0.25));
    const failure = await openBundle(broken, { checkPadding: true }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BundleError);
    expect((failure as BundleError).code).toBe('E_PADDING');
    expect((failure as BundleError).message).toContain(
      `boundary "detok.pcm" of pass ${padPass}: element [${at}] is 0.25, past the valid length ${validLength} on axis 0`,
    );

    const negativeZero = await copyBundle(referenceBundle('speech'), join(root, 'negative-zero'), setSample(-0));
    const bundle = await openBundle(negativeZero, { checkPadding: true });
    await bundle.close();

    // The same broken reference through the app's open, and through capture (exit 2, nothing written).
    const opened = await openReference(broken).catch((error: unknown) => error);
    expect((opened as BundleError).code).toBe('E_PADDING');
    const out = join(root, 'out');
    const io = recordingIO(root);
    expect(await runCli(['capture', '--engine', REFERENCE_ENGINE, '--bundle', broken, '--out', out], io)).toBe(2);
    expect(io.err.join('')).toContain(`boundary "detok.pcm" of pass ${padPass}: element [${at}]`);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

describe('a native bundle given as the reference: refused up front by gate and capture unless contracts are supplied', () => {
  function nativeToy(root: string): string {
    const weights = dummyWeights(root);
    return writeBundle(join(root, 'native'), {
      kind: 'native',
      caseId: 'toy',
      weightsFile: weights.file,
      weightsSha256: weights.sha256,
      inputs: [{ name: 'prompt_tokens', dtype: 'I32', shape: [3], data: new Uint8Array(Int32Array.from([1, 2, 3]).buffer) }],
      passes: toyPasses(),
    });
  }
  const refusal = /manifest\.json: kind: is "native", expected "reference": a native bundle .* cannot be a reference until contracts are supplied/;

  it('--gate: exit 2 naming the manifest and `kind`, nothing written', async () => {
    const root = tempDir('fc-native-gate');
    const nativeDir = nativeToy(root);
    const keys = keyFiles(root);
    const work = join(root, 'work');
    const io = recordingIO(root);
    const code = await runCli(['--gate', '--engine', TOY_ENGINE, '--bundle', nativeDir, '--work', work, '--key', keys.privateKeyPath], io);
    expect(code).toBe(2);
    expect(io.err.join('')).toMatch(refusal);
    expect(existsSync(work)).toBe(false);
  });

  it('capture: exit 2 before anything is written', async () => {
    const root = tempDir('fc-native-capture');
    const nativeDir = nativeToy(root);
    const out = join(root, 'out');
    const io = recordingIO(root);
    const code = await runCli(['capture', '--engine', TOY_ENGINE, '--bundle', nativeDir, '--out', out], io);
    expect(code).toBe(2);
    expect(io.err.join('')).toMatch(refusal);
    expect(existsSync(out)).toBe(false);
  });

  it("the app's open reference: taken as compare takes it, under the default contract the session states (not silently contract-less)", async () => {
    // The app's two-bundle session follows compare: a native reference is judged bit_exact by
    // default (--contract bit_exact), and the session says so; gate and capture (above) need it asked for.
    const root = tempDir('fc-native-session');
    const opened = await openReference(nativeToy(root));
    try {
      expect(opened.contracts.kind).toBe('default');
      expect(opened.contracts.description).toMatch(/bit_exact for every boundary the native reference declares no contract for/);
      for (const pass of opened.bundle.passes) for (const entry of pass.boundaries) expect(entry.contract?.kind, entry.name).toBe('bit_exact');
    } finally {
      await Promise.all([opened.raw.close(), opened.rawOracle?.close()]);
    }
  });
});

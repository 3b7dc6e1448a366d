// runGate end to end on the toy engines of engine/testlibs: each test feeds one deliberate error
// (a changed reference value, a perturbed engine, an oracle that disagrees, a ledger entry, an
// undeclared or extra boundary, a wrong dtype or shape, a crash) and checks that the gate catches
// it at the right (pass, boundary), with the right verdict, kind and seals.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDescription } from '../../main/engine-host/engine-description.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { runGate } from '../../main/core/gate/gate-run.ts';
import type { BoundaryVerdict, GateResult } from '../../main/core/gate/gate-types.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import {
  SEGV_ENGINE,
  TOY_ENGINE,
  bitExact,
  dummyWeights,
  gateOptions,
  removeTempDirs,
  setF32,
  tempDir,
  testlib,
  toyPasses,
  writeToyCase,
  type ToyCaseSpec,
} from './gate-fixtures.ts';
import { writeBundle } from '../helpers/bundle-builder.ts';
import { InputError } from '../../main/core/io/input-error.ts';

beforeAll(requireBuiltHost);
afterAll(removeTempDirs);

async function gateToy(
  spec: ToyCaseSpec & { library?: string; strict?: boolean; engineOptions?: Record<string, string>; ledgerFile?: string | null } = {},
): Promise<GateResult> {
  const root = tempDir('toy');
  const toy = writeToyCase(root, spec);
  return runGate(
    gateOptions({
      library: spec.library ?? TOY_ENGINE,
      cases: [{ referenceDir: toy.referenceDir, oracleDir: toy.oracleDir }],
      workDir: join(root, 'work'),
      strict: spec.strict ?? false,
      engineOptions: spec.engineOptions ?? {},
      ledgerFile: spec.ledgerFile ?? null,
    }),
  );
}

const rows = (result: GateResult): BoundaryVerdict[] => result.cases.flatMap((item) => item.verdicts);
const at = (result: GateResult, pass: number, boundary: string): BoundaryVerdict => {
  const found = rows(result).find((row) => row.pass === pass && row.boundary === boundary);
  if (found === undefined) throw new Error(`no row pass ${pass} ${boundary}`);
  return found;
};
const notPassing = (result: GateResult): string[] =>
  rows(result)
    .filter((row) => row.verdict !== 'PASS')
    .map((row) => `${row.verdict} ${row.pass} ${row.boundary}`);
const firstDivergence = (result: GateResult): BoundaryVerdict | null => {
  const ref = result.firstDivergence;
  return ref === null ? null : (result.cases.find((item) => item.id === ref.case)?.verdicts[ref.index] ?? null);
};

describe('clean runs', () => {
  it('every boundary compared against reference and oracle and passing: FIDELITY: OK, OVERALL: PASSED', async () => {
    const result = await gateToy({ oracle: true });
    expect(result.seals.lines).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(result.seals.exitCode).toBe(0);
    expect(result.counts.PASS).toBe(9);
    expect(result.compared).toBe(9);
    expect(rows(result).every((row) => row.oracleSide === 'compared' && row.oracle?.passed)).toBe(true);
    expect(
      rows(result)
        .map((row) => `${row.pass} ${row.boundary}`)
        .slice(0, 3),
    ).toEqual(['0 toy.embed', '0 toy.mix', '0 toy.token']);
    expect(result.cases[0]?.run.outcome.status).toBe('completed');
    expect(result.engine.catalogue).toEqual(['toy.embed', 'toy.mix', 'toy.token']);
  });

  it('without an oracle: GAP oracle_absent:<case>, INCOMPLETE / PASSED_WITH_GAPS, exit 0', async () => {
    const result = await gateToy();
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: oracle_absent:toy']);
    expect(result.seals.exitCode).toBe(0);
    expect(result.counts.PASS).toBe(9);
  });

  it('--strict turns the same gap into OVERALL: FAIL reason=strict_gaps, exit 1', async () => {
    const result = await gateToy({ strict: true });
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=strict_gaps', 'GAP: oracle_absent:toy']);
    expect(result.seals.exitCode).toBe(1);
  });
});

describe('teacher forcing and layer isolation are passed through to the capture', () => {
  it('records what the capture forced and where the isolated bundle went', async () => {
    const root = tempDir('toy-forced');
    const toy = writeToyCase(root, { oracle: true });
    const result = await runGate(
      gateOptions({
        library: TOY_ENGINE,
        cases: [{ referenceDir: toy.referenceDir, oracleDir: toy.oracleDir }],
        workDir: join(root, 'work'),
        teacherForce: true,
        isolate: true,
      }),
    );
    expect(result.options).toMatchObject({ teacherForce: true, isolate: true });
    expect(result.cases[0]?.teacherForcing?.boundaries).toContain('toy.token');
    expect(result.cases[0]?.isolatedDir).toBe(join(root, 'work', 'toy', 'native-isolated'));
    expect(existsSync(join(root, 'work', 'toy', 'native-isolated', 'manifest.json'))).toBe(true);
    expect(result.seals.lines).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
  });
});

describe('failures are caught where they first show', () => {
  it('an engine perturbation (perturb.flip_sign) fails first at pass 0 / toy.mix, kind value', async () => {
    const result = await gateToy({ oracle: true, engineOptions: { 'perturb.flip_sign': '1' } });
    const first = firstDivergence(result);
    expect(first).toMatchObject({ pass: 0, boundary: 'toy.mix', verdict: 'FAIL', kind: 'value' });
    expect(at(result, 0, 'toy.embed').verdict).toBe('PASS');
    expect(result.seals.lines.slice(0, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    expect(result.seals.exitCode).toBe(1);
  });

  it('one changed reference value fails exactly that boundary, with where / how much / what kind', async () => {
    const edit = (passes: ReturnType<typeof toyPasses>): void => setF32(passes, 1, 'toy.mix', 2, 1000);
    const result = await gateToy({ oracle: true, editReference: edit, editOracle: edit });
    expect(notPassing(result)).toEqual(['FAIL 1 toy.mix']);
    const row = at(result, 1, 'toy.mix');
    expect(row.kind).toBe('value');
    expect(row.reference?.mismatches).toBe(1);
    expect(row.reference?.firstMismatch?.index).toEqual([0, 2]);
    expect(row.reference?.firstMismatch?.reference).toBe(1000);
    expect(row.reason).toContain('1/4 elements');
    expect(firstDivergence(result)).toBe(row);
  });

  it('a reference dtype or shape that disagrees with the catalogue is refused before anything runs, naming both', async () => {
    const edit = (passes: ReturnType<typeof toyPasses>): void => {
      const token = passes[1]?.boundaries.find((boundary) => boundary.name === 'toy.token');
      if (token) token.dtype = 'U32';
      const embed = passes[2]?.boundaries.find((boundary) => boundary.name === 'toy.embed');
      if (embed) embed.shape = [2, 2];
    };
    const error = await gateToy({ oracle: true, editReference: edit, editOracle: edit }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InputError);
    const message = (error as Error).message;
    expect(message).toMatch(/the reference \S+manifest\.json and the engine's catalogue \(\S+libtoy_engine\.so\) disagree on 2 boundaries; nothing was run/);
    expect(message).toContain('"toy.token" (first in pass 1): the reference records U32 [1], the catalogue declares I32 [1]');
    expect(message).toContain('"toy.embed" (first in pass 2): the reference records F32 [2, 2], the catalogue declares F32 [T, 4]');
  });

  it('an oracle stored as F64 where the reference declares F32 is refused up front, saying why', async () => {
    const error = await gateToy({
      oracle: true,
      editOracle: (passes) => {
        // The float64 values, kept as float64: what a user storing the oracle unrounded writes.
        const mix = passes[1]?.boundaries.find((boundary) => boundary.name === 'toy.mix');
        if (mix === undefined) throw new Error('test fixture: no toy.mix in pass 1');
        const singles = new Float32Array(mix.data.slice().buffer);
        mix.data = new Uint8Array(Float64Array.from(singles).buffer);
        mix.dtype = 'F64';
      },
    }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InputError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /oracle \S+manifest\.json does not store its boundaries as the reference \S+ does \(1 boundary records\); an oracle stores each boundary in the dtype the reference/,
    );
    expect(message).toContain('pass 1 "toy.mix": the oracle stores F64 [1, 4], the reference declares F32 [1, 4]');
  });
});

describe('two oracles', () => {
  it('native passes the reference and fails the fp64 oracle: REVIEW_REQUIRED, never green', async () => {
    const result = await gateToy({ oracle: true, editOracle: (passes) => setF32(passes, 2, 'toy.embed', 1, 42) });
    expect(notPassing(result)).toEqual(['REVIEW_REQUIRED 2 toy.embed']);
    expect(at(result, 2, 'toy.embed').reason).toContain("fails the fp64 oracle's");
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required']);
    expect(result.seals.exitCode).toBe(1);
    expect(firstDivergence(result)?.boundary).toBe('toy.embed');
  });

  it('native fails the reference and passes the fp64 oracle: REVIEW_REQUIRED', async () => {
    const result = await gateToy({ oracle: true, editReference: (passes) => setF32(passes, 0, 'toy.mix', 5, -3) });
    expect(notPassing(result)).toEqual(['REVIEW_REQUIRED 0 toy.mix']);
    expect(at(result, 0, 'toy.mix').reason).toContain("fails the reference's");
  });
});

describe('the known-gap ledger', () => {
  const knownMix = [{ id: 'KG-TOY-MIX', boundary: 'toy.mix', passes: [1], reason: 'mix is wrong in pass 1', reopen_evidence: 'pass 1 mix inside contract' }];

  it('a declared gap that still fails is KNOWN_GAP: reported, INCOMPLETE / PASSED_WITH_GAPS', async () => {
    const edit = (passes: ReturnType<typeof toyPasses>): void => setF32(passes, 1, 'toy.mix', 0, 77);
    const result = await gateToy({ oracle: true, editReference: edit, editOracle: edit, knownGaps: knownMix });
    expect(notPassing(result)).toEqual(['KNOWN_GAP 1 toy.mix']);
    expect(at(result, 1, 'toy.mix')).toMatchObject({ ledgerId: 'KG-TOY-MIX', gapId: 'known_gap:KG-TOY-MIX', kind: 'value' });
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: known_gap:KG-TOY-MIX']);
    expect(result.firstDivergence).toBeNull();
  });

  it('a declared gap that now passes turns REVIEW_REQUIRED (from known-gaps.json beside the bundle)', async () => {
    const root = tempDir('toy-ledger-file');
    const toy = writeToyCase(root, { oracle: true });
    writeFileSync(join(toy.caseDir, 'known-gaps.json'), JSON.stringify({ schema: 'trace-inspector.known-gaps', schema_version: 1, known_gaps: knownMix }));
    const result = await runGate(
      gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: toy.oracleDir }], workDir: join(root, 'work') }),
    );
    expect(notPassing(result)).toEqual(['REVIEW_REQUIRED 1 toy.mix']);
    expect(at(result, 1, 'toy.mix').reason).toContain('KG-TOY-MIX now passes');
    expect(result.seals.lines.slice(0, 2)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required']);
  });

  it('a ledger entry naming a boundary no reference has stops the gate before the engine runs', async () => {
    const root = tempDir('toy-ledger-typo');
    const toy = writeToyCase(root, { oracle: true });
    const ledger = join(root, 'policy.json');
    writeFileSync(ledger, JSON.stringify({ schema: 'trace-inspector.known-gaps', schema_version: 1, known_gaps: [{ ...knownMix[0], boundary: 'toy.mixer' }] }));
    const work = join(root, 'work');
    const error = await runGate(
      gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: null }], workDir: work, ledgerFile: ledger }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toContain(ledger);
    expect((error as Error).message).toContain('KG-TOY-MIX');
    expect(existsSync(work)).toBe(false);
  });
});

describe('gaps', () => {
  it('a reference boundary the engine does not declare is GAP not_in_catalogue:<boundary>', async () => {
    const result = await gateToy({
      oracle: true,
      editReference: (passes) =>
        passes[1]?.boundaries.splice(1, 0, { name: 'toy.secret', stage: 'toy', dtype: 'I32', shape: [1], data: new Uint8Array(4), contract: bitExact }),
    });
    expect(notPassing(result)).toEqual(['GAP 1 toy.secret']);
    expect(at(result, 1, 'toy.secret').gapId).toBe('not_in_catalogue:toy.secret');
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: not_in_catalogue:toy.secret']);
  });

  it('a native record the reference lacks is GAP not_in_reference:<case>:<boundary>', async () => {
    const drop = (passes: ReturnType<typeof toyPasses>): void => void passes[2]?.boundaries.pop();
    const result = await gateToy({ oracle: true, editReference: drop, editOracle: drop });
    expect(notPassing(result)).toEqual(['GAP 2 toy.token']);
    expect(at(result, 2, 'toy.token')).toMatchObject({ inReference: false, inNative: true, gapId: 'not_in_reference:toy:toy.token' });
  });

  it('the oracle lacking a boundary the reference has is GAP oracle_lacks:<case>:<boundary>', async () => {
    const result = await gateToy({ oracle: true, editOracle: (passes) => void passes[0]?.boundaries.shift() });
    expect(notPassing(result)).toEqual(['GAP 0 toy.embed']);
    expect(result.gaps.map((gap) => gap.id)).toEqual(['oracle_lacks:toy:toy.embed']);
  });
});

describe('nothing compared is a failure', () => {
  it('a reference with no passes', async () => {
    const result = await gateToy({ oracle: true, passes: 0 });
    expect(result.compared).toBe(0);
    expect(result.seals.lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=nothing_compared']);
    expect(result.seals.exitCode).toBe(1);
  });

  it('a reference whose boundaries the engine does not declare (all gaps)', async () => {
    const rename = (passes: ReturnType<typeof toyPasses>): void => {
      for (const pass of passes) for (const boundary of pass.boundaries) boundary.name = `other.${boundary.name}`;
    };
    const result = await gateToy({ oracle: true, editReference: rename, editOracle: rename });
    expect(result.compared).toBe(0);
    expect(result.counts.PASS).toBe(0);
    expect(result.seals.lines.slice(0, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=nothing_compared']);
  });
});

describe('a crashing engine', () => {
  it('fails the boundaries it never reached, naming the pass, the last boundary and the signal', async () => {
    const result = await gateToy({ oracle: true, library: SEGV_ENGINE });
    const item = result.cases[0];
    expect(item?.run.outcome.status).toBe('crashed');
    expect(item?.run.signal).toBe('SIGSEGV');
    // Pass 0 completed and was compared; pass 1 died after toy.mix.
    expect(at(result, 0, 'toy.token').verdict).toBe('PASS');
    expect(at(result, 1, 'toy.embed').verdict).toBe('PASS');
    expect(at(result, 1, 'toy.mix').verdict).toBe('PASS');
    const token = at(result, 1, 'toy.token');
    expect(token).toMatchObject({ verdict: 'FAIL', kind: 'missing' });
    expect(token.reason).toContain('pass 1');
    expect(token.reason).toContain('after boundary toy.mix');
    expect(token.reason).toContain('SIGSEGV');
    for (const boundary of ['toy.embed', 'toy.mix', 'toy.token']) expect(at(result, 2, boundary)).toMatchObject({ verdict: 'FAIL', kind: 'missing' });
    expect(rows(result).some((row) => row.verdict === 'GAP')).toBe(false);
    expect(firstDivergence(result)).toBe(token);
    expect(result.seals.lines).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=engine_crashed']);
  });
});

describe('invalid input stops the gate before the engine runs', () => {
  it('a reference whose tensor file changed after its manifest was written', async () => {
    const root = tempDir('toy-tampered');
    const toy = writeToyCase(root);
    const file = join(toy.referenceDir, 'pass-001.safetensors');
    const bytes = readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0x01, bytes.length - 1);
    writeFileSync(file, bytes);
    await expect(
      runGate(gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: null }], workDir: join(root, 'work') })),
    ).rejects.toThrow(/pass-001\.safetensors.*sha256/s);
  });

  it('an oracle of another case, a library that is no engine, a work folder already used', async () => {
    const root = tempDir('toy-usage');
    const toy = writeToyCase(root, { oracle: true });
    const other = writeToyCase(root, { caseId: 'other', oracle: true });
    const base = { library: TOY_ENGINE, workDir: join(root, 'work') };
    await expect(runGate(gateOptions({ ...base, cases: [{ referenceDir: toy.referenceDir, oracleDir: other.oracleDir }] }))).rejects.toThrow(/is case "other"/);
    await expect(
      runGate(gateOptions({ ...base, library: testlib('not_an_engine'), cases: [{ referenceDir: toy.referenceDir, oracleDir: null }] })),
    ).rejects.toBeInstanceOf(InputError);
    await expect(runGate(gateOptions({ ...base, cases: [{ referenceDir: toy.referenceDir, oracleDir: toy.referenceDir }] }))).rejects.toThrow(
      /expected "oracle-f64"/,
    );
    const used = join(root, 'used');
    writeBundle(join(used, 'toy', 'native'), {
      kind: 'reference',
      caseId: 'x',
      weightsFile: 'w',
      weightsSha256: dummyWeights(root).sha256,
      inputs: [],
      passes: [],
    });
    await expect(runGate(gateOptions({ ...base, workDir: used, cases: [{ referenceDir: toy.referenceDir, oracleDir: null }] }))).rejects.toThrow(/not empty/);
  });
});

// ---- judgeCase on hand-made native bundles ------------------------------------------------------

const TOY_DESCRIPTION: EngineDescription = {
  abi_version: 1,
  engine: { name: 'toy', version: '0.1.0', build_id: 'testlib' },
  model: {},
  inputs: [{ name: 'prompt_tokens', dtype: 'I32', shape: ['T'], required: true, doc: '' }],
  boundaries: [
    { name: 'toy.embed', stage: 'toy', dtype: 'F32', shape: ['T', 4], emit: 'every_pass', injectable: true, doc: '' },
    { name: 'toy.mix', stage: 'toy', dtype: 'F32', shape: ['T', 4], emit: 'every_pass', injectable: false, doc: '' },
    { name: 'toy.token', stage: 'sampler', dtype: 'I32', shape: [1], emit: 'every_pass', injectable: true, doc: '' },
  ],
  options: [],
};

describe('judgeCase', () => {
  it('a boundary the catalogue promises and native did not emit (run completed) is FAIL missing', async () => {
    const root = tempDir('judge-missing');
    const toy = writeToyCase(root);
    const passes = toyPasses();
    passes[1]?.boundaries.splice(1, 1); // no toy.mix in pass 1
    const weights = dummyWeights(root);
    const nativeDir = writeBundle(join(root, 'native'), {
      kind: 'native',
      caseId: 'toy',
      weightsFile: weights.file,
      weightsSha256: weights.sha256,
      inputs: [],
      passes,
    });
    const [reference, native] = await Promise.all([openBundle(toy.referenceDir), openBundle(nativeDir)]);
    try {
      const judged = await judgeCase({
        caseId: 'toy',
        reference,
        native,
        oracle: null,
        description: TOY_DESCRIPTION,
        ledger: [],
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      const missing = judged.verdicts.filter((row) => row.verdict !== 'PASS');
      expect(missing.map((row) => `${row.verdict} ${row.kind} ${row.pass} ${row.boundary}`)).toEqual(['FAIL missing 1 toy.mix']);
      expect(judged.compared).toBe(8);
    } finally {
      await Promise.all([reference.close(), native.close()]);
    }
  });

  it('a native tensor that no longer matches its digest is FAIL unreadable, and the case is marked unreadable', async () => {
    const root = tempDir('judge-unreadable');
    const toy = writeToyCase(root);
    const weights = dummyWeights(root);
    const nativeDir = writeBundle(join(root, 'native'), {
      kind: 'native',
      caseId: 'toy',
      weightsFile: weights.file,
      weightsSha256: weights.sha256,
      inputs: [],
      passes: toyPasses(),
    });
    const [reference, native] = await Promise.all([openBundle(toy.referenceDir), openBundle(nativeDir)]);
    try {
      const file = join(nativeDir, 'pass-002.safetensors');
      const bytes = readFileSync(file);
      bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0x40, bytes.length - 1); // the last tensor's last byte: same size, different digest
      writeFileSync(file, bytes);
      const judged = await judgeCase({
        caseId: 'toy',
        reference,
        native,
        oracle: null,
        description: TOY_DESCRIPTION,
        ledger: [],
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      const bad = judged.verdicts.filter((row) => row.verdict !== 'PASS');
      expect(bad).toHaveLength(1);
      expect(bad[0]).toMatchObject({ verdict: 'FAIL', kind: 'unreadable', pass: 2 });
      expect(judged.unreadable).toMatch(/sha256/);
    } finally {
      await Promise.all([reference.close(), native.close()]);
    }
  });
});

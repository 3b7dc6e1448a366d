// compare's own inputs on small hand-made bundles (NativeBundleWriter): the contracts file (the
// gamma(K) rule evaluated on the reference's values, bit_exact, refusals naming file and field),
// the map file (declared-unmapped and uncovered boundaries reported, never dropped; axis
// permutation and dtype widening; refusals naming file and field).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import type { CliIO } from '../../main/cli/cli-io.ts';
import type { DType } from '../../main/core/bundle/dtype.ts';
import { NativeBundleWriter, type CaptureRecord } from '../../main/core/bundle/native-bundle-writer.ts';
import { faithfulFromK } from '../../main/core/compare/contracts-file.ts';
import type { BoundaryEntry } from '../../main/core/bundle/manifest-schema.ts';
import { nativeHeader } from '../bundle/bundle-fixtures.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';
import { freshTempDir } from '../helpers/paths.ts';

const root = freshTempDir('compare-files');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const keys = (() => {
  mkdirSync(root, { recursive: true });
  return keyFiles(root);
})();
const key = keys.privateKeyPath;
let made = 0;
const fresh = (label: string): string => join(root, `${label}-${(made += 1)}`);

function record(name: string, dtype: DType, shape: number[], data: Uint8Array): CaptureRecord {
  const strides = shape.map((_, axis) => shape.slice(axis + 1).reduce((a, b) => a * b, 1));
  return { name, stage: name.split('.')[0] ?? 'x', dtype, shape, strides, data };
}
const f32 = (values: readonly number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);
const f64 = (values: readonly number[]): Uint8Array => new Uint8Array(Float64Array.from(values).buffer);
const i32 = (values: readonly number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);

/** A one-pass native bundle of `records` (case "tiny", the same inputs every time). */
function bundle(label: string, records: CaptureRecord[]): string {
  const dir = fresh(label);
  const writer = NativeBundleWriter.create(dir, nativeHeader());
  writer.beginPass(0, 'prefill');
  for (const item of records) writer.appendRecord(item);
  writer.endPass(null);
  writer.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: records.at(-1)?.name ?? null });
  return dir;
}

function writeJson(label: string, value: unknown): string {
  const path = join(root, `${label}-${(made += 1)}.json`);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

async function cliRun(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), stderrIsTTY: false, cwd: root, env: {} };
  const status = await runCli(args, io);
  return { status, stdout, stderr };
}
let lastReceipt = '';
async function compare(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  lastReceipt = join(root, `receipt-${(made += 1)}.json`);
  return cliRun(['compare', ...args, '--key', key, '--receipt', lastReceipt]);
}
const seals = (stdout: string): string[] => stdout.split('\n').filter((line) => /^(FIDELITY|OVERALL|GAP): /.test(line));

// Reference values around 1 (rms known), a float state and an integer token.
const REF = [1, -0.75, 0.5, 1.25, -1, 0.875];
const rms = Math.sqrt(REF.reduce((sum, value) => sum + value * value, 0) / REF.length);
const u = 2 ** -24;
const bound = (K: number, r: number): number => {
  const rel = (2 * K * u) / (1 - K * u);
  return rel * rms + rel * Math.abs(r);
};

describe('compare --contracts', () => {
  const reference = bundle('reference', [record('layer.h', 'F32', [6], f32(REF)), record('gen.token', 'I32', [1], i32([7]))]);
  // Each value moved by half the K = 64 bound: inside faithful_from_k 64, far outside K = 1.
  const moved = REF.map((value) => Math.fround(value + 0.5 * bound(64, value)));
  const candidate = bundle('candidate', [record('layer.h', 'F32', [6], f32(moved)), record('gen.token', 'I32', [1], i32([7]))]);

  it('judges a native reference under faithful_from_k K: rel = 2*gamma(K), abs = rel*rms(reference), from the rule of docs/choosing-k.md', async () => {
    const rules = (K: number): string =>
      writeJson('contracts', {
        schema: 'trace-inspector.contracts',
        schema_version: 1,
        rules: [
          { boundaries: 'layer.*', contract: { faithful_from_k: K } },
          { boundaries: '*', contract: 'bit_exact' },
        ],
      });
    const contracts = rules(64);
    const loose = await compare([reference, candidate, '--contracts', contracts]);
    expect(loose.stdout).toContain('all 2 boundary rows PASS');
    expect(seals(loose.stdout)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(loose.status).toBe(0);
    // The receipt pins the contracts file beside both bundles' manifests.
    const verified = await cliRun(['verify', lastReceipt, '--pubkey', keys.publicKeyPath, '--subjects', root]);
    expect(verified.stdout).toContain(`subject    ${contracts.slice(root.length + 1)}: OK`);
    expect(verified.stdout).toMatch(/subject {4}reference-\d+\/manifest\.json: OK/);
    expect(verified.stdout).toMatch(/subject {4}candidate-\d+\/manifest\.json: OK/);
    expect(verified.status).toBe(0);
    const tight = await compare([reference, candidate, '--contracts', rules(1)]);
    expect(tight.stdout).toMatch(/FAIL\s+tiny\s+0\s+layer\.h\s+value/);
    expect(tight.status).toBe(1);
    // Without a contracts file the native reference is judged bit for bit: the move fails.
    const exact = await compare([reference, candidate]);
    expect(exact.stdout).toMatch(/FAIL\s+tiny\s+0\s+layer\.h\s+value/);
    expect(exact.status).toBe(1);
  });

  it('computes the rule exactly as the kit does (storage rounding for bf16, refusals for integers and a zero reference)', () => {
    const entry = (dtype: DType): BoundaryEntry => ({
      name: 'x',
      stage: 'x',
      dtype,
      shape: [2],
      strides: [1],
      layout: 'row-major',
      key: 'x',
      sha256: 'a'.repeat(64),
      byte_length: 8,
      valid: null,
      contract: null,
    });
    const rule = { faithful_from_k: 512, reduction_order: 'unspecified', nan_policy: 'positions' as const, signed_zero: 'ignore' as const, oracle_rel: null };
    const gamma = (512 * u) / (1 - 512 * u);
    const f = faithfulFromK(rule, entry('F32'), 2);
    expect(f).toMatchObject({ kind: 'faithful', rel: 2 * gamma, abs: 2 * gamma * 2, derivation: { accumulation_length: 512, accumulation_dtype: 'F32' } });
    const b = faithfulFromK(rule, entry('BF16'), 2);
    expect(b).toMatchObject({ rel: 2 * gamma + 2 * 2 ** -8, derivation: { storage_dtype: 'BF16', accumulation_dtype: 'F32' } });
    expect(faithfulFromK(rule, entry('I32'), 2)).toMatch(/faithful_from_k applies to floating-point boundaries/);
    expect(faithfulFromK(rule, entry('F32'), 0)).toMatch(/rms\(reference\) of x is 0/);
    expect(faithfulFromK({ ...rule, scale: 0.5 }, entry('F32'), 0)).toMatchObject({ abs: 2 * gamma * 0.5 });
  });

  it.each([
    ['a negative K', { rules: [{ boundaries: '*', contract: { faithful_from_k: -3 } }] }, 'rules[0].contract.faithful_from_k'],
    ['an unknown rule word', { rules: [{ boundaries: '*', contract: 'faithful' }] }, 'rules[0].contract'],
    ['an unclosed capture', { rules: [{ boundaries: 'layer.{i', contract: 'bit_exact' }] }, 'rules[0].boundaries'],
    [
      'a full contract without its derivation',
      {
        rules: [
          { boundaries: '*', contract: { kind: 'faithful', abs: 1, rel: 1, max_ulp: null, oracle_rel: null, nan_policy: 'positions', signed_zero: 'ignore' } },
        ],
      },
      'rules[0].contract.derivation',
    ],
    ['no rules', { rules: [] }, 'rules'],
  ])('refuses a contracts file with %s: exit 2 naming the file and the field', async (_what, body, field) => {
    const file = writeJson('bad-contracts', { schema: 'trace-inspector.contracts', schema_version: 1, ...body });
    const run = await compare([reference, candidate, '--contracts', file]);
    expect(run.stderr).toContain(`${file}: ${field}:`);
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(run.status).toBe(2);
  });

  it('refuses faithful_from_k on an integer boundary, naming the rule and the boundary', async () => {
    const file = writeJson('int-contracts', {
      schema: 'trace-inspector.contracts',
      schema_version: 1,
      rules: [{ boundaries: '*', contract: { faithful_from_k: 8 } }],
    });
    const run = await compare([reference, candidate, '--contracts', file]);
    expect(run.stderr).toContain(`${file}: rules[0].contract: pass 0: matches boundary gen.token (I32)`);
    expect(run.status).toBe(2);
  });

  it('refuses a file that is not JSON, naming it', async () => {
    const file = writeJson('not-json', '{ "schema": ');
    const run = await compare([reference, candidate, '--contracts', file]);
    expect(run.stderr).toContain(`${file}: (root): the contracts file is not valid JSON`);
    expect(run.status).toBe(2);
  });
});

describe('compare --map', () => {
  // The reference stores a [2, 3] float64 matrix; the port stores it transposed, [3, 2], as float32.
  const matrix = [0.5, -1.25, 2, 3.5, -0.125, 8];
  const transposed = [0, 3, 1, 4, 2, 5].map((index) => matrix[index] as number);
  const reference = bundle('map-reference', [
    record('nam.a0.l0.out', 'F64', [2, 3], f64(matrix)),
    record('nam.a0.l1.out', 'F32', [2], f32([1, 2])),
    record('gen.token', 'I32', [1], i32([3])),
  ]);
  const candidate = bundle('map-candidate', [
    record('layers.0.out', 'F32', [3, 2], f32(transposed)),
    record('layers.1.out', 'F32', [2], f32([1, 2])),
    record('gen.token', 'I32', [1], i32([3])),
    record('debug.timing', 'U64', [1], new Uint8Array(8)),
    record('probe.extra', 'F32', [1], f32([0])),
  ]);
  const mapFile = (entries: unknown[], unmapped: unknown[] = [{ candidate: 'debug.*', reason: 'timing probes of the port; the reference has none' }]): string =>
    writeJson('map', { schema: 'trace-inspector.boundary-map', schema_version: 1, map: entries, unmapped });

  it('renames with captures, permutes and widens, and reports the declared-unmapped and the uncovered boundaries', async () => {
    const map = mapFile([
      { candidate: 'layers.0.out', reference: 'nam.a0.l0.out', permute: [1, 0], widen_to: 'F64' },
      { candidate: 'layers.{i}.out', reference: 'nam.a0.l{i}.out' },
    ]);
    const run = await compare([reference, candidate, '--map', map]);
    expect(run.stderr).not.toMatch(/internal error/);
    // Every reference row passes bit for bit; the two extra candidate boundaries are reported.
    expect(run.stdout).toContain('2 candidate boundary name(s) mapped, 1 declared unmapped, 2 kept under their own name, 1 of them unknown to the reference');
    expect(run.stdout).toContain('unmapped   debug.timing (passes 0): declared unmapped (unmapped[0]): timing probes of the port; the reference has none');
    expect(run.stdout).toContain('uncovered  probe.extra (passes 0): no map entry covers it and the reference has no boundary of that name (not compared)');
    expect(seals(run.stdout)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: not_in_reference:tiny:probe.extra']);
    expect(run.stdout).toContain('4 rows: 3 PASS, 0 FAIL, 0 REVIEW_REQUIRED, 0 KNOWN_GAP, 1 GAP; 3 compared with the reference');
    expect(run.status).toBe(0);
    // --strict: an uncovered boundary is a gap, and gaps fail.
    const strict = await compare([reference, candidate, '--map', map, '--strict']);
    expect(seals(strict.stdout).slice(0, 2)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=strict_gaps']);
    expect(strict.status).toBe(1);
  });

  it('fails the transposed tensor when the map does not permute it (the layout is judged, not assumed)', async () => {
    const map = mapFile([
      { candidate: 'layers.0.out', reference: 'nam.a0.l0.out', widen_to: 'F64' },
      { candidate: 'layers.{i}.out', reference: 'nam.a0.l{i}.out' },
    ]);
    const run = await compare([reference, candidate, '--map', map]);
    expect(run.stdout).toMatch(/FAIL\s+tiny\s+0\s+nam\.a0\.l0\.out\s+shape/);
    expect(run.status).toBe(1);
  });

  it.each([
    ['a target capture the pattern lacks', [{ candidate: 'layers.{i}.out', reference: 'nam.a0.l{j}.out' }], 'map[0].reference'],
    ['a narrowing instead of a widening', [{ candidate: 'layers.{i}.out', reference: 'nam.a0.l{i}.out', widen_to: 'F16' }], 'map[0].widen_to'],
    ['a permutation of the wrong rank', [{ candidate: 'layers.0.out', reference: 'nam.a0.l0.out', permute: [0] }], 'map[0].permute'],
    ['a permutation that repeats an axis', [{ candidate: 'layers.0.out', reference: 'nam.a0.l0.out', permute: [0, 0] }], 'map[0].permute'],
    ['two candidates onto one reference name', [{ candidate: 'layers.{i}.out', reference: 'nam.a0.l0.out' }], 'map[0].reference'],
    ['an unknown field', [{ candidate: 'layers.{i}.out', reference: 'nam.a0.l{i}.out', transpose: true }], 'map[0].transpose'],
  ])('refuses a map file with %s: exit 2 naming the file and the field', async (_what, entries, field) => {
    const file = mapFile(entries);
    const run = await compare([reference, candidate, '--map', file]);
    expect(run.stderr).toContain(`${file}: ${field}:`);
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(run.status).toBe(2);
  });

  it('refuses a bundle pair of different cases, naming the manifest and case.id', async () => {
    const dir = fresh('other-case');
    const header = nativeHeader();
    const writer = NativeBundleWriter.create(dir, { ...header, case: { id: 'other', description: 'another case' } });
    writer.beginPass(0, 'prefill');
    writer.appendRecord(record('gen.token', 'I32', [1], i32([3])));
    writer.endPass(null);
    writer.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: 'gen.token' });
    const run = await compare([reference, dir]);
    expect(run.stderr).toContain(`${join(dir, 'manifest.json')}: case.id: is "other"`);
    expect(run.status).toBe(2);
  });
});

describe('compare: the evidence is verified before anything is judged', () => {
  const records = [record('layer.h', 'F32', [6], f32(REF)), record('gen.token', 'I32', [1], i32([7]))];
  const reference = bundle('evidence-reference', records);

  it('refuses a candidate whose pass file was changed after it was written: exit 2 naming the file and the digest field, nothing judged', async () => {
    const candidate = bundle('evidence-candidate', records);
    const passFile = join(candidate, 'pass-000.safetensors');
    const bytes = readFileSync(passFile);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0x01;
    writeFileSync(passFile, bytes);
    const run = await compare([reference, candidate]);
    expect(run.stderr).toContain(`candidate bundle ${candidate} is not valid: ${passFile}: files[1].sha256: manifest.json lists sha256`);
    expect(run.stdout).not.toMatch(/FIDELITY|OVERALL/);
    expect(run.status).toBe(2);
  });

  it('refuses a candidate that read other inputs, naming the manifest and the input digest field', async () => {
    const dir = fresh('other-inputs');
    const header = nativeHeader();
    const writer = NativeBundleWriter.create(dir, {
      ...header,
      inputs: header.inputs.map((input, index) => (index === 0 ? { ...input, data: i32([1, 2, 3, 4]) } : input)),
    });
    writer.beginPass(0, 'prefill');
    for (const item of records) writer.appendRecord(item);
    writer.endPass(null);
    writer.finish({ status: 'completed', message: '', last_pass: 0, last_boundary: 'gen.token' });
    const run = await compare([reference, dir]);
    expect(run.stderr).toContain(`${join(dir, 'manifest.json')}: inputs[0].sha256: input prompt_tokens differs from the reference's`);
    expect(run.status).toBe(2);
  });

  it('judges a candidate whose run crashed as the gate judges a crashed engine, and refuses a crashed run as the reference', async () => {
    const dir = fresh('crashed');
    const writer = NativeBundleWriter.create(dir, nativeHeader());
    writer.beginPass(0, 'prefill');
    writer.appendRecord(records[0] as CaptureRecord);
    writer.endPass(null);
    writer.finish({ status: 'crashed', message: 'SIGSEGV in the port', last_pass: 0, last_boundary: 'layer.h' });
    const run = await compare([reference, dir]);
    expect(run.stdout).toMatch(/FAIL\s+tiny\s+0\s+gen\.token\s+missing/);
    expect(seals(run.stdout)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=engine_crashed']);
    expect(run.status).toBe(1);
    const backwards = await compare([dir, reference]);
    expect(backwards.stderr).toContain(`${join(dir, 'manifest.json')}: run.status: is "crashed"; a reference must be a completed run`);
    expect(backwards.status).toBe(2);
  });

  it('refuses the same bundle as both sides, and a missing folder', async () => {
    expect((await compare([reference, reference])).stderr).toContain('the reference and the candidate are the same bundle');
    const missing = join(root, 'no-such-bundle');
    const run = await compare([reference, missing]);
    expect(run.stderr).toContain(`candidate bundle ${missing}`);
    expect(run.status).toBe(2);
  });
});

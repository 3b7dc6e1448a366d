// The Python kit (python/trace_inspector) writes bundles that the TypeScript readers accept and
// decode to the values the kit was given: every dtype, bf16 rounding, strided views, valid
// regions, a PyTorch model traced with forward hooks and its float64 oracle; misuse is refused
// with a named error, and a writer's close runs `trace-inspector check`.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import type { DType } from '../../main/core/bundle/dtype.ts';
import { REPO_ROOT, tempDirTracker } from '../helpers/paths.ts';
import { runCliProcess } from '../helpers/run-cli.ts';

const PYTHON = '/usr/bin/python3';
const KIT = join(REPO_ROOT, 'python');
const { tempDir, removeTempDirs } = tempDirTracker('kit');
afterAll(removeTempDirs);

function python(args: readonly string[], cwd = REPO_ROOT): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(PYTHON, args, { cwd, encoding: 'utf8', timeout: 180_000, env: { ...process.env, PYTHONPATH: KIT } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function weightsFile(dir: string): string {
  const path = join(dir, 'weights.bin');
  writeFileSync(path, 'not really weights');
  return path;
}

/** Logical values of a tensor's bytes, decoded here independently of the kit. */
function decode(dtype: DType, data: Uint8Array): (number | bigint | boolean)[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out: (number | bigint | boolean)[] = [];
  const step: Record<DType, number> = { F32: 4, F16: 2, BF16: 2, F64: 8, I8: 1, I16: 2, I32: 4, I64: 8, U8: 1, U16: 2, U32: 4, U64: 8, BOOL: 1, C64: 4 };
  for (let at = 0; at < data.byteLength; at += step[dtype]) {
    switch (dtype) {
      case 'F32':
      case 'C64':
        out.push(view.getFloat32(at, true));
        break;
      case 'F64':
        out.push(view.getFloat64(at, true));
        break;
      case 'F16':
        out.push(halfToNumber(view.getUint16(at, true)));
        break;
      case 'BF16':
        out.push(bf16Bits(view.getUint16(at, true)));
        break;
      case 'I8':
        out.push(view.getInt8(at));
        break;
      case 'I16':
        out.push(view.getInt16(at, true));
        break;
      case 'I32':
        out.push(view.getInt32(at, true));
        break;
      case 'I64':
        out.push(view.getBigInt64(at, true));
        break;
      case 'U8':
        out.push(view.getUint8(at));
        break;
      case 'U16':
        out.push(view.getUint16(at, true));
        break;
      case 'U32':
        out.push(view.getUint32(at, true));
        break;
      case 'U64':
        out.push(view.getBigUint64(at, true));
        break;
      case 'BOOL':
        out.push(view.getUint8(at) !== 0);
        break;
    }
  }
  return out;
}

function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

function bf16Bits(bits: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, bits << 16, true);
  return view.getFloat32(0, true);
}

/** float32 -> bfloat16 -> float32 with ties to even, computed here on the float32 bits. */
function roundToBf16(value: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value, true);
  const bits = view.getUint32(0, true);
  if (Number.isNaN(value)) return NaN;
  const lower = bits & 0xffff;
  let upper = bits >>> 16;
  if (lower > 0x8000 || (lower === 0x8000 && (upper & 1) === 1)) upper += 1;
  return bf16Bits(upper & 0xffff);
}

function same(a: number, b: number): boolean {
  return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
}

describe('the Python kit', () => {
  it('writes every dtype, strided views and valid regions that the reader decodes to the values given', async () => {
    const dir = tempDir('dtypes');
    const out = join(dir, 'bundle');
    const run = python([join(REPO_ROOT, 'tests', 'kit', 'scripts', 'every_dtype.py'), out, weightsFile(dir)]);
    expect(run.stderr).not.toMatch(/Traceback/);
    expect(run.status).toBe(0);
    const expected = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as Record<string, (string | number | boolean)[]>;
    const bundle = await openBundle(out);
    try {
      expect(bundle.manifest.case.pass_count).toBe(2);
      expect(bundle.manifest.provenance.runtime).toHaveProperty('torch');
      expect(bundle.passes.map((pass) => pass.mode)).toEqual(['probe', null]);
      for (const [name, values] of Object.entries(expected)) {
        const entry = bundle.boundary(0, name);
        const tensor = await bundle.readBoundary(0, name);
        const decoded = decode(tensor.dtype, tensor.data);
        expect(decoded.length, name).toBe(values.length);
        values.forEach((value, i) => {
          const got = decoded[i] as number | bigint | boolean;
          if (typeof value === 'string') {
            const given = Number(value === 'nan' ? NaN : value === 'inf' ? Infinity : value === '-inf' ? -Infinity : value);
            const want = tensor.dtype === 'BF16' ? roundToBf16(given) : tensor.dtype === 'F32' || tensor.dtype === 'C64' ? Math.fround(given) : given;
            expect(same(got as number, want), `${name}[${i}]: ${String(got)} vs ${want}`).toBe(true);
          } else if (typeof got === 'bigint') {
            expect(got, `${name}[${i}]`).toBe(BigInt(value as number));
          } else {
            expect(got, `${name}[${i}]`).toBe(value);
          }
        });
        if (name === 't.strided') {
          expect(entry?.layout).toBe('strided');
          expect(entry?.strides).toEqual([1, 4]);
          expect(entry?.shape).toEqual([4, 3]);
        }
      }
      expect(bundle.boundary(0, 't.bf16')?.dtype).toBe('BF16');
      expect(bundle.boundary(0, 't.valid')?.valid).toEqual({ axis: 0, length: 5, padding: 'zero' });
      expect(bundle.boundary(0, 't.u64')?.contract?.kind).toBe('bit_exact');
    } finally {
      await bundle.close();
    }
  });

  it('traces a PyTorch model with hooks, restores it, and writes a float64 oracle stored as the reference declares', async () => {
    const dir = tempDir('tracer');
    const run = python([join(REPO_ROOT, 'tests', 'kit', 'scripts', 'tracer_model.py'), dir, weightsFile(dir)]);
    expect(run.stderr).not.toMatch(/Traceback/);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
    expect(report['hooks_left_reference']).toBe(0);
    expect(report['hooks_left_oracle-f64']).toBe(0);
    expect(String(report['twice'])).toMatch(/ran 2 times in pass 0.*\{call\}/);
    expect(String(report['unknown'])).toMatch(/no module named 'blocks\.7'/);
    expect(report['twice_left_files']).toBe(false);

    const reference = await openBundle(join(dir, 'reference'));
    const oracle = await openBundle(join(dir, 'oracle-f64'));
    try {
      expect(reference.passes).toHaveLength(4);
      expect(reference.passes[0]?.boundaries.map((b) => b.name)).toEqual(['net.inp', 'net.b0', 'net.b1', 'net.logits', 'net.token']);
      expect(oracle.manifest.provenance.precision).toBe('float64');
      expect(oracle.manifest.provenance.generator.implementation).toContain('oracle of the reference manifest sha256');
      for (const pass of reference.passes) {
        for (const boundary of pass.boundaries) {
          expect(oracle.boundary(pass.index, boundary.name)?.dtype).toBe(boundary.dtype);
        }
      }
      // The oracle's values are the float64 model's, rounded once to float32: close to the
      // reference within the reference's own contract, and not bit-identical everywhere.
      let differing = 0;
      for (const pass of reference.passes) {
        const ref = await reference.readBoundary(pass.index, 'net.logits');
        const ora = await oracle.readBoundary(pass.index, 'net.logits');
        const contract = reference.boundary(pass.index, 'net.logits')?.contract;
        expect(contract?.kind).toBe('faithful');
        const r = new Float32Array(ref.data.slice().buffer);
        const o = new Float32Array(ora.data.slice().buffer);
        r.forEach((value, i) => {
          if (contract?.kind === 'faithful') expect(Math.abs((o[i] as number) - value)).toBeLessThanOrEqual(contract.abs + contract.rel * Math.abs(value));
          if (o[i] !== value) differing += 1;
        });
      }
      expect(differing).toBeGreaterThan(0);
    } finally {
      await reference.close();
      await oracle.close();
    }
    const check = runCliProcess(['check', '--reference', join(dir, 'reference'), join(dir, 'oracle-f64')]);
    expect(check.status).toBe(0);
    expect(check.stdout).toMatch(/^OK /);
  });

  it('refuses misuse with named errors and leaves no half-written bundle', () => {
    const dir = tempDir('misuse');
    const weights = weightsFile(dir);
    const script = `
import numpy as np, os, json
from trace_inspector import BundleWriter, BundleWriterError, BundleCheckError, faithful_from_k, bit_exact
from trace_inspector.contracts import ContractError
out = {}
def attempt(key, fn):
    try:
        fn(); out[key] = None
    except (BundleWriterError, BundleCheckError, ContractError) as error:
        out[key] = type(error).__name__ + ": " + str(error)
model = {"name": "m", "weights_file": ${JSON.stringify(weights)}}
def outside_pass():
    with BundleWriter(${JSON.stringify(join(dir, 'a'))}, case_id="c", model=model) as b:
        b.boundary("x", np.zeros(2, dtype=np.float32), contract=bit_exact("z"))
def no_contract():
    with BundleWriter(${JSON.stringify(join(dir, 'b'))}, case_id="c", model=model) as b:
        with b.begin_pass():
            b.boundary("x", np.ones(2, dtype=np.float32))
def lossy_integer():
    with BundleWriter(${JSON.stringify(join(dir, 'c'))}, case_id="c", model=model) as b:
        with b.begin_pass():
            b.boundary("ok", np.array([0.1, 0.2]), contract=bit_exact("z"), dtype="F32")
            b.boundary("t", np.array([2 ** 40], dtype=np.int64), contract=bit_exact("z"), dtype="I32")
def zero_rms():
    faithful_from_k(100, np.zeros(4, dtype=np.float32))
def bad_mode():
    with BundleWriter(${JSON.stringify(join(dir, 'd'))}, case_id="c", model=model) as b:
        with b.begin_pass(mode="m" * 65):
            b.boundary("x", np.ones(2, dtype=np.float32), contract=bit_exact("z"))
def not_empty():
    BundleWriter(${JSON.stringify(dir)}, case_id="c", model=model)
def empty_bundle():
    with BundleWriter(${JSON.stringify(join(dir, 'e'))}, case_id="c", model=model):
        pass
def audio_unrecorded():
    with BundleWriter(${JSON.stringify(join(dir, 'f'))}, case_id="c", model=model) as b:
        with b.begin_pass():
            b.boundary("x", np.ones(2, dtype=np.float32), contract=bit_exact("z"))
        b.audio("y.pcm", 48000)
def audio_rate():
    with BundleWriter(${JSON.stringify(join(dir, 'g'))}, case_id="c", model=model) as b:
        b.audio("x", 44100.0)
def half_weights():
    BundleWriter(${JSON.stringify(join(dir, 'h'))}, case_id="c", model={"name": "m", "weights_sha256": "0" * 64})
for key, fn in [("outside_pass", outside_pass), ("no_contract", no_contract), ("zero_rms", zero_rms), ("bad_mode", bad_mode), ("not_empty", not_empty), ("empty_bundle", empty_bundle),
                ("audio_unrecorded", audio_unrecorded), ("audio_rate", audio_rate), ("half_weights", half_weights)]:
    attempt(key, fn)
attempt("lossy_integer", lossy_integer)
out["left"] = sorted(name for name in os.listdir(${JSON.stringify(dir)}) if name != "weights.bin")
print(json.dumps(out))
`;
    const run = python(['-c', script]);
    expect(run.stderr).not.toMatch(/Traceback/);
    expect(run.status).toBe(0);
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as Record<string, string | null | string[]>;
    expect(out['outside_pass']).toMatch(/BundleWriterError: boundary 'x' recorded outside a pass/);
    expect(out['no_contract']).toMatch(/pass 0 x: a contract is required/);
    expect(out['zero_rms']).toMatch(/ContractError: .*rms\(ref\) is 0.*scale=/);
    expect(out['bad_mode']).toMatch(/BundleCheckError: [\s\S]*manifest\.json: passes\[0\]\.mode: expected at most 64 characters/);
    expect(out['not_empty']).toMatch(/refusing to write into a non-empty folder/);
    expect(out['empty_bundle']).toMatch(/no pass was written/);
    expect(out['lossy_integer']).toMatch(/pass 0 t: storing I64 values as I32 would change them/);
    expect(out['audio_unrecorded']).toMatch(/BundleWriterError: audio 'y\.pcm': declared audio, but no pass recorded it/);
    expect(out['audio_rate']).toMatch(/BundleWriterError: audio 'x': sample_rate must be a positive integer \(Hz\), found 44100\.0/);
    expect(out['half_weights']).toMatch(/BundleWriterError: model\.weights_sha256 given without model\.weights_file/);
    // Only the bundle whose check failed after closing stays (its problems named); every writer
    // that failed before closing removed what it wrote.
    expect(out['left']).toEqual(['d']);
  });

  it('python unit tests: bf16 rounding in one step, storage rules, the gamma(K) rule', () => {
    const run = python(['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], KIT);
    expect(run.stderr).toMatch(/Ran \d+ tests/);
    expect(run.stderr).toMatch(/\nOK\n?$/);
    expect(run.status).toBe(0);
  });
});

describe('trace-inspector check', () => {
  it('reports every problem of a bundle at once, naming the file and the field, exit 2', async () => {
    const dir = tempDir('check');
    const out = join(dir, 'bundle');
    const run = python([join(REPO_ROOT, 'tests', 'kit', 'scripts', 'every_dtype.py'), out, weightsFile(dir)]);
    expect(run.status).toBe(0);
    // Two independent faults: a pass file's bytes changed (its digest), and a tensor's recorded sha256 altered.
    const { readFileSync } = await import('node:fs');
    const pass1 = join(out, 'pass-001.safetensors');
    const bytes = readFileSync(pass1);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    writeFileSync(pass1, bytes);
    const manifestPath = join(out, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { files: { path: string }[]; passes: { boundaries: { sha256: string }[] }[] };
    const pass1Entry = manifest.files.findIndex((file) => file.path === 'pass-001.safetensors');
    const first = manifest.passes[0]?.boundaries[0];
    if (first === undefined) throw new Error('no boundary');
    first.sha256 = '0'.repeat(64);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const check = runCliProcess(['check', '--json', '-', out]);
    expect(check.status).toBe(2);
    const report = JSON.parse(check.stdout) as { ok: boolean; problems: { code: string; file: string; field: string }[] };
    expect(report.ok).toBe(false);
    // Both faults at once: the tensor digest in pass-000 and the whole-file digest of pass-001.
    expect(report.problems.map((p) => [p.code, p.field])).toEqual([
      ['E_DIGEST', 'passes[0].boundaries[0].sha256'],
      ['E_DIGEST', `files[${pass1Entry}].sha256`],
    ]);
    // With the file fixed, the tensor digest is the problem left, named by file and field.
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    writeFileSync(pass1, bytes);
    const again = runCliProcess(['check', out]);
    expect(again.status).toBe(2);
    expect(again.stdout).toMatch(/E_DIGEST {2}\S*pass-000\.safetensors: passes\[0\]\.boundaries\[0\]\.sha256: tensor "t\.f32"/);
  });

  it('tells an oracle stored in float64 what is wrong before any gate runs', async () => {
    const dir = tempDir('oracle-f64');
    const script = `
import numpy as np
from trace_inspector import BundleWriter, faithful_from_k
model = {"name": "m", "weights_file": ${JSON.stringify(weightsFile(dir))}}
x = np.linspace(-1, 1, 8)
with BundleWriter(${JSON.stringify(join(dir, 'reference'))}, case_id="c", model=model) as b:
    with b.begin_pass():
        b.boundary("y", np.tanh(x).astype(np.float32), contract=faithful_from_k(3, np.tanh(x).astype(np.float32)))
# An oracle written without reference=: its float64 values keep their dtype.
with BundleWriter(${JSON.stringify(join(dir, 'naive'))}, case_id="c", model=model, precision="float64") as b:
    with b.begin_pass():
        b.boundary("y", np.tanh(x), contract=faithful_from_k(3, np.tanh(x)))
`;
    const run = python(['-c', script]);
    expect(run.stderr).not.toMatch(/Traceback/);
    expect(run.status).toBe(0);
    const check = runCliProcess(['check', '--reference', join(dir, 'reference'), join(dir, 'naive')]);
    expect(check.status).toBe(2);
    expect(check.stdout).toMatch(/E_REFERENCE_MISMATCH .*passes\[0\]\.boundaries\[0\]\.dtype: "y" is F64, the reference stores F32/);
  });
});

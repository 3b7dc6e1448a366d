// Bundles for the gate tests, built in temp folders (never in fixtures/): a tiny reference /
// oracle for the toy engines of engine/testlibs (values computed here from toy_engine.h's
// formulas, independently of the engine), copies of committed bundles with one tensor changed,
// and a CliIO that records output.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CliIO } from '../../main/cli/cli-io.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import type { Contract, KnownGap } from '../../main/core/bundle/manifest-schema.ts';
import type { GateOptions } from '../../main/core/gate/gate-types.ts';
import { writeBundle, type PassSpec, type TensorSpec } from '../helpers/bundle-builder.ts';
import { faithfulContract } from '../helpers/contracts.ts';
import { TESTLIB_DIR, tempDirTracker } from '../helpers/paths.ts';
import { allowWeightsRoot } from '../helpers/weights-roots.ts';

export const { tempDir, removeTempDirs } = tempDirTracker('gate');

export const testlib = (name: string): string => join(TESTLIB_DIR, `lib${name}.so`);
export const TOY_ENGINE = testlib('toy_engine');
export const SEGV_ENGINE = testlib('segv_engine');

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

// ---- the toy engine's case --------------------------------------------------------------------

export const bitExact: Contract = { kind: 'bit_exact', nan_policy: 'positions', signed_zero: 'must_match', reason: 'toy: exact arithmetic on halves' };
export const faithful = (abs: number, rel: number): Contract => faithfulContract({ abs, rel });

const f32Bytes = (values: readonly number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);
const i32Bytes = (values: readonly number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);

export interface ToyCaseOptions {
  prompt?: number[];
  /** Total passes (prefill + decodes). Default 3. */
  passes?: number;
  /** Flip the sign of toy.mix as the engine's perturb.flip_sign does. */
  flipSign?: boolean;
}

/**
 * The passes the toy engine produces (toy_engine.h): embed[t][j] = token*0.5 + j + cursor + t,
 * mix[t][j] = sign*embed[t][j]*(j+1) (emitted with strides [1, T]), token = (int)sum(mix[T-1]) mod 97.
 */
export function toyPasses(options: ToyCaseOptions = {}): PassSpec[] {
  const prompt = options.prompt ?? [1, 2, 3];
  const count = options.passes ?? 3;
  const sign = options.flipSign ? -1 : 1;
  const passes: PassSpec[] = [];
  let cursor = 0;
  let lastToken = 0;
  for (let p = 0; p < count; p++) {
    const tokens = p === 0 ? prompt : [lastToken];
    const T = tokens.length;
    const embed: number[] = [];
    for (let t = 0; t < T; t++) for (let j = 0; j < 4; j++) embed.push(Math.fround(Math.fround((tokens[t] as number) * 0.5) + j) + (cursor + t));
    const mix = embed.map((value, i) => Math.fround(sign * value * ((i % 4) + 1)));
    let sum = 0;
    for (let j = 0; j < 4; j++) sum = Math.fround(sum + (mix[(T - 1) * 4 + j] as number));
    let token = Math.trunc(sum) % 97;
    if (token < 0) token += 97;
    passes.push({
      kind: p === 0 ? 'prefill' : 'decode',
      mode: 'text',
      boundaries: [
        { name: 'toy.embed', stage: 'toy', dtype: 'F32', shape: [T, 4], data: f32Bytes(embed), contract: bitExact },
        { name: 'toy.mix', stage: 'toy', dtype: 'F32', shape: [T, 4], strides: [1, T], data: f32Bytes(mix), contract: faithful(1e-6, 1e-6) },
        { name: 'toy.token', stage: 'sampler', dtype: 'I32', shape: [1], data: i32Bytes([token]), contract: bitExact },
      ],
    });
    lastToken = token;
    cursor += T;
  }
  return passes;
}

/**
 * A weights file (the toy engine ignores it; the capture checks its digest) in `dir`, beside the
 * case folders as a user's own model keeps them. `dir` is listed as a weights root
 * ($TRACE_INSPECTOR_WEIGHTS_ROOTS, inherited by the CLI and serve processes the tests start),
 * as a user must list their weights folder: a bundle may not name weights anywhere else.
 */
export function dummyWeights(dir: string): { file: string; sha256: string } {
  const file = join(dir, 'weights.bin');
  const data = new TextEncoder().encode('toy weights\n');
  writeFileSync(file, data);
  allowWeightsRoot(dir);
  return { file, sha256: sha256(data) };
}

export interface ToyCaseLayout {
  /** <root>/<case>: the case folder holding reference/ and, when asked, oracle-f64/. */
  caseDir: string;
  referenceDir: string;
  oracleDir: string | null;
}

export interface ToyCaseSpec extends ToyCaseOptions {
  caseId?: string;
  oracle?: boolean;
  /** Edits the reference (or oracle) passes before they are written. */
  editReference?: (passes: PassSpec[]) => void;
  editOracle?: (passes: PassSpec[]) => void;
  knownGaps?: KnownGap[];
  /** case.pass_count stated by the reference / the oracle (default: not stated). */
  referencePassCount?: number;
  oraclePassCount?: number;
}

/** A toy case folder <root>/<case>/{reference, oracle-f64}. */
export function writeToyCase(root: string, spec: ToyCaseSpec = {}): ToyCaseLayout {
  const caseId = spec.caseId ?? 'toy';
  const caseDir = join(root, caseId);
  mkdirSync(caseDir, { recursive: true });
  const weights = dummyWeights(root);
  const prompt = spec.prompt ?? [1, 2, 3];
  const inputs = [{ name: 'prompt_tokens', dtype: 'I32' as const, shape: [prompt.length], data: i32Bytes(prompt) }];
  const referencePasses = toyPasses(spec);
  spec.editReference?.(referencePasses);
  const referenceDir = writeBundle(join(caseDir, 'reference'), {
    kind: 'reference',
    caseId,
    weightsFile: weights.file,
    weightsSha256: weights.sha256,
    inputs,
    passes: referencePasses,
    knownGaps: spec.knownGaps ?? [],
    ...(spec.referencePassCount !== undefined ? { passCount: spec.referencePassCount } : {}),
  });
  let oracleDir: string | null = null;
  if (spec.oracle) {
    const oraclePasses = toyPasses(spec);
    spec.editOracle?.(oraclePasses);
    oracleDir = writeBundle(join(caseDir, 'oracle-f64'), {
      kind: 'oracle-f64',
      caseId,
      weightsFile: weights.file,
      weightsSha256: weights.sha256,
      inputs,
      passes: oraclePasses,
      ...(spec.oraclePassCount !== undefined ? { passCount: spec.oraclePassCount } : {}),
    });
  }
  return { caseDir, referenceDir, oracleDir };
}

/** Changes one float32 element of a boundary in place. */
export function setF32(passes: PassSpec[], pass: number, boundary: string, element: number, value: number): void {
  const spec = passes[pass]?.boundaries.find((candidate) => candidate.name === boundary);
  if (spec === undefined) throw new Error(`test fixture: no ${boundary} in pass ${pass}`);
  const copy = spec.data.slice();
  new DataView(copy.buffer).setFloat32(element * 4, value, true);
  spec.data = copy;
}

export function gateOptions(over: Partial<GateOptions> & Pick<GateOptions, 'library' | 'cases' | 'workDir'>): GateOptions {
  return {
    strict: false,
    isolation: 'process',
    passTimeoutMs: 30_000,
    engineOptions: {},
    teacherForce: false,
    isolate: false,
    ledgerFile: null,
    ...over,
  };
}

// ---- copies of committed bundles ------------------------------------------------------------------

export type TensorEdit = (pass: number, boundary: string, data: Uint8Array) => Uint8Array | null | 'drop';

/**
 * Copies a bundle (every tensor re-read and digest-checked) into `dstDir`, with `edit` applied
 * to each boundary (return new bytes, null to keep, 'drop' to leave it out). The weights path
 * is made absolute so the copy works from anywhere.
 */
export async function copyBundle(srcDir: string, dstDir: string, edit: TensorEdit = () => null): Promise<string> {
  const bundle = await openBundle(srcDir);
  try {
    const { manifest } = bundle;
    const inputs = [];
    for (const input of manifest.inputs) {
      const tensor = await bundle.readInput(input.name);
      inputs.push({ name: input.name, dtype: input.dtype, shape: [...input.shape], data: tensor.data });
    }
    const passes: PassSpec[] = [];
    for (const pass of manifest.passes) {
      const boundaries: TensorSpec[] = [];
      for (const entry of pass.boundaries) {
        const tensor = await bundle.readBoundary(pass.index, entry.name);
        const edited = edit(pass.index, entry.name, tensor.data);
        if (edited === 'drop') continue;
        boundaries.push({
          name: entry.name,
          stage: entry.stage,
          dtype: entry.dtype,
          shape: [...entry.shape],
          strides: [...entry.strides],
          data: edited ?? tensor.data,
          contract: entry.contract,
          valid: entry.valid,
        });
      }
      passes.push({ kind: pass.kind, mode: pass.mode, boundaries });
    }
    const { weights_file: weightsFile, weights_sha256: weightsSha256 } = manifest.provenance.model;
    if (weightsFile === undefined || weightsSha256 === undefined) throw new Error(`${srcDir} names no weights`);
    writeBundle(dstDir, {
      kind: manifest.kind,
      caseId: manifest.case.id,
      description: manifest.case.description,
      weightsFile: resolve(srcDir, weightsFile),
      weightsSha256,
      inputs,
      passes,
      knownGaps: manifest.known_gaps,
    });
    return dstDir;
  } finally {
    await bundle.close();
  }
}

// ---- CLI helpers -----------------------------------------------------------------------------------

/** One `trace-inspector` run through recordingIO, as the shard tests keep it. */
export interface GateCliRun {
  code: number;
  out: string;
  err: string;
  json: string;
  /** The receipt the run signed (its --work folder's receipt.dsse.json). */
  receipt: string;
}

export interface RecordingIO extends CliIO {
  out: string[];
  err: string[];
}

export function recordingIO(cwd: string, env: Record<string, string | undefined> = {}): RecordingIO {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), stderrIsTTY: false, cwd, env };
}

/** A fresh Ed25519 private key file (PKCS#8 PEM, 0600) and its public key file. */
export function keyFiles(dir: string): { privateKeyPath: string; publicKeyPath: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const privateKeyPath = join(dir, 'gate.key');
  const publicKeyPath = join(dir, 'gate.pub');
  writeFileSync(privateKeyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(publicKeyPath, publicKey.export({ type: 'spki', format: 'pem' }));
  return { privateKeyPath, publicKeyPath };
}

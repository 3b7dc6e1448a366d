// A synthetic run for the app's judging: a reference and a native bundle of many passes of many
// small F32 boundaries, written with the shared bundle-builder. The tests size it in KB (a few
// passes of a few hundred rows); the app benchmark writes 50 passes x 1000 boundaries (50k rows).
//
// One boundary in ten is bit_exact, the rest faithful(1e-5, 1e-5). The native copies the
// reference except: one boundary in 50 moved by 1e-7 (inside the contract: PASS, not identical),
// one in 997 moved by 1e-2 (FAIL), and one NaN in pass 0 — so verdicts, badges and the first
// divergence vary as in a real run.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bitExact, dummyWeights, faithful } from '../gate/gate-fixtures.ts';
import { writeBundle, type PassSpec, type TensorSpec } from './bundle-builder.ts';

export interface BundlePair {
  caseId: string;
  referenceDir: string;
  nativeDir: string;
}

const i32Bytes = (values: readonly number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
export const f32Bytes = (values: Float32Array): Uint8Array => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);

/** A reference and a native bundle of case `caseId` under `root`/`caseId`. */
export function writePair(root: string, caseId: string, reference: PassSpec[], native: PassSpec[]): BundlePair {
  const weights = dummyWeights(root);
  const inputs = [{ name: 'prompt_tokens', dtype: 'I32' as const, shape: [1], data: i32Bytes([1]) }];
  const common = { caseId, weightsFile: weights.file, weightsSha256: weights.sha256, inputs };
  const referenceDir = writeBundle(join(root, caseId, 'reference'), { kind: 'reference', ...common, passes: reference });
  const nativeDir = writeBundle(join(root, caseId, 'native'), { kind: 'native', ...common, passes: native });
  return { caseId, referenceDir, nativeDir };
}

/** `passes` x `perPass` boundaries of shape [4, 8], in stages of 100 (see the top of the file). */
export function writeTablePair(root: string, caseId: string, passes: number, perPass: number): BundlePair {
  const reference: PassSpec[] = [];
  const native: PassSpec[] = [];
  for (let p = 0; p < passes; p++) {
    const refBoundaries: TensorSpec[] = [];
    const natBoundaries: TensorSpec[] = [];
    for (let i = 0; i < perPass; i++) {
      const values = new Float32Array(32);
      for (let k = 0; k < values.length; k++) values[k] = Math.sin(p * 0.7 + i * 0.013 + k * 0.31);
      const moved = Float32Array.from(values);
      const serial = p * perPass + i;
      if (i % 50 === 7) moved[3] = (moved[3] ?? 0) + 1e-7;
      if (serial % 997 === 3) moved[5] = (moved[5] ?? 0) + 1e-2;
      if (p === 0 && i === Math.floor(perPass / 2)) moved[0] = NaN;
      const spec = {
        name: `layer${String(Math.floor(i / 10)).padStart(3, '0')}.op${i % 10}`,
        stage: `stage${Math.floor(i / 100)}`,
        dtype: 'F32' as const,
        shape: [4, 8],
      };
      refBoundaries.push({ ...spec, data: f32Bytes(values), contract: i % 10 === 0 ? bitExact : faithful(1e-5, 1e-5) });
      natBoundaries.push({ ...spec, data: f32Bytes(moved) });
    }
    const kind = p === 0 ? ('prefill' as const) : ('decode' as const);
    reference.push({ kind, mode: 'text', boundaries: refBoundaries });
    native.push({ kind, mode: 'text', boundaries: natBoundaries });
  }
  return writePair(root, caseId, reference, native);
}

/** A copy of a table pair's native bundle whose manifest states one boundary's shape wrong. */
export interface LyingHeaderCopy {
  readonly dir: string;
  /** The pass file whose header (not the manifest) tells the truth. */
  readonly file: string;
  /** The manifest field that lies. */
  readonly field: string;
}

/**
 * Copies `nativeDir` (writeTablePair's, `perPass` boundaries a pass) into `into` and restates the
 * last boundary of pass `pass` as [8, 4] in the manifest, where its file holds [4, 8]: the same
 * bytes, so the manifest alone is valid and only that file's header shows the lie.
 */
export function writeLyingHeaderCopy(nativeDir: string, into: string, pass: number, perPass: number): LyingHeaderCopy {
  cpSync(nativeDir, into, { recursive: true });
  const manifestPath = join(into, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { passes: { file: string; boundaries: { shape: number[]; strides: number[] }[] }[] };
  const entry = manifest.passes[pass]?.boundaries[perPass - 1];
  const file = manifest.passes[pass]?.file;
  if (entry === undefined || file === undefined) throw new Error('the synthetic run is smaller than expected');
  entry.shape = [8, 4];
  entry.strides = [4, 1];
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  return { dir: into, file: join(into, file), field: `passes[${pass}].boundaries[${perPass - 1}].shape` };
}

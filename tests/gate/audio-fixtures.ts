// Hand-made PCM bundles whose records each stay inside their audio bounds while the stream
// breaks them (a delay that changes between passes). Shared by the gate's and the app's tests.
import { join } from 'node:path';
import type { EngineDescription } from '../../main/engine-host/engine-description.ts';
import type { Contract } from '../../main/core/bundle/manifest-schema.ts';
import { writeBundle, type PassSpec } from '../helpers/bundle-builder.ts';
import { dummyWeights } from './gate-fixtures.ts';

export const FRAME = 1920;

export function speechLike(length: number): Float32Array {
  return Float32Array.from({ length }, (_, i) => {
    const t = i / 24000;
    return (
      0.3 *
      Math.sin(2 * Math.PI * 5 * t + 2) *
      (0.5 * Math.sin(2 * Math.PI * 220 * t) + 0.3 * Math.sin(2 * Math.PI * 587 * t + 1) + 0.2 * Math.sin(2 * Math.PI * 1361 * t + 2))
    );
  });
}

export const PCM_DESCRIPTION: EngineDescription = {
  abi_version: 1,
  engine: { name: 'pcm', version: '0.1.0', build_id: 'test' },
  model: {},
  inputs: [],
  boundaries: [{ name: 'detok.pcm', stage: 'detokenizer', dtype: 'F32', shape: [FRAME], emit: 'every_pass', injectable: false, doc: '' }],
  options: [],
};

/** Every sample inside the element bound (abs 1); only the null test is bounded. */
export const STREAM_CONTRACT: Contract = {
  kind: 'faithful',
  abs: 1,
  rel: 0,
  max_ulp: null,
  oracle_rel: null,
  nan_policy: 'positions',
  signed_zero: 'ignore',
  derivation: {
    storage_dtype: 'F32',
    accumulation_dtype: 'F32',
    accumulation_length: 1,
    reduction_order: 'none',
    formula: 'test',
    allowed_differences: 'test',
  },
  audio: {
    max_esr: null,
    min_snr_db: null,
    max_mr_stft: null,
    max_null_residual_dbfs: -60,
    max_null_offset: 2,
    derivation: 'test: a delay of up to 2 samples is allowed, but one delay for the whole signal',
  },
};

export function pcmPasses(frames: readonly Float32Array[], contract: Contract | null): PassSpec[] {
  return frames.map((samples, index) => ({
    kind: index === 0 ? 'prefill' : 'decode',
    mode: 'audio',
    boundaries: [{ name: 'detok.pcm', stage: 'detokenizer', dtype: 'F32', shape: [FRAME], data: new Uint8Array(samples.slice().buffer), contract }],
  }));
}

/**
 * A reference of two PCM passes bounded by STREAM_CONTRACT and a native whose pass 0 is exact and
 * whose pass 1 is delayed by two samples: each record nulls at its own offset, the stream at none.
 */
export function writeDriftingDelayCase(root: string): { referenceDir: string; nativeDir: string } {
  const weights = dummyWeights(root);
  const signal = speechLike(2 * FRAME);
  const reference = [signal.slice(0, FRAME), signal.slice(FRAME)];
  const delayed = new Float32Array(FRAME);
  delayed.set((reference[1] as Float32Array).subarray(0, FRAME - 2), 2);
  const native = [reference[0] as Float32Array, delayed];
  const common = { caseId: 'pcm', weightsFile: weights.file, weightsSha256: weights.sha256, inputs: [] };
  const referenceDir = writeBundle(join(root, 'reference'), { ...common, kind: 'reference', passes: pcmPasses(reference, STREAM_CONTRACT) });
  const nativeDir = writeBundle(join(root, 'native'), { ...common, kind: 'native', passes: pcmPasses(native, null) });
  return { referenceDir, nativeDir };
}

// Hand-made PCM bundles whose records each stay inside their audio bounds while the stream
// breaks them (a delay that changes between passes), and a temporary copy of the committed speech
// case whose PCM contracts bound the audio. Shared by the gate's and the app's tests.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readPcmFrame } from '../../main/core/audio/pcm-stream.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import type { EngineDescription } from '../../main/engine-host/engine-description.ts';
import type { AudioBounds, BundleManifest, Contract } from '../../main/core/bundle/manifest-schema.ts';
import { referenceBundle } from '../helpers/paths.ts';
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

// ---- the committed speech case with audio bounds ----------------------------------------------------

/**
 * Audio bounds implied by a record's faithful element bound |n - r| <= abs + rel·|r| over its L
 * valid samples: Σ(n − r)² <= E = Σ(abs + rel·|r|)², so ESR <= E / Σr², SNR >= −10·log10 of that,
 * and the residual at offset 0 is at most 10·log10(E / L) dBFS. The contract pairs sample i with
 * sample i, so no delay is allowed. MR-STFT stays unbounded: its log-magnitude term is not bounded
 * by an element tolerance near spectral zeros.
 */
function impliedBounds(contract: Extract<Contract, { kind: 'faithful' }>, reference: Float32Array): AudioBounds {
  let bound = 0;
  let energy = 0;
  for (const r of reference) {
    bound += (contract.abs + contract.rel * Math.abs(r)) ** 2;
    energy += r * r;
  }
  const esr = energy > 0 ? bound / energy : null;
  return {
    max_esr: esr,
    min_snr_db: esr === null ? null : -10 * Math.log10(esr),
    max_mr_stft: null,
    max_null_residual_dbfs: 10 * Math.log10(bound / reference.length),
    max_null_offset: 0,
    derivation:
      `implied by this record's float32 element bound |n - r| <= abs + rel*|r| (abs ${contract.abs}, rel ${contract.rel}, K = ${contract.derivation.accumulation_length}) ` +
      `over its ${reference.length} valid samples: sum (n - r)^2 <= sum (abs + rel*|r|)^2 = ${bound}, signal energy sum r^2 = ${energy}; ` +
      'ESR <= their ratio, SNR >= -10*log10 of it, null residual at offset 0 <= 10*log10(bound / samples) dBFS; ' +
      'the contract pairs sample i with sample i, so the offset is 0; MR-STFT unbounded (its log-magnitude term is not bounded by an element tolerance near spectral zeros)',
  };
}

/** A temporary copy of a committed reference (speech by default) whose detok.pcm contracts bound the audio (never committed). */
export async function boundedSpeechCopy(root: string, caseId = 'speech'): Promise<string> {
  const source = referenceBundle(caseId);
  const dir = join(root, caseId, 'reference');
  cpSync(source, dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as BundleManifest;
  // The weights stay where they are; the tensors are copied byte for byte, so their digests hold.
  manifest.provenance.model.weights_file = resolve(source, manifest.provenance.model.weights_file ?? 'the fixture names its weights');
  const committed = await openBundle(source);
  try {
    for (const pass of manifest.passes) {
      const entry = pass.boundaries.find((boundary) => boundary.name === 'detok.pcm');
      if (entry === undefined || entry.contract?.kind !== 'faithful') continue;
      const samples = await readPcmFrame(committed, pass.index, 'detok.pcm', entry.valid?.length ?? (entry.shape[0] as number));
      entry.contract = { ...entry.contract, audio: impliedBounds(entry.contract, samples) };
    }
  } finally {
    await committed.close();
  }
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

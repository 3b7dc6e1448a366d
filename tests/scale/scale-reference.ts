// Writes the reference bundle of a scale-engine run (scale-model.ts computes every value) with
// the project's own safetensors writer, at any size with bounded memory: each record is computed
// into one reusable buffer, hashed and appended to a spill file, and each pass's safetensors
// file is then written from the spill (safetensors-writer.ts copies it in chunks).
//   node --import tsx tests/scale/scale-reference.ts <out-dir> [--tokens N] [--passes P] [--pcm L] [--kv-cache]
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chunkDigestsOf, DEFAULT_CHUNK_DIGEST_BYTES } from '../../main/core/bundle/chunk-digests.ts';
import type { DType } from '../../main/core/bundle/dtype.ts';
import { contiguousStrides, layoutOf } from '../../main/core/bundle/layout.ts';
import type { BundleManifest, Contract } from '../../main/core/bundle/manifest-schema.ts';
import { writeAllSync, writeSafetensorsFile, type SpilledTensor } from '../../main/core/bundle/safetensors-writer.ts';
import { treeDeclaration, type DigestScheme } from '../../main/core/bundle/tree-digest.ts';
import { faithfulContract } from '../helpers/contracts.ts';
import { fillRecord, promptSeed, scalePasses, type ScaleRecord, type ScaleRunSpec } from './scale-model.ts';

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * The contracts: an f32 value is one rounding of a number in [0, 1) to f32 storage, so a faithful
 * implementation is within half an ulp of 1.0 (2^-24) of it; integers and the bf16 features are
 * bit_exact (nothing is computed in them).
 */
const F32_CONTRACT: Contract = faithfulContract({ abs: 2 ** -24, rel: 0, formula: 'one f32 rounding of a value in [0, 1): |e| <= 2^-24' });
const EXACT_CONTRACT: Contract = {
  kind: 'bit_exact',
  nan_policy: 'positions',
  signed_zero: 'must_match',
  reason: 'integers and bf16 copies: nothing is computed',
};

export interface ScaleReferenceSpec extends ScaleRunSpec {
  readonly caseId: string;
  /** State a sha256 per chunk of this many bytes beside each tensor's digest (chunk-digests.ts); absent: none. */
  readonly chunkBytes?: number;
  /**
   * 'tree' (default): the tree-sha256 scheme (tree-digest.ts), every byte hashed once as the
   * files are written, chunks of `chunkBytes` (default 4 MiB); 'sha256': plain digests, as
   * bundles written before the scheme (each record hashed, then each file).
   */
  readonly digests?: 'tree' | 'sha256';
  /** Called with each record's values before they are hashed (tests plant a deliberate error). */
  readonly edit?: (pass: number, name: string, data: Uint8Array) => void;
}

export interface WrittenScaleReference {
  readonly dir: string;
  readonly bytes: number;
  /** Engine options the run needs (pass to the gate as engineOptions). */
  readonly engineOptions: Record<string, string>;
}

export function writeScaleReference(dir: string, spec: ScaleReferenceSpec): WrittenScaleReference {
  mkdirSync(dir, { recursive: true });
  const seed = promptSeed(spec.prompt);
  const passes = scalePasses(spec);
  const largest = Math.max(...passes.flatMap((pass) => pass.records.map((record) => record.byteLength)));
  const buffer = new Uint8Array(largest + (4 - (largest % 4)));
  const files: BundleManifest['files'] = [];
  let total = 0;
  const tree = (spec.digests ?? 'tree') === 'tree';
  const treeChunkBytes = spec.chunkBytes ?? DEFAULT_CHUNK_DIGEST_BYTES;
  const digestScheme: DigestScheme = tree ? { kind: 'tree', chunkBytes: treeChunkBytes } : { kind: 'sha256' };

  const weightsData = new TextEncoder().encode('the scale engine reads no weights\n');
  writeFileSync(join(dir, 'weights.bin'), weightsData);
  const prompt = new Uint8Array(Int32Array.from(spec.prompt).buffer);
  const inputs: { name: string; dtype: DType; shape: number[]; data: Uint8Array }[] = [
    { name: 'prompt_tokens', dtype: 'I32', shape: [spec.prompt.length], data: prompt },
  ];
  if (spec.pcmSamples > 0) inputs.push({ name: 'pcm_in', dtype: 'F32', shape: [spec.pcmSamples], data: new Uint8Array(spec.pcmSamples * 4) });
  const inputsFile = writeSafetensorsFile(
    join(dir, 'inputs.safetensors'),
    inputs.map((input) => ({ key: input.name, dtype: input.dtype, shape: input.shape, data: input.data })),
    { digestScheme },
  );
  files.push({ path: 'inputs.safetensors', sha256: inputsFile.sha256, bytes: inputsFile.bytes });

  const manifestPasses: BundleManifest['passes'] = [];
  const spillPath = join(dir, '.scale-spill');
  for (const pass of passes) {
    const file = `pass-${String(pass.index).padStart(4, '0')}.safetensors`;
    const fd = openSync(spillPath, 'w+');
    const boundaries: BundleManifest['passes'][number]['boundaries'] = [];
    try {
      const spilled: SpilledTensor[] = [];
      let position = 0;
      for (const record of pass.records) {
        const data = valuesOf(buffer, record, seed);
        spec.edit?.(pass.index, record.boundary.name, data);
        writeAllSync(fd, data, position);
        spilled.push({ key: record.boundary.name, dtype: record.boundary.dtype, shape: record.shape, byteLength: data.byteLength, from: { fd, position } });
        position += data.byteLength;
        const strides = contiguousStrides(record.shape);
        boundaries.push({
          name: record.boundary.name,
          stage: record.boundary.stage,
          dtype: record.boundary.dtype,
          shape: [...record.shape],
          strides,
          layout: layoutOf(record.shape, strides),
          key: record.boundary.name,
          // Under the tree scheme the digests come from the file's one pass (below).
          sha256: tree ? '' : sha256(data),
          byte_length: data.byteLength,
          valid: null,
          contract: record.boundary.dtype === 'F32' ? F32_CONTRACT : EXACT_CONTRACT,
          ...(spec.chunkBytes === undefined || tree ? {} : { chunks: { bytes: spec.chunkBytes, sha256: chunkDigestsOf(data, spec.chunkBytes) } }),
        });
      }
      const written = writeSafetensorsFile(join(dir, file), spilled, { dataOrder: 'given', digestScheme });
      if (tree) {
        for (const boundary of boundaries) {
          const digest = written.tensorDigests.get(boundary.key);
          if (digest === undefined) throw new Error(`internal: no digest of ${boundary.key}`);
          boundary.sha256 = digest.sha256;
          if (spec.chunkBytes !== undefined) boundary.chunks = { bytes: treeChunkBytes, sha256: [...digest.chunks] };
        }
      }
      files.push({ path: file, sha256: written.sha256, bytes: written.bytes });
      total += position;
    } finally {
      closeSync(fd);
      rmSync(spillPath, { force: true });
    }
    manifestPasses.push({ index: pass.index, kind: pass.kind, mode: pass.mode, file, boundaries });
  }

  const manifest: BundleManifest = {
    schema: 'trace-inspector.bundle',
    schema_version: 1,
    kind: 'reference',
    case: {
      id: spec.caseId,
      description: `scale engine: ${spec.prompt.length} prompt tokens, ${spec.pcmSamples} pcm samples, ${spec.passes} passes`,
      pass_count: spec.passes,
    },
    provenance: {
      model: { name: 'synthetic LFM2.5-Audio 1.5B shapes', checkpoint_revision: 'scale@1', weights_file: 'weights.bin', weights_sha256: sha256(weightsData) },
      generator: { implementation: 'tests/scale/scale-reference.ts', revision: '0000000', dirty: true, command: 'writeScaleReference' },
      created_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      runtime: { torch: 'none (synthetic values)', python: 'none' },
      precision: 'float32',
    },
    inputs: inputs.map((input) => ({
      name: input.name,
      dtype: input.dtype,
      shape: input.shape,
      file: 'inputs.safetensors',
      key: input.name,
      sha256: tree ? (inputsFile.tensorDigests.get(input.name)?.sha256 ?? '') : sha256(input.data),
    })),
    passes: manifestPasses,
    known_gaps: [],
    files,
    ...(tree ? { digests: treeDeclaration(treeChunkBytes) } : {}),
  };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  return { dir, bytes: total, engineOptions: spec.kvCache ? { 'scale.kv_cache': '1' } : {} };
}

function valuesOf(buffer: Uint8Array, record: ScaleRecord, seed: number): Uint8Array {
  const data = buffer.subarray(0, record.byteLength);
  fillRecord(data, record, seed);
  return data;
}

function parseArgs(argv: readonly string[]): { dir: string; spec: ScaleReferenceSpec } {
  const [dir, ...rest] = argv;
  if (dir === undefined) throw new Error('usage: scale-reference.ts <out-dir> [--tokens N] [--passes P] [--pcm L] [--kv-cache]');
  const value = (flag: string, fallback: number): number => {
    const at = rest.indexOf(flag);
    return at < 0 ? fallback : Number.parseInt(rest[at + 1] ?? '', 10);
  };
  const tokens = value('--tokens', 1024);
  return {
    dir,
    spec: {
      caseId: 'scale',
      prompt: Array.from({ length: tokens }, (_, i) => (i * 7919) % 65_536),
      pcmSamples: value('--pcm', 0),
      passes: value('--passes', 64),
      kvCache: rest.includes('--kv-cache'),
      chunkBytes: DEFAULT_CHUNK_DIGEST_BYTES,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { dir, spec } = parseArgs(process.argv.slice(2));
  const written = writeScaleReference(dir, spec);
  process.stdout.write(`${written.dir}: ${(written.bytes / 2 ** 20).toFixed(1)} MiB of tensors\n`);
}

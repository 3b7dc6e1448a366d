// Synthetic data and bundles for the comparator benchmark: values are a pure function of the
// element index (counter-based hash), so any chunk can be generated alone and a multi-GB bundle
// is written in bounded memory (raw data spilled chunk by chunk, then copied into the
// safetensors file by writeSafetensorsFile).
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DTYPE_SIZE, elementCount, type DType } from '../../main/core/bundle/dtype.ts';
import { contiguousStrides } from '../../main/core/bundle/layout.ts';
import type { BundleKind, BundleManifest, Contract } from '../../main/core/bundle/manifest-schema.ts';
import { writeAllSync, writeSafetensorsFile } from '../../main/core/bundle/safetensors-writer.ts';
import { faithfulContract as faithfulOf } from '../helpers/contracts.ts';

export type Variant = 'reference' | 'same' | 'noisy';

/** A 32-bit hash of (index, stream). */
function hash32(index: number, stream: number): number {
  let x = (index ^ Math.imul(stream, 0x9e3779b9)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * Fills `out` (a whole number of elements) with elements [first, first + n) of a tensor:
 * f32 reference values in [-4, 4); 'noisy' moves them by up to about one float32 ULP; bf16 takes the
 * top 16 bits and 'noisy' moves a third of them one bf16 ULP up and a third one down.
 */
export function fillElements(dtype: 'F32' | 'BF16', variant: Variant, first: number, out: Uint8Array): void {
  if (dtype === 'F32') {
    const values = new Float32Array(out.buffer, out.byteOffset, out.byteLength / 4);
    for (let k = 0; k < values.length; k++) {
      const i = first + k;
      const reference = (hash32(i, 1) / 4294967296 - 0.5) * 8;
      values[k] = variant === 'noisy' ? reference * (1 + (hash32(i, 2) / 4294967296 - 0.5) * 2 ** -22) : reference;
    }
    return;
  }
  const bits = new Uint16Array(out.buffer, out.byteOffset, out.byteLength / 2);
  const scratch = new Float32Array(1);
  const scratchBits = new Uint32Array(scratch.buffer);
  for (let k = 0; k < bits.length; k++) {
    const i = first + k;
    scratch[0] = (hash32(i, 1) / 4294967296 - 0.5) * 8;
    const pattern = (scratchBits[0] as number) >>> 16;
    bits[k] = variant === 'noisy' ? (pattern + ((hash32(i, 2) % 3) - 1)) & 0xffff : pattern;
  }
}

export function makeArray(dtype: 'F32' | 'BF16', variant: Variant, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  const step = 8 * 1024 * 1024;
  for (let at = 0; at < bytes; at += step) fillElements(dtype, variant, at / DTYPE_SIZE[dtype], out.subarray(at, Math.min(bytes, at + step)));
  return out;
}

export interface StreamedTensor {
  readonly name: string;
  readonly dtype: 'F32' | 'BF16';
  readonly shape: readonly number[];
  readonly variant: Variant;
  readonly contract: Contract | null;
}

/** Writes a one-pass bundle of `kind` holding `tensors`, generating their bytes chunk by chunk. */
export function writeStreamedBundle(dir: string, kind: BundleKind, tensors: readonly StreamedTensor[]): void {
  mkdirSync(dir, { recursive: true });
  const spillPath = join(dir, 'data.spill');
  const spill = openSync(spillPath, 'wx+');
  const chunk = new Uint8Array(8 * 1024 * 1024);
  const entries: Array<{ spec: StreamedTensor; position: number; bytes: number; sha256: string }> = [];
  let position = 0;
  try {
    for (const spec of tensors) {
      const size = DTYPE_SIZE[spec.dtype];
      const bytes = elementCount(spec.shape) * size;
      const hash = createHash('sha256');
      for (let at = 0; at < bytes; at += chunk.byteLength) {
        const part = chunk.subarray(0, Math.min(chunk.byteLength, bytes - at));
        fillElements(spec.dtype, spec.variant, at / size, part);
        hash.update(part);
        writeAllSync(spill, part, position + at);
      }
      entries.push({ spec, position, bytes, sha256: hash.digest('hex') });
      position += bytes;
    }
    const written = writeSafetensorsFile(
      join(dir, 'pass-000.safetensors'),
      entries.map((entry) => ({
        key: entry.spec.name,
        dtype: entry.spec.dtype as DType,
        shape: entry.spec.shape,
        byteLength: entry.bytes,
        from: { fd: spill, position: entry.position },
      })),
      { dataOrder: 'given' },
    );
    const manifest: BundleManifest = {
      schema: 'trace-inspector.bundle',
      schema_version: 1,
      kind,
      case: { id: 'bench', description: 'synthetic comparator benchmark data' },
      provenance: {
        model: { name: 'bench', checkpoint_revision: 'bench@1', weights_file: '../weights.safetensors', weights_sha256: 'a'.repeat(64) },
        generator: {
          implementation: 'tests/bench/comparator-data.ts',
          revision: '0123456789abcdef0123456789abcdef01234567',
          dirty: false,
          command: 'npm run bench',
        },
        runtime:
          kind === 'native'
            ? {
                node: process.version,
                engine_name: 'bench',
                engine_version: '0',
                engine_build_id: 'bench',
                engine_library_sha256: 'b'.repeat(64),
                engine_abi_version: 1,
              }
            : { torch: 'none', python: 'none' },
        precision: kind === 'native' ? 'native' : kind === 'oracle-f64' ? 'float64' : 'float32',
        created_at: '2026-12-02T10:00:00Z',
      },
      inputs: [],
      passes: [
        {
          index: 0,
          kind: 'prefill',
          mode: 'text',
          file: 'pass-000.safetensors',
          boundaries: entries.map(({ spec, bytes, sha256 }) => ({
            name: spec.name,
            stage: 'bench',
            dtype: spec.dtype,
            shape: [...spec.shape],
            strides: contiguousStrides(spec.shape),
            layout: 'row-major' as const,
            key: spec.name,
            sha256,
            byte_length: bytes,
            valid: null,
            contract: kind === 'native' ? null : spec.contract,
          })),
        },
      ],
      known_gaps: [],
      files: [{ path: 'pass-000.safetensors', sha256: written.sha256, bytes: written.bytes }],
      ...(kind === 'native' ? { run: { status: 'completed' as const, message: '', last_pass: 0, last_boundary: null } } : {}),
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  } finally {
    closeSync(spill);
    unlinkSync(spillPath);
  }
}

export const BIT_EXACT: Contract = { kind: 'bit_exact', nan_policy: 'positions', signed_zero: 'must_match', reason: 'benchmark' };

export function faithfulContract(rel: number): Contract {
  return faithfulOf({ abs: 1e-6, rel, formula: 'benchmark tolerance' });
}

// Small bundles for the comparator tests, written in temp folders (never in fixtures/) by the
// shared bundle-builder (tests/helpers/bundle-builder.ts), so a test can give every boundary any
// dtype, contract and valid region.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { elementCount, type DType } from '../../main/core/bundle/dtype.ts';
import type { BundleKind, BundleManifest, Contract, FaithfulContract, ValidRegion } from '../../main/core/bundle/manifest-schema.ts';
import { writeBundle } from '../helpers/bundle-builder.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { faithfulContract, type FaithfulOptions } from '../helpers/contracts.ts';
import { xorshift32 } from '../helpers/random.ts';

const made: string[] = [];
const opened: TraceBundle[] = [];

export async function cleanupBundles(): Promise<void> {
  for (const bundle of opened.splice(0)) await bundle.close();
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function tempDir(label: string): string {
  const dir = freshTempDir(`compare-${label}`);
  made.push(dir);
  return dir;
}

export interface TensorSpec {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
  readonly contract?: Contract | null;
  readonly valid?: ValidRegion | null;
  readonly strides?: readonly number[];
}

function provenance(kind: BundleKind): BundleManifest['provenance'] {
  const runtime: Record<string, string | number> =
    kind === 'native'
      ? {
          node: process.version,
          engine_name: 'test-engine',
          engine_version: '0.0.1',
          engine_build_id: 'build-1',
          engine_library_sha256: 'b'.repeat(64),
          engine_abi_version: 1,
        }
      : { torch: '1.13.1', python: '3.11.2' };
  return {
    model: { name: 'tiny-test', checkpoint_revision: 'tiny-test@1', weights_file: '../weights.safetensors', weights_sha256: 'a'.repeat(64) },
    generator: { implementation: 'tests/compare', revision: '0123456789abcdef0123456789abcdef01234567', dirty: false, command: 'vitest' },
    runtime,
    precision: kind === 'native' ? 'native' : kind === 'oracle-f64' ? 'float64' : 'float32',
    created_at: '2026-12-02T10:00:00Z',
  };
}

/** Writes a bundle of `kind` whose pass p holds passes[p] (every pass in mode text) and opens it. */
export async function makeBundle(kind: BundleKind, passes: ReadonlyArray<readonly TensorSpec[]>, label: string = kind): Promise<TraceBundle> {
  const dir = writeBundle(join(tempDir(label), 'bundle'), {
    kind,
    caseId: 'compare-test',
    description: 'comparator test bundle',
    weightsFile: '../weights.safetensors',
    weightsSha256: 'a'.repeat(64),
    provenance: provenance(kind),
    inputs: [],
    passes: passes.map((tensors, index) => ({
      kind: index === 0 ? 'prefill' : 'decode',
      mode: 'text',
      boundaries: tensors.map((tensor) => ({
        name: tensor.name,
        stage: tensor.name.split('.')[0] ?? 'test',
        dtype: tensor.dtype,
        shape: [...tensor.shape],
        ...(tensor.strides !== undefined ? { strides: [...tensor.strides] } : {}),
        data: tensor.data,
        valid: tensor.valid ?? null,
        contract: kind === 'native' ? null : (tensor.contract ?? bitExact()),
      })),
    })),
  });
  const bundle = await openBundle(dir);
  opened.push(bundle);
  return bundle;
}

/** A native and a reference bundle with one pass each. */
export async function pair(native: readonly TensorSpec[], reference: readonly TensorSpec[]): Promise<{ native: TraceBundle; reference: TraceBundle }> {
  return { native: await makeBundle('native', [native]), reference: await makeBundle('reference', [reference]) };
}

// ---- contracts ---------------------------------------------------------------------------------

export function bitExact(options: Partial<Pick<Contract, 'nan_policy' | 'signed_zero'>> = {}): Contract {
  return { kind: 'bit_exact', nan_policy: options.nan_policy ?? 'positions', signed_zero: options.signed_zero ?? 'must_match', reason: 'test' };
}

/** A faithful contract (abs and rel default to 0). */
export const faithful = (options: Omit<FaithfulOptions, 'audio'> = {}): FaithfulContract => faithfulContract(options);

// ---- data ---------------------------------------------------------------------------------------

export const f32 = (values: readonly number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);
export const f64 = (values: readonly number[]): Uint8Array => new Uint8Array(Float64Array.from(values).buffer);
export const i32 = (values: readonly number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
export const u8 = (values: readonly number[]): Uint8Array => Uint8Array.from(values);
export const i64 = (values: readonly bigint[]): Uint8Array => new Uint8Array(BigInt64Array.from(values).buffer);
export const u64 = (values: readonly bigint[]): Uint8Array => new Uint8Array(BigUint64Array.from(values).buffer);
/** Raw 16-bit patterns (bf16 or f16). */
export const bits16 = (patterns: readonly number[]): Uint8Array => new Uint8Array(Uint16Array.from(patterns).buffer);
/** Raw 32-bit float patterns. */
export const bits32 = (patterns: readonly number[]): Uint8Array => new Uint8Array(Uint32Array.from(patterns.map((p) => p >>> 0)).buffer);
/** Raw 64-bit float patterns. */
export const bits64 = (patterns: readonly bigint[]): Uint8Array => new Uint8Array(BigUint64Array.from(patterns).buffer);
/** Interleaved complex64 from [re, im] pairs. */
export const c64 = (pairs: ReadonlyArray<readonly [number, number]>): Uint8Array => f32(pairs.flat());

/** `count` pseudo-random floats in [-scale, scale) (deterministic). */
export function randomFloats(count: number, seed = 1, scale = 4): number[] {
  const next = xorshift32(seed);
  return Array.from({ length: count }, () => (next() / 4294967296 - 0.5) * 2 * scale);
}

/** The float32 value after `value` moved by `ulps` units in the last place (same sign region). */
export function stepF32(value: number, ulps: number): number {
  const bits = new Int32Array(Float32Array.from([value]).buffer);
  bits[0] = (bits[0] as number) + (value < 0 || Object.is(value, -0) ? -ulps : ulps);
  return new Float32Array(bits.buffer)[0] as number;
}

export function tensor(name: string, dtype: DType, shape: readonly number[], data: Uint8Array, extra: Partial<TensorSpec> = {}): TensorSpec {
  if (
    elementCount(shape) *
      ({ F32: 4, F16: 2, BF16: 2, F64: 8, I8: 1, I16: 2, I32: 4, I64: 8, U8: 1, U16: 2, U32: 4, U64: 8, BOOL: 1, C64: 8 } as const)[dtype] !==
    data.byteLength
  ) {
    throw new Error(`test tensor ${name}: ${data.byteLength} bytes do not fit ${dtype} ${JSON.stringify(shape)}`);
  }
  return { name, dtype, shape, data, ...extra };
}

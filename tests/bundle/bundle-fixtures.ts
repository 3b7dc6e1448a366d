// Small bundles and raw files for the bundle tests, built in temp folders (never in fixtures/).
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { DType } from '../../main/core/bundle/dtype.ts';
import { BundleError, type BundleErrorCode } from '../../main/core/bundle/errors.ts';
import type { BundleManifest } from '../../main/core/bundle/manifest-schema.ts';
import { NativeBundleWriter, type CaptureRecord, type NativeCaptureHeader } from '../../main/core/bundle/native-bundle-writer.ts';
import { MAX_HEADER_BYTES, parseSafetensorsHeader } from '../../main/core/bundle/safetensors-header.ts';
import { fileSegments, FileTreeHasher, schemeOf, type DigestScheme } from '../../main/core/bundle/tree-digest.ts';
import { tempDirTracker } from '../helpers/paths.ts';
import { xorshift32 } from '../helpers/random.ts';

export const { tempDir, removeTempDirs } = tempDirTracker('bundle');

export const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** Deterministic pseudo-random bytes (xorshift), so failures reproduce. */
export function bytes(length: number, seed = 1): Uint8Array {
  const next = xorshift32(seed);
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = next() & 0xff;
  return out;
}

export function f32(values: readonly number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer);
}

export function nativeHeader(weightsSha = 'a'.repeat(64)): NativeCaptureHeader {
  return {
    kind: 'native',
    case: { id: 'tiny', description: 'two passes for the bundle tests' },
    provenance: {
      model: { name: 'tiny-test', checkpoint_revision: 'tiny-test@1', weights_file: '../weights.safetensors', weights_sha256: weightsSha },
      generator: { implementation: 'trace-inspector capture', revision: '0123456789abcdef0123456789abcdef01234567', dirty: false, command: 'vitest' },
      runtime: {
        node: process.version,
        engine_name: 'test-engine',
        engine_version: '0.0.1',
        engine_build_id: 'build-1',
        engine_library_sha256: 'b'.repeat(64),
        engine_abi_version: 1,
      },
      precision: 'native',
      created_at: '2026-12-02T10:00:00Z',
    },
    inputs: [
      { name: 'prompt_tokens', dtype: 'I32', shape: [4], data: new Uint8Array(Int32Array.from([1, 2, -1, 3]).buffer) },
      { name: 'seed', dtype: 'U64', shape: [1], data: new Uint8Array(BigUint64Array.from([42n]).buffer) },
    ],
  };
}

function record(name: string, stage: string, dtype: DType, shape: number[], data: Uint8Array, strides?: number[]): CaptureRecord {
  const contiguous: number[] = [];
  let step = 1;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    contiguous[axis] = step;
    step *= shape[axis] as number;
  }
  return { name, stage, dtype, shape, strides: strides ?? contiguous, data };
}

/** The records of the small bundle, per pass, in emission order. */
export function smallRecords(): CaptureRecord[][] {
  return [
    [
      record('backbone.embed', 'backbone', 'F32', [4, 8], bytes(128, 1)),
      record('backbone.l0.k_append', 'backbone', 'F32', [4, 2, 3], bytes(96, 2), [1, 12, 4]), // engine emitted it transposed
      record('backbone.l0.kv_len', 'backbone', 'I32', [1], new Uint8Array(Int32Array.from([4]).buffer)),
      record('backbone.logits', 'backbone', 'F32', [10], f32([0, -0, 1.5, Number.NaN, Infinity, -Infinity, 3, 4, 5, 6])),
      record('sampler.text.kept', 'sampler', 'BOOL', [10], Uint8Array.from([1, 0, 1, 0, 1, 1, 0, 0, 0, 1])),
      record('gen.prng', 'gen', 'U64', [2], new Uint8Array(BigUint64Array.from([42n, 1n]).buffer)),
    ],
    [
      record('backbone.embed', 'backbone', 'F32', [1, 8], bytes(32, 3)),
      record('backbone.half', 'backbone', 'F16', [3], bytes(6, 4)),
      record('backbone.bhalf', 'backbone', 'BF16', [2, 2], bytes(8, 5)),
      record('depth.spectrum', 'depth', 'C64', [2], bytes(16, 6)),
      record('gen.prng', 'gen', 'U64', [2], new Uint8Array(BigUint64Array.from([42n, 2n]).buffer)),
    ],
  ];
}

/** Writes the small two-pass bundle with NativeBundleWriter into a fresh temp folder. */
export function writeSmallBundle(label = 'small'): { dir: string; manifestPath: string; records: CaptureRecord[][] } {
  const dir = join(tempDir(label), 'bundle');
  const records = smallRecords();
  const writer = NativeBundleWriter.create(dir, nativeHeader());
  records.forEach((pass, index) => {
    writer.beginPass(index, index === 0 ? 'prefill' : 'decode');
    for (const entry of pass) writer.appendRecord(entry);
    writer.endPass(index === 0 ? 'text' : 'audio');
  });
  const manifestPath = writer.finish({ status: 'completed', message: '', last_pass: 1, last_boundary: 'gen.prng' });
  return { dir, manifestPath, records };
}

export function readManifestJson(dir: string): BundleManifest {
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BundleManifest;
}

export function editManifest(dir: string, edit: (manifest: Record<string, unknown> & BundleManifest) => void): void {
  const manifest = readManifestJson(dir) as Record<string, unknown> & BundleManifest;
  edit(manifest);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

/**
 * A file's digest in a bundle's scheme: plain sha256, or the tree over the segments of its
 * header when the safetensors rules accept it (else the whole file is one segment), as the
 * reader's verification cuts it (verify-bundle-files.ts).
 */
export function fileDigestOf(content: Uint8Array, scheme: DigestScheme): string {
  if (scheme.kind === 'sha256') return sha256(content);
  let layout: { dataStart: number; tensors: readonly { begin: number; end: number }[] } | null = null;
  try {
    const length = content.byteLength >= 8 ? Number(Buffer.from(content.buffer, content.byteOffset, 8).readBigUInt64LE(0)) : -1;
    if (length >= 0 && length <= MAX_HEADER_BYTES && 8 + length <= content.byteLength) {
      const header = parseSafetensorsHeader(content.subarray(8, 8 + length), content.byteLength - 8 - length, 'file');
      layout = { dataStart: 8 + length, tensors: header.tensors };
    }
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
  }
  const hasher = new FileTreeHasher(
    scheme.chunkBytes,
    fileSegments(content.byteLength, layout?.dataStart ?? null, layout?.tensors ?? []).map((segment) => segment.end),
  );
  hasher.update(content);
  return hasher.digest();
}

/** Replaces a data file and updates its files[] entry (in the bundle's digest scheme), so only the intended fault remains. */
export function replaceDataFile(dir: string, relPath: string, content: Uint8Array): void {
  writeFileSync(join(dir, relPath), content);
  editManifest(dir, (manifest) => {
    const entry = manifest.files.find((file) => file.path === relPath);
    if (entry === undefined) throw new Error(`no files[] entry ${relPath}`);
    entry.sha256 = fileDigestOf(content, schemeOf(manifest));
    entry.bytes = statSync(join(dir, relPath)).size;
  });
}

/** A raw safetensors file from a header object and data bytes (no validation: for bad cases). */
export function rawSafetensors(header: unknown, data: Uint8Array, headerLength?: bigint): Uint8Array {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(headerLength ?? BigInt(json.length));
  return new Uint8Array(Buffer.concat([prefix, json, data]));
}

/** Awaits a rejection and checks it is a BundleError with `code` naming `file` and `field`. */
export async function expectBundleError(action: Promise<unknown> | (() => unknown), code: BundleErrorCode, file: string, field: string): Promise<BundleError> {
  let caught: unknown;
  try {
    if (typeof action === 'function') await action();
    else await action;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${code}`).toBeInstanceOf(BundleError);
  const error = caught as BundleError;
  expect(error.code, error.message).toBe(code);
  expect(error.message).toContain(file);
  expect(error.message).toContain(field);
  expect(error.file).toContain(file);
  return error;
}

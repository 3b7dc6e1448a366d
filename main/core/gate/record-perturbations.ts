// Host-side perturbations of a captured native bundle: one record of a copy of the bundle is
// changed in a deliberate way and the bundle's digests are updated, so the copy is a valid bundle
// that differs from the original in exactly that (pass, boundary). The self-test then proves the
// comparator flags exactly that spot with the right kind:
//   transpose_2d   a 2-D record written in the transposed memory order, read as declared  -> layout
//   round_bf16     an f32 record rounded to bf16 (nearest even) and widened back           -> value
//   flip_bit       one bit of one element flipped                                          -> value
//   swap_token     a token id replaced by another id                                       -> value (or tie order)
import { cp, open, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileDigestInScheme } from '../bundle/scheme-file-digest.ts';
import { chunkDigestOf, schemeOf, tensorDigestOf } from '../bundle/tree-digest.ts';
import { DTYPE_SIZE, isFloatDType, type DType } from '../bundle/dtype.ts';
import { MANIFEST_FILE_NAME, parseManifest, type BundleManifest } from '../bundle/manifest-schema.ts';
import { replaceManifestFile } from '../bundle/native-manifest.ts';
import { resolveInsideBundle } from '../bundle/path-confinement.ts';
import { SafetensorsFile } from '../bundle/safetensors-reader.ts';
import type { FailureKind } from './gate-types.ts';

export const RECORD_PERTURBATION_KINDS = ['transpose_2d', 'round_bf16', 'flip_bit', 'swap_token'] as const;
export type RecordPerturbationKind = (typeof RECORD_PERTURBATION_KINDS)[number];

export interface RecordPerturbation {
  kind: RecordPerturbationKind;
  pass: number;
  boundary: string;
  /** flip_bit: the element (row-major index); default the finite element of largest magnitude. */
  element?: number;
  /** flip_bit: the bit within the element (0 = least significant); default the top mantissa bit of a float, bit 1 of an integer. */
  bit?: number;
  /** swap_token: the id written instead; default the id + 2. */
  token?: number;
}

/** The failure kinds the comparator may rightly give each perturbation. */
export const EXPECTED_KINDS: Readonly<Record<RecordPerturbationKind, readonly FailureKind[]>> = {
  transpose_2d: ['layout'],
  round_bf16: ['value'],
  flip_bit: ['value'],
  swap_token: ['value', 'tie_order'],
};

export interface AppliedRecordPerturbation extends RecordPerturbation {
  /** What was changed, in words (which element, which bit, which ids). */
  detail: string;
  /** Elements whose bytes changed. */
  changedElements: number;
}

export class RecordPerturbationError extends Error {
  override name = 'RecordPerturbationError';
}

/** Copies a bundle folder to `dest`, which must not exist (or be empty). */
export async function copyBundle(source: string, dest: string): Promise<void> {
  const entries = await readdir(dest).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (entries.length > 0) throw new RecordPerturbationError(`${dest} exists and is not empty; a perturbed copy goes to a fresh folder`);
  await cp(source, dest, { recursive: true, errorOnExist: true, force: false });
}

const HALF_MANTISSA_BIT: Partial<Record<DType, number>> = { F32: 22, F64: 51, F16: 9, BF16: 6, C64: 22 };

function elementsOf(dtype: DType, bytes: Uint8Array): number {
  return bytes.byteLength / DTYPE_SIZE[dtype];
}

function floatAt(dtype: DType, view: DataView, index: number): number {
  switch (dtype) {
    case 'F32':
    case 'C64':
      return view.getFloat32(index * 4, true);
    case 'F64':
      return view.getFloat64(index * 8, true);
    default:
      return Number.NaN;
  }
}

/** Round-to-nearest-even of an f32 bit pattern to bf16, widened back to f32 bits. */
function roundThroughBf16(bits: number): number {
  const exponent = (bits >>> 23) & 0xff;
  if (exponent === 0xff) return bits; // inf and NaN keep their pattern
  const lower = bits & 0xffff;
  let upper = bits >>> 16;
  if (lower > 0x8000 || (lower === 0x8000 && (upper & 1) === 1)) upper += 1;
  return (upper << 16) >>> 0;
}

function transform(spec: RecordPerturbation, dtype: DType, shape: readonly number[], data: Uint8Array): { data: Uint8Array; detail: string } {
  const size = DTYPE_SIZE[dtype];
  const out = new Uint8Array(data);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const count = elementsOf(dtype, data);
  switch (spec.kind) {
    case 'transpose_2d': {
      const [rows, cols] = shape;
      if (shape.length !== 2 || rows === undefined || cols === undefined || rows < 2 || cols < 2) {
        throw new RecordPerturbationError(`transpose_2d needs a 2-D record with both extents >= 2; ${spec.boundary} has shape [${shape.join(', ')}]`);
      }
      // The buffer holds the transpose (column-major memory order) but is read as row-major [rows, cols].
      for (let i = 0; i < rows; i += 1) {
        for (let j = 0; j < cols; j += 1) {
          out.set(data.subarray((i * cols + j) * size, (i * cols + j + 1) * size), (j * rows + i) * size);
        }
      }
      return { data: out, detail: `[${rows}, ${cols}] written in column-major order, read as row-major` };
    }
    case 'round_bf16': {
      if (dtype !== 'F32') throw new RecordPerturbationError(`round_bf16 needs an F32 record; ${spec.boundary} is ${dtype}`);
      for (let i = 0; i < count; i += 1) view.setUint32(i * 4, roundThroughBf16(view.getUint32(i * 4, true)), true);
      return { data: out, detail: 'every element rounded to bf16 (nearest even) and widened back to f32' };
    }
    case 'flip_bit': {
      let element = spec.element;
      if (element === undefined) {
        element = 0;
        if (isFloatDType(dtype)) {
          let largest = -1;
          for (let i = 0; i < count; i += 1) {
            const magnitude = Math.abs(floatAt(dtype, view, i));
            if (Number.isFinite(magnitude) && magnitude > largest) {
              largest = magnitude;
              element = i;
            }
          }
        }
      }
      if (!Number.isInteger(element) || element < 0 || element >= count) {
        throw new RecordPerturbationError(`flip_bit: element ${element} is outside ${spec.boundary} (${count} elements)`);
      }
      const bit = spec.bit ?? HALF_MANTISSA_BIT[dtype] ?? 1;
      if (!Number.isInteger(bit) || bit < 0 || bit >= size * 8) throw new RecordPerturbationError(`flip_bit: bit ${bit} is outside a ${dtype} element`);
      const at = element * size + Math.floor(bit / 8); // little-endian: byte 0 holds bits 0..7
      out[at] = (out[at] as number) ^ (1 << (bit % 8));
      return { data: out, detail: `bit ${bit} of element ${element} flipped` };
    }
    case 'swap_token': {
      if (dtype !== 'I32' && dtype !== 'I64') throw new RecordPerturbationError(`swap_token needs an I32 or I64 token record; ${spec.boundary} is ${dtype}`);
      const before = dtype === 'I32' ? view.getInt32(0, true) : Number(view.getBigInt64(0, true));
      const after = spec.token ?? before + 2;
      if (after === before) throw new RecordPerturbationError(`swap_token: the token is already ${after}`);
      if (dtype === 'I32') view.setInt32(0, after, true);
      else view.setBigInt64(0, BigInt(after), true);
      return { data: out, detail: `token ${before} replaced by ${after}` };
    }
  }
}

/**
 * Applies one perturbation in place to the bundle in `bundleDir` (a copy: never the original
 * evidence) and rewrites the digests of the tensor and its file in manifest.json, so the bundle
 * opens cleanly and only the comparison can tell.
 */
export async function applyRecordPerturbation(bundleDir: string, spec: RecordPerturbation): Promise<AppliedRecordPerturbation> {
  const manifestPath = join(bundleDir, MANIFEST_FILE_NAME);
  const manifest: BundleManifest = parseManifest(JSON.parse(await readFile(manifestPath, 'utf8')), manifestPath);
  const pass = manifest.passes[spec.pass];
  const entry = pass?.boundaries.find((boundary) => boundary.name === spec.boundary);
  if (pass === undefined || entry === undefined) throw new RecordPerturbationError(`${manifestPath}: pass ${spec.pass} has no record ${spec.boundary}`);
  const filePath = await resolveInsideBundle(bundleDir, pass.file, { file: manifestPath, field: `passes[${spec.pass}].file` });

  const tensors = await SafetensorsFile.open(filePath);
  let position: number;
  let original: Uint8Array;
  try {
    const info = tensors.tensor(entry.key);
    if (info === undefined) throw new RecordPerturbationError(`${filePath}: no tensor ${entry.key}`);
    position = tensors.dataStart + info.begin;
    original = await tensors.readTensor(entry.key);
  } finally {
    await tensors.close();
  }
  const { data, detail } = transform(spec, entry.dtype, entry.shape, original);
  const size = DTYPE_SIZE[entry.dtype];
  let changedElements = 0;
  for (let i = 0; i < data.byteLength; i += size) {
    if (data.subarray(i, i + size).some((byte, k) => byte !== original[i + k])) changedElements += 1;
  }
  if (changedElements === 0)
    throw new RecordPerturbationError(`${spec.kind} leaves ${spec.boundary} of pass ${spec.pass} unchanged (${detail}); pick another record`);

  const handle = await open(filePath, 'r+');
  try {
    await handle.write(data, 0, data.byteLength, position);
  } finally {
    await handle.close();
  }
  // In the bundle's digest scheme (tree-digest.ts): a tree bundle's digests stay tree digests.
  const scheme = schemeOf(manifest);
  entry.sha256 = tensorDigestOf(data, scheme);
  if (entry.chunks !== undefined) {
    const chunkBytes = entry.chunks.bytes;
    entry.chunks = {
      bytes: chunkBytes,
      sha256: Array.from({ length: Math.ceil(data.byteLength / chunkBytes) }, (_, c) =>
        chunkDigestOf(data.subarray(c * chunkBytes, (c + 1) * chunkBytes), scheme),
      ),
    };
  }
  const fileEntry = manifest.files.find((file) => file.path === pass.file);
  if (fileEntry === undefined) throw new RecordPerturbationError(`${manifestPath}: ${pass.file} is not listed in files[]`);
  fileEntry.sha256 = await fileDigestInScheme(filePath, scheme);
  await replaceManifestFile(bundleDir, manifest);
  return { ...spec, detail, changedElements };
}

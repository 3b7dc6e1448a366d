// Writes a safetensors file (synchronously: the capture writer runs on the engine's thread).
// The file appears under its final name only when complete: it is written to a temporary name
// and hard-linked into place, which fails if the name exists, so an existing file is never
// overwritten, not even by a race.
import { closeSync, existsSync, linkSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { tempPathBeside } from './temp-name.ts';
import { createSha256 } from './digest.ts';
import { DTYPE_SIZE, elementCount, type DType } from './dtype.ts';
import { BundleError } from './errors.ts';
import { encodeSafetensorsHeader, METADATA_KEY, type DataOrder, type SafetensorsTensorInfo } from './safetensors-header.ts';
import { FileTreeHasher, PLAIN_SHA256, type DigestScheme } from './tree-digest.ts';

export const COPY_CHUNK_BYTES = 8 * 1024 * 1024;

/** A tensor held in memory. */
export interface InMemoryTensor {
  readonly key: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Row-major little-endian bytes. */
  readonly data: Uint8Array;
}

/** A tensor whose bytes lie in an open file (a capture spill), copied in chunks. */
export interface SpilledTensor {
  readonly key: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly byteLength: number;
  readonly from: { readonly fd: number; readonly position: number };
}

export type TensorToWrite = InMemoryTensor | SpilledTensor;

export interface SafetensorsWriteOptions {
  readonly metadata?: Readonly<Record<string, string>> | null;
  readonly chunkBytes?: number;
  /** Data-section order; header keys are sorted either way. Default 'key'. */
  readonly dataOrder?: DataOrder;
  /**
   * The digests to compute as the file is written (tree-digest.ts): plain sha256 (default) or
   * the tree, whose one pass also yields every tensor's digest and leaves (`tensorDigests`).
   */
  readonly digestScheme?: DigestScheme;
}

export interface WrittenTensorDigest {
  /** The tensor's digest in the scheme written. */
  readonly sha256: string;
  /** Its chunk digests (the tree's leaves); empty under plain sha256. */
  readonly chunks: readonly string[];
}

export interface WrittenFile {
  readonly path: string;
  readonly bytes: number;
  /** Digest of the whole file in the scheme written (plain: its sha256), computed while writing it. */
  readonly sha256: string;
  readonly tensors: readonly SafetensorsTensorInfo[];
  /** Under the tree scheme, each tensor's digest and leaves by key (computed in the same pass); else empty. */
  readonly tensorDigests: ReadonlyMap<string, WrittenTensorDigest>;
}

function byteLengthOfSource(tensor: TensorToWrite): number {
  return 'data' in tensor ? tensor.data.byteLength : tensor.byteLength;
}

export function writeSafetensorsFile(path: string, tensors: readonly TensorToWrite[], options: SafetensorsWriteOptions = {}): WrittenFile {
  if (existsSync(path)) throw new BundleError('E_TARGET_NOT_EMPTY', path, '(file)', 'already exists; writers never overwrite a file');
  const seen = new Set<string>();
  for (const tensor of tensors) {
    const field = `header[${JSON.stringify(tensor.key)}]`;
    if (tensor.key === METADATA_KEY || tensor.key.length === 0) throw new BundleError('E_RECORD', path, field, 'is not a usable tensor key');
    if (seen.has(tensor.key)) throw new BundleError('E_DUPLICATE_NAME', path, field, 'the key is given twice');
    seen.add(tensor.key);
    const expected = elementCount(tensor.shape) * DTYPE_SIZE[tensor.dtype];
    if (byteLengthOfSource(tensor) !== expected) {
      throw new BundleError(
        'E_BYTE_LENGTH',
        path,
        field,
        `${byteLengthOfSource(tensor)} bytes given but ${tensor.dtype} of shape [${tensor.shape.join(', ')}] needs ${expected}`,
      );
    }
  }
  const byKey = new Map(tensors.map((tensor) => [tensor.key, tensor]));
  const encoded = encodeSafetensorsHeader(
    tensors.map((tensor) => ({ key: tensor.key, dtype: tensor.dtype, shape: tensor.shape, byteLength: byteLengthOfSource(tensor) })),
    options.metadata,
    options.dataOrder ?? 'key',
  );
  const chunkBytes = options.chunkBytes ?? COPY_CHUNK_BYTES;
  const temp = tempPathBeside(path);
  const scheme = options.digestScheme ?? PLAIN_SHA256;
  const dataStart = encoded.prefix.byteLength;
  const hash =
    scheme.kind === 'tree'
      ? new FileTreeHasher(
          scheme.chunkBytes,
          encoded.entries.flatMap((entry) => [dataStart, dataStart + entry.begin, dataStart + entry.end]),
        )
      : createSha256();
  const fd = openSync(temp, 'wx');
  let position = 0;
  const put = (bytes: Uint8Array): void => {
    writeAllSync(fd, bytes, position);
    hash.update(bytes);
    position += bytes.byteLength;
  };
  try {
    put(encoded.prefix);
    let buffer: Buffer | null = null;
    const ordered = encoded.entries.map((entry) => byKey.get(entry.key) as TensorToWrite);
    for (let i = 0; i < ordered.length;) {
      const tensor = ordered[i] as TensorToWrite;
      if ('data' in tensor) {
        put(tensor.data);
        i += 1;
        continue;
      }
      // Coalesce a run of spilled tensors that lie back to back in the same file into one copy.
      let runBytes = tensor.byteLength;
      let next = i + 1;
      for (; next < ordered.length; next++) {
        const candidate = ordered[next] as TensorToWrite;
        if ('data' in candidate || candidate.from.fd !== tensor.from.fd || candidate.from.position !== tensor.from.position + runBytes) break;
        runBytes += candidate.byteLength;
      }
      buffer ??= Buffer.allocUnsafe(chunkBytes);
      let copied = 0;
      while (copied < runBytes) {
        const size = Math.min(chunkBytes, runBytes - copied);
        readExactlySync(tensor.from.fd, buffer, size, tensor.from.position + copied, path, tensor.key);
        put(buffer.subarray(0, size));
        copied += size;
      }
      i = next;
    }
    closeSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  publishWithoutOverwrite(temp, path);
  if (!(hash instanceof FileTreeHasher)) return { path, bytes: position, sha256: hash.digest('hex'), tensors: encoded.entries, tensorDigests: new Map() };
  const sha256 = hash.digest();
  const tensorDigests = new Map<string, WrittenTensorDigest>();
  for (const entry of encoded.entries) {
    const segment = hash.segmentAt(dataStart + entry.begin, dataStart + entry.end);
    if (segment === undefined) throw new Error(`internal: tensor ${entry.key} of ${path} is no segment of its tree`);
    tensorDigests.set(entry.key, { sha256: segment.digest, chunks: segment.leaves });
  }
  return { path, bytes: position, sha256, tensors: encoded.entries, tensorDigests };
}

/**
 * Moves a finished temporary file to `path` unless `path` exists. A hard link is atomic and
 * refuses an existing name; where the file system has no hard links, check-then-rename.
 */
export function publishWithoutOverwrite(temp: string, path: string): void {
  try {
    linkSync(temp, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      unlinkSync(temp);
      throw new BundleError('E_TARGET_NOT_EMPTY', path, '(file)', 'already exists; writers never overwrite a file', { cause: error });
    }
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'ENOSYS') {
      unlinkSync(temp);
      throw error;
    }
    if (existsSync(path)) {
      unlinkSync(temp);
      throw new BundleError('E_TARGET_NOT_EMPTY', path, '(file)', 'already exists; writers never overwrite a file', { cause: error });
    }
    renameSync(temp, path);
    return;
  }
  unlinkSync(temp);
}

export function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.byteLength) {
    done += writeSync(fd, bytes, done, bytes.byteLength - done, position + done);
  }
}

function readExactlySync(fd: number, buffer: Buffer, size: number, position: number, path: string, key: string): void {
  let done = 0;
  while (done < size) {
    const read = readSync(fd, buffer, done, size - done, position + done);
    if (read === 0) {
      throw new BundleError('E_FILE_SIZE', path, `header[${JSON.stringify(key)}]`, `the source ended at byte ${position + done}, ${size - done} bytes short`);
    }
    done += read;
  }
}

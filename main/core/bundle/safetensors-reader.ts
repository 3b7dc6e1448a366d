// Reads a safetensors file by offset: only the length prefix and the header are read at open
// (bounded and validated); tensors are read one at a time, whole or in chunks. The whole file
// is never read.
import { fstatSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { GuardedReadError, openRegularFile } from '../io/guarded-read.ts';
import { BundleError } from './errors.ts';
import { identityKey } from './file-pins.ts';
import { MAX_HEADER_BYTES, parseSafetensorsHeader, type SafetensorsTensorInfo } from './safetensors-header.ts';

export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

export interface SafetensorsOpenOptions {
  /** How messages name the file (e.g. bundle-relative); defaults to the path. */
  readonly displayName?: string;
}

export class SafetensorsFile {
  readonly path: string;
  readonly displayName: string;
  readonly fileSize: number;
  /** Byte position of the data section (8 + header length). */
  readonly dataStart: number;
  readonly metadata: Readonly<Record<string, string>> | null;
  /** Tensors in data order. */
  readonly tensors: readonly SafetensorsTensorInfo[];
  private readonly byKey: ReadonlyMap<string, SafetensorsTensorInfo>;
  private handle: FileHandle | null;

  private constructor(
    handle: FileHandle,
    path: string,
    displayName: string,
    fileSize: number,
    dataStart: number,
    tensors: readonly SafetensorsTensorInfo[],
    metadata: Readonly<Record<string, string>> | null,
  ) {
    this.handle = handle;
    this.path = path;
    this.displayName = displayName;
    this.fileSize = fileSize;
    this.dataStart = dataStart;
    this.tensors = tensors;
    this.metadata = metadata;
    this.byKey = new Map(tensors.map((tensor) => [tensor.key, tensor]));
  }

  static async open(path: string, options: SafetensorsOpenOptions = {}): Promise<SafetensorsFile> {
    const name = options.displayName ?? path;
    let opened;
    try {
      opened = await openRegularFile(path);
    } catch (cause) {
      if (!(cause instanceof GuardedReadError)) throw cause;
      throw new BundleError(cause.problem === 'missing' ? 'E_FILE_MISSING' : 'E_FILE_NOT_REGULAR', name, '(file)', cause.reason, { cause });
    }
    const { handle, size } = opened;
    try {
      if (size < 8) {
        throw new BundleError('E_SAFETENSORS_HEADER', name, 'header length', `the file holds ${size} bytes, fewer than the 8-byte header length`);
      }
      const prefix = await readExactly(handle, 8, 0, name);
      const headerLength = Buffer.from(prefix.buffer, prefix.byteOffset, 8).readBigUInt64LE(0);
      if (headerLength > BigInt(MAX_HEADER_BYTES)) {
        throw new BundleError('E_SAFETENSORS_HEADER', name, 'header length', `${headerLength} bytes exceeds the ${MAX_HEADER_BYTES}-byte limit`);
      }
      const length = Number(headerLength);
      if (8 + length > size) {
        throw new BundleError(
          'E_SAFETENSORS_HEADER',
          name,
          'header length',
          `${length} bytes runs past the end of the file (the file holds ${size} bytes, ${size - 8} after the length prefix)`,
        );
      }
      const headerBytes = await readExactly(handle, length, 8, name);
      const header = parseSafetensorsHeader(headerBytes, size - 8 - length, name);
      return new SafetensorsFile(handle, path, name, size, 8 + length, header.tensors, header.metadata);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  keys(): string[] {
    return this.tensors.map((tensor) => tensor.key);
  }

  tensor(key: string): SafetensorsTensorInfo | undefined {
    return this.byKey.get(key);
  }

  info(key: string): SafetensorsTensorInfo {
    const tensor = this.byKey.get(key);
    if (tensor === undefined) throw new BundleError('E_TENSOR_MISSING', this.displayName, `header[${JSON.stringify(key)}]`, 'no tensor with this key');
    return tensor;
  }

  /** The bytes of one tensor, exactly its span. */
  async readTensor(key: string): Promise<Uint8Array> {
    const tensor = this.info(key);
    return readExactly(this.openHandle(), tensor.byteLength, this.dataStart + tensor.begin, this.displayName);
  }

  /** Bytes [begin, end) of one tensor (a range inside its span). */
  async readTensorRange(key: string, begin: number, end: number): Promise<Uint8Array> {
    const tensor = this.info(key);
    if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end < begin || end > tensor.byteLength) {
      throw new RangeError(`bytes [${begin}, ${end}) are outside tensor "${key}" (${tensor.byteLength} bytes)`);
    }
    return readExactly(this.openHandle(), end - begin, this.dataStart + tensor.begin + begin, this.displayName);
  }

  /**
   * Bytes [begin, begin + dest.byteLength) of one tensor read into `dest` (a buffer the caller
   * reuses: a comparison's window), no array allocated.
   */
  async readTensorInto(key: string, begin: number, dest: Uint8Array): Promise<void> {
    const tensor = this.info(key);
    const end = begin + dest.byteLength;
    if (!Number.isSafeInteger(begin) || begin < 0 || end > tensor.byteLength) {
      throw new RangeError(`bytes [${begin}, ${end}) are outside tensor "${key}" (${tensor.byteLength} bytes)`);
    }
    await readExactlyInto(this.openHandle(), dest, this.dataStart + tensor.begin + begin, this.displayName);
  }

  /**
   * The bytes of one tensor in chunks of at most `chunkBytes` (each a fresh array the caller may
   * keep), so a multi-GB tensor is never held whole.
   */
  async *readTensorChunks(key: string, chunkBytes = DEFAULT_CHUNK_BYTES): AsyncGenerator<Uint8Array, void, undefined> {
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0) throw new RangeError(`chunkBytes must be a positive integer, got ${chunkBytes}`);
    const tensor = this.info(key);
    let done = 0;
    while (done < tensor.byteLength) {
      const size = Math.min(chunkBytes, tensor.byteLength - done);
      yield await readExactly(this.openHandle(), size, this.dataStart + tensor.begin + done, this.displayName);
      done += size;
    }
  }

  /**
   * The open file's identity (file-pins.ts identityKey): what any write to it changes. It is
   * asked before and after every pinned tensor read, so it is an fstat of the descriptor made on
   * this thread (a few microseconds): through the thread pool it cost two round trips per tensor,
   * more than hashing a small tensor, and most of a small case's comparison time.
   */
  async identity(): Promise<string> {
    return identityKey(fstatSync(this.openHandle().fd, { bigint: true }));
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await handle.close();
  }

  private openHandle(): FileHandle {
    if (this.handle === null) throw new Error(`${this.displayName}: the safetensors file is closed`);
    return this.handle;
  }
}

/**
 * Spans up to this size are read on the calling thread: a thread-pool round trip costs more than
 * copying 64 KiB from the page cache, and a case holds thousands of such tensors. Larger spans
 * are read asynchronously, so a large read never holds the thread.
 */
const SYNC_READ_BYTES = 64 * 1024;

async function readExactly(handle: FileHandle, length: number, position: number, name: string): Promise<Uint8Array> {
  return readExactlyInto(handle, new Uint8Array(length), position, name);
}

async function readExactlyInto(handle: FileHandle, out: Uint8Array, position: number, name: string): Promise<Uint8Array> {
  const length = out.byteLength;
  let done = 0;
  while (done < length) {
    const bytesRead =
      length <= SYNC_READ_BYTES
        ? readSync(handle.fd, out, done, length - done, position + done)
        : (await handle.read(out, done, length - done, position + done)).bytesRead;
    if (bytesRead === 0) {
      throw new BundleError(
        'E_FILE_SIZE',
        name,
        'data',
        `the file ended after ${position + done} bytes while ${position + length} were expected (it shrank while being read)`,
      );
    }
    done += bytesRead;
  }
  return out;
}

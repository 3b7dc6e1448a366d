// Shared file mappings through the C library (koffi), for the engine worker's hot path: a record
// frame or the crash crumb is stored with one memory copy into a MAP_SHARED mapping of a file
// instead of a write system call. A page of a shared file mapping belongs to the file (the page
// cache), not to the process: what was stored there is in the file when the process dies, by
// SIGSEGV, abort or SIGKILL alike, and a read() of the file by another process sees it.
//
// Linux and macOS only (the PROT_/MAP_ constants below are theirs); elsewhere nativeMemory()
// returns null and the callers keep their write() path. koffi.view() is not used (Electron
// refuses external buffers): bytes go in with memcpy from a typed array koffi passes zero-copy.
import { ftruncateSync } from 'node:fs';
import koffi from 'koffi';

const PROT_READ_WRITE = 0x1 | 0x2;
const MAP_SHARED = 0x1;
const ENOSPC = 28;

export interface NativeMemory {
  /** Maps `length` bytes of `fd` from offset 0, shared and writable; returns the address. */
  map(fd: number, length: number): number;
  unmap(address: number, length: number): void;
  /** Copies `bytes[0, length)` to `address`. The caller keeps `address + length` inside a mapping. */
  store(address: number, bytes: Uint8Array, length: number): void;
  /** Copies `length` bytes from the native `source` (an engine's record data) to `address`: one memcpy, no JS buffer. */
  storeFrom(address: number, source: bigint, length: number): void;
  /** Copies `length` bytes at `address` into `target[0, length)`. */
  load(target: Uint8Array, address: number, length: number): void;
  /** Zeroes `[address, address + length)`. */
  zero(address: number, length: number): void;
  /**
   * Makes `fd` at least `length` bytes long, zeros past its old end, with the disk blocks
   * reserved where posix_fallocate exists, so a later store cannot fail for want of space (a
   * store into a sparse page on a full disk would be a SIGBUS). Throws ENOSPC as an Error.
   */
  extend(fd: number, length: number): void;
}

type NativeFunction = (...args: unknown[]) => unknown;

let memory: NativeMemory | null | undefined;

/** The C library's mapping calls, or null where they are not available. */
export function nativeMemory(): NativeMemory | null {
  if (memory !== undefined) return memory;
  memory = null;
  if (process.platform !== 'linux' && process.platform !== 'darwin') return memory;
  try {
    const libc = koffi.load(null);
    const mmap = libc.func('uintptr_t mmap(uintptr_t addr, size_t length, int prot, int flags, int fd, int64_t offset)') as NativeFunction;
    const munmap = libc.func('int munmap(uintptr_t addr, size_t length)') as NativeFunction;
    const memcpy = libc.func('uintptr_t memcpy(uintptr_t dst, const void *src, size_t n)') as NativeFunction;
    const memcpyOut = libc.func('void *memcpy(void *dst, uintptr_t src, size_t n)') as NativeFunction;
    const memset = libc.func('uintptr_t memset(uintptr_t dst, int value, size_t n)') as NativeFunction;
    let fallocate: NativeFunction | null = null;
    try {
      fallocate = libc.func('int posix_fallocate(int fd, int64_t offset, int64_t length)') as NativeFunction;
    } catch {
      fallocate = null; // macOS: extend with ftruncate only
    }
    memory = {
      map(fd, length) {
        const address = mmap(0, length, PROT_READ_WRITE, MAP_SHARED, fd, 0);
        if (typeof address !== 'number' || address === 0) throw new Error(`mmap of ${length} bytes failed (errno ${koffi.errno()})`);
        return address;
      },
      unmap(address, length) {
        if (munmap(address, length) !== 0) throw new Error(`munmap failed (errno ${koffi.errno()})`);
      },
      store(address, bytes, length) {
        if (length > bytes.byteLength) throw new RangeError(`store of ${length} bytes from ${bytes.byteLength}`);
        if (length > 0) memcpy(address, bytes, length);
      },
      storeFrom(address, source, length) {
        if (length > 0) memcpy(address, source, length);
      },
      load(target, address, length) {
        if (length > target.byteLength) throw new RangeError(`load of ${length} bytes into ${target.byteLength}`);
        if (length > 0) memcpyOut(target, address, length);
      },
      zero(address, length) {
        if (length > 0) memset(address, 0, length);
      },
      extend(fd, length) {
        const status = fallocate === null ? -1 : (fallocate(fd, 0, length) as number);
        if (status === 0) return;
        if (status === ENOSPC) {
          throw Object.assign(new Error(`ENOSPC: no space left on device, reserving ${length} bytes for the capture spill`), { code: 'ENOSPC' });
        }
        ftruncateSync(fd, length); // no fallocate here, or not on this file system
      },
    };
  } catch {
    memory = null;
  }
  return memory;
}

// The engine worker's SpillLog (main/core/bundle/capture-spill.ts): frames are stored with one
// memory copy into a shared mapping of the pass's spill file, where the portable FileSpillLog
// makes one write system call each. Same bytes in the same file; what differs is how they get
// there, and that the file is reused from pass to pass:
//   - the file is extended with zeros (blocks reserved, see NativeMemory.extend) and mapped once;
//     frames are copied in one after another, each in two copies: all but its first 4 bytes,
//     then those (its magic), so a frame is in the file whole or has no magic; a frame bigger
//     than what is left doubles the mapping;
//   - when the pass is sealed (end), what it wrote is zeroed, so the file is all zeros again,
//     and kept; the next pass renames it to its own spill name instead of creating a file,
//     so its frames land in pages that are already in memory (no page allocation, no fault).
// After a crash the spill holds the pass's frames followed by zeros up to its mapped length:
// recovery reads frames up to the first one that is not whole and finds only zeros after.
import { closeSync, existsSync, openSync, renameSync, unlinkSync } from 'node:fs';
import type { SpillLog } from '../core/bundle/capture-spill.ts';
import type { NativeMemory } from './native-memory.ts';

const GROW_STEP = 1024 * 1024;
/** The leading bytes of every frame stored after the rest of it: its magic (capture-frame.ts). */
const SEAL_BYTES = 4;

export class MappedSpillLog implements SpillLog {
  private handle: number | null = null;
  private path: string | null = null;
  private address = 0;
  private capacity = 0;
  private used = 0;
  /** Between begin and end; otherwise `handle` (when set) is a zeroed log kept for the next pass. */
  private active = false;

  constructor(
    private readonly memory: NativeMemory,
    private readonly initialBytes = GROW_STEP,
  ) {}

  begin(path: string): void {
    if (this.active) throw new Error(`MappedSpillLog.begin: ${this.path} is still open`);
    if (this.handle !== null && this.path !== null) {
      if (existsSync(path)) throw new Error(`MappedSpillLog.begin: ${path} already exists`);
      renameSync(this.path, path); // the mapping follows the file
    } else {
      this.handle = openSync(path, 'wx+');
      try {
        this.resize(this.initialBytes);
      } catch (error) {
        closeSync(this.handle);
        this.handle = null;
        unlinkSync(path);
        throw error;
      }
    }
    this.path = path;
    this.used = 0;
    this.active = true;
  }

  append(bytes: Uint8Array, length: number): void {
    if (!this.active) throw new Error('MappedSpillLog.append: no pass log is open');
    const end = this.used + length;
    if (end > this.capacity) this.resize(Math.max(this.capacity * 2, Math.ceil(end / GROW_STEP) * GROW_STEP));
    // A frame's first bytes (its magic) are stored last, once the rest is in place: a copy that
    // the death of the process interrupted leaves a frame without its magic, which no reader
    // takes for a frame (a memcpy stores in no particular order; two calls are ordered).
    const at = this.address + this.used;
    const head = Math.min(SEAL_BYTES, length);
    if (length > head) this.memory.store(at + head, bytes.subarray(head, length), length - head);
    this.memory.store(at, bytes, head);
    this.used = end;
  }

  get size(): number {
    return this.used;
  }

  get fd(): number {
    if (this.handle === null || !this.active) throw new Error('MappedSpillLog: no pass log is open');
    return this.handle;
  }

  end(): void {
    if (!this.active) return;
    // The pass is sealed and journaled: its frames are not needed. Zeroed, the file is an empty
    // log again (recovery deletes the spill of a sealed pass whatever it holds).
    this.memory.zero(this.address, this.used);
    this.used = 0;
    this.active = false;
  }

  close(): void {
    if (this.handle === null) return;
    this.memory.unmap(this.address, this.capacity);
    closeSync(this.handle);
    // An open pass's log stays for recovery; a zeroed one kept for reuse is nothing.
    if (!this.active && this.path !== null) unlinkSync(this.path);
    this.handle = null;
    this.path = null;
    this.address = 0;
    this.capacity = 0;
    this.used = 0;
    this.active = false;
  }

  private resize(capacity: number): void {
    const fd = this.handle;
    if (fd === null) throw new Error('MappedSpillLog: no file');
    this.memory.extend(fd, capacity);
    const address = this.memory.map(fd, capacity);
    if (this.address !== 0) this.memory.unmap(this.address, this.capacity);
    this.address = address;
    this.capacity = capacity;
  }
}

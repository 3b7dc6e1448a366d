// Where the frames of a pass go while it is captured (capture-frame.ts): a SpillLog. The writer
// needs three things of it: an append that, once returned, outlives the death of the process
// (the kernel keeps what was written to a file, or stored into a shared mapping of one); a log
// that starts empty (no file, or a file of zeros); and a descriptor to read the log back when
// the pass is sealed.
//
// FileSpillLog makes one positioned write per frame: the capture writer thread's log (the
// engine's thread only copies records into the capture pool, main/engine-host/capture-pool.ts),
// and the engine thread's own where the pool is not available.
import { closeSync, existsSync, ftruncateSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';

export interface SpillLog {
  /** Starts the log of a pass at `path`, which must not exist. The log is empty. */
  begin(path: string): void;
  /**
   * Appends `bytes[0, length)`, one frame. Once this returns, the bytes survive the death of this
   * process; a death before leaves a frame no reader takes for whole: the log ends inside it
   * (a write() lands as a prefix). The frame's checksum is checked on top of that.
   */
  append(bytes: Uint8Array, length: number): void;
  /** Bytes appended since `begin`. */
  readonly size: number;
  /** A descriptor to read the log back through, between `begin` and `end`. */
  readonly fd: number;
  /** The pass is sealed: its log is not needed any more (deleted, or kept zeroed for reuse). */
  end(): void;
  /** Stops without sealing: the log of an open pass stays on disk for recovery. Idempotent. */
  close(): void;
}

/** Makes the log a writer uses; called once per writer. */
export type SpillLogFactory = () => SpillLog;

/**
 * One positioned write per frame. The file of the first pass is created; when a pass is sealed
 * its file is truncated to nothing and kept, and the next pass renames it to its own spill name
 * (creating a file costs more than the rest of a small pass's sealing on some file systems).
 */
export class FileSpillLog implements SpillLog {
  private handle: number | null = null;
  private path: string | null = null;
  private written = 0;
  /** Between begin and end; otherwise `handle` (when set) is an empty log kept for the next pass. */
  private active = false;

  begin(path: string): void {
    if (this.active) throw new Error(`FileSpillLog.begin: ${this.path} is still open`);
    if (this.handle !== null && this.path !== null) {
      if (existsSync(path)) throw new Error(`FileSpillLog.begin: ${path} already exists`);
      renameSync(this.path, path);
    } else {
      this.handle = openSync(path, 'wx+'); // read back when the pass is sealed
    }
    this.path = path;
    this.written = 0;
    this.active = true;
  }

  append(bytes: Uint8Array, length: number): void {
    const fd = this.fd;
    let done = 0;
    while (done < length) done += writeSync(fd, bytes, done, length - done, this.written + done);
    this.written += length;
  }

  get size(): number {
    return this.written;
  }

  get fd(): number {
    if (this.handle === null || !this.active) throw new Error('FileSpillLog: no pass log is open');
    return this.handle;
  }

  end(): void {
    if (!this.active || this.handle === null) return;
    // The pass is sealed and journaled: its frames are not needed; empty, the file is a new log.
    ftruncateSync(this.handle, 0);
    this.written = 0;
    this.active = false;
  }

  close(): void {
    if (this.handle === null) return;
    closeSync(this.handle);
    // An open pass's log stays for recovery; an emptied one kept for reuse is nothing.
    if (!this.active && this.path !== null) unlinkSync(this.path);
    this.handle = null;
    this.path = null;
    this.written = 0;
    this.active = false;
  }
}

// Reading a boundary in fixed windows: a bundle hands its tensor over in chunks of whatever size
// its reader chose; the comparator (and the inspector's window stream) want whole windows. Every
// chunk is digest-verified by the reader; finish() runs the stream to its end so the tensor's
// sha256 is checked before a result is returned.

/**
 * Largest single read asked of a bundle. The reader hands every chunk over as a fresh array; at
 * 1 MiB the garbage is collected promptly (8 MiB reads left ~100 MiB of dead chunks waiting for
 * a GC, several hundred under load), and the windows still fill in whole.
 */
export const MAX_READ_BYTES = 1024 * 1024;

/**
 * Copies a chunked byte stream into fixed windows, whatever the producer's chunk sizes, with one
 * chunk read ahead (so the next read runs while the current window is compared).
 */
export class ChunkStream {
  private chunk: Uint8Array | null = null;
  private offset = 0;
  private pending: Promise<IteratorResult<Uint8Array, void>> | null;
  private ended = false;

  constructor(private readonly iterator: AsyncGenerator<Uint8Array, void, undefined>) {
    this.pending = this.ahead();
  }

  private ahead(): Promise<IteratorResult<Uint8Array, void>> {
    const next = this.iterator.next();
    next.catch(() => undefined); // awaited later; never an unhandled rejection
    return next;
  }

  /** Fills `dest` completely; returns the bytes copied (fewer only when the stream ended). */
  async fill(dest: Uint8Array): Promise<number> {
    let filled = 0;
    while (filled < dest.byteLength) {
      if (this.chunk === null || this.offset >= this.chunk.byteLength) {
        if (this.ended || this.pending === null) break;
        const result = await this.pending;
        if (result.done === true) {
          this.ended = true;
          this.pending = null;
          break;
        }
        this.chunk = result.value;
        this.offset = 0;
        this.pending = this.ahead();
      }
      const take = Math.min(dest.byteLength - filled, this.chunk.byteLength - this.offset);
      dest.set(this.chunk.subarray(this.offset, this.offset + take), filled);
      this.offset += take;
      filled += take;
    }
    return filled;
  }

  /** Runs the stream to its end (the reader verifies the tensor's sha256 there); false if bytes were left. */
  async finish(): Promise<boolean> {
    if (this.chunk !== null && this.offset < this.chunk.byteLength) return false;
    while (!this.ended && this.pending !== null) {
      const result = await this.pending;
      if (result.done === true) {
        this.ended = true;
        this.pending = null;
        break;
      }
      if (result.value.byteLength > 0) return false;
      this.pending = this.ahead();
    }
    return true;
  }

  async abort(): Promise<void> {
    try {
      await this.iterator.return(undefined);
    } catch {
      // the comparison already failed; the first error is the one reported
    }
  }
}

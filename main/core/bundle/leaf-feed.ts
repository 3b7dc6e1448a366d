// The leaves of a tree-sha256 bundle's tensors taken from the reads a comparison makes anyway
// (bundle-reader.ts boundaryWindows), so its deferred verification (fed-verification.ts) need not
// read those bytes again: the bytes the comparison judged are the bytes hashed. A window counts
// only when it covers whole leaves — it starts on the chunk grid of its tensor (leaves are cut
// from each tensor's first byte) and ends on it or at the tensor's end; anything else, and every
// leaf never supplied, is read and hashed by the verification's workers when the feed ends.
import { leafHashPool, type LeafHashPool } from './leaf-hash-pool.ts';

/** Bytes whose leaves came from a comparison's reads, and bytes the verification read itself. */
export interface ReadOnceTally {
  /** Tensor bytes hashed from the buffer the comparison read them into. */
  fedBytes: number;
  /** Tensor bytes of fed tensors the verification had to read itself (never supplied, or unaligned). */
  rereadBytes: number;
}

/** Since the process started: what `npm run bench` prints and the tests check. */
export const readOnceTally: ReadOnceTally = { fedBytes: 0, rereadBytes: 0 };

const tensorId = (file: string, key: string): string => `${file}\u0000${key}`;

export class LeafFeed {
  private open = true;
  private readonly pending = new Set<Promise<void>>();
  private readonly supplied = new Map<string, (string | undefined)[]>();
  private ended: ((leaves: ReadonlyMap<string, readonly (string | undefined)[]> | null) => void) | null = null;
  private readonly result: Promise<ReadonlyMap<string, readonly (string | undefined)[]> | null>;

  constructor(
    readonly chunkBytes: number,
    private readonly pool: LeafHashPool = leafHashPool(),
  ) {
    this.result = new Promise((resolve) => {
      this.ended = resolve;
    });
  }

  /** Whether reads are still taken (until end() or abandon()). */
  get accepting(): boolean {
    return this.open;
  }

  /**
   * Bytes [offset, offset + bytes.byteLength) of tensor `key` of bundle file `file` (`tensorBytes`
   * long), just read: their leaves are hashed (copied first, so the caller may reuse `bytes` at
   * once) when the range covers whole leaves; otherwise nothing is taken.
   */
  supply(file: string, key: string, tensorBytes: number, offset: number, bytes: Uint8Array): void {
    if (!this.open || bytes.byteLength === 0) return;
    const end = offset + bytes.byteLength;
    if (offset % this.chunkBytes !== 0 || (end % this.chunkBytes !== 0 && end !== tensorBytes)) return;
    const id = tensorId(file, key);
    let leaves = this.supplied.get(id);
    if (leaves === undefined) {
      leaves = [];
      this.supplied.set(id, leaves);
    }
    const first = offset / this.chunkBytes;
    if (leaves[first] !== undefined) return; // read again (a second look): its leaves are in
    const into = leaves;
    const job = this.pool.leaves(bytes, this.chunkBytes).then(
      (hashed) => {
        hashed.forEach((leaf, i) => {
          into[first + i] = leaf;
        });
      },
      // A worker that failed leaves its leaves unsupplied: the verification reads them itself.
      () => undefined,
    );
    this.pending.add(job);
    void job.finally(() => this.pending.delete(job));
  }

  /** Takes the workers' answers in (LeafHashPool.takeAnswers). */
  takeAnswers(): void {
    this.pool.takeAnswers();
  }

  /** No more reads are taken; the leaves supplied so far are handed to leaves() once hashed. */
  end(): void {
    if (!this.open) return;
    this.open = false;
    const ended = this.ended;
    void Promise.all(this.pending).then(() => ended?.(this.supplied));
  }

  /** The bundle was dropped unsettled: the verification stops without reading the rest. */
  abandon(): void {
    if (!this.open) return; // ended: the verification judges what it was given
    this.open = false;
    this.ended?.(null);
  }

  /** The leaves supplied per tensor (by index, gaps where none was), once end() was called; null if abandoned. */
  leaves(): Promise<ReadonlyMap<string, readonly (string | undefined)[]> | null> {
    return this.result;
  }

  static leavesOf(all: ReadonlyMap<string, readonly (string | undefined)[]>, file: string, key: string): readonly (string | undefined)[] {
    return all.get(tensorId(file, key)) ?? [];
  }
}

// Streams one boundary of one or both sides in lockstep windows of whole elements, so a view of
// a multi-GB tensor holds a window per side and never the tensor. The comparator's ChunkStream
// does the copying (with one read ahead); every stream that runs to its end has had its tensor's
// sha256 checked by the reader, so a view is only returned from verified bytes.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { ChunkStream, MAX_READ_BYTES } from '../compare/chunk-stream.ts';

/** Bytes per side a window holds at most (whole elements, at least one). */
export const WINDOW_BYTES = 1024 * 1024;

export interface Window {
  /** Flat index of the window's first element. */
  readonly start: number;
  readonly count: number;
  /** The window's bytes (fresh, 8-byte aligned, reused by the next window), or null for an absent side. */
  readonly native: Uint8Array | null;
  readonly reference: Uint8Array | null;
}

export interface WindowPlan {
  readonly pass: number;
  readonly name: string;
  readonly elementBytes: number;
  readonly elements: number;
  /** Elements per window (the caller aligns it to rows when it can). */
  readonly windowElements: number;
  /**
   * 'foreground' (the default): a view someone is waiting to see (a heatmap, a series).
   * 'background': statistics asked for beside it; they yield to foreground streams (below).
   */
  readonly priority?: 'foreground' | 'background';
}

// Streams of one process share one thread. A background stream (error statistics, special
// values: each reads both sides of a boundary whole, sha256 included) that was asked for earlier
// — often for a row the user already left — would otherwise interleave window by window with the
// heatmap the user is now waiting for and double its time. So a background stream waits before
// each window while any foreground stream runs; it resumes when none does.
let foregroundStreams = 0;
let backgroundWaiters: (() => void)[] = [];

function beginForeground(): () => void {
  foregroundStreams += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    foregroundStreams -= 1;
    if (foregroundStreams > 0) return;
    const waiting = backgroundWaiters;
    backgroundWaiters = [];
    for (const resume of waiting) resume();
  };
}

function foregroundIdle(): Promise<void> | null {
  return foregroundStreams === 0 ? null : new Promise((resume) => backgroundWaiters.push(resume));
}

/** The largest element count of whole `rowElements` rows that fits WINDOW_BYTES, else WINDOW_BYTES worth of elements. */
export function rowAlignedWindow(elementBytes: number, rowElements: number): number {
  const budget = Math.max(1, Math.floor(WINDOW_BYTES / elementBytes));
  if (rowElements <= 0 || rowElements > budget) return budget;
  return Math.floor(budget / rowElements) * rowElements;
}

/**
 * Calls `visit` for every window in order. `visit` may return 'stop' to end early: the streams are
 * then abandoned without their digest check, which only callers that already hold verified
 * conclusions may do.
 */
export async function streamWindows(
  native: TraceBundle | null,
  reference: TraceBundle | null,
  plan: WindowPlan,
  visit: (window: Window) => void | 'stop',
): Promise<void> {
  const windowBytes = Math.max(1, plan.windowElements) * plan.elementBytes;
  const readBytes = Math.min(windowBytes, MAX_READ_BYTES);
  const open = (bundle: TraceBundle | null): ChunkStream | null =>
    bundle === null ? null : new ChunkStream(bundle.readBoundaryChunks(plan.pass, plan.name, readBytes));
  const streams = [open(native), open(reference)] as const;
  const buffers = streams.map((stream) => (stream === null ? null : new Uint8Array(windowBytes)));
  const live = streams.filter((stream): stream is ChunkStream => stream !== null);
  const background = plan.priority === 'background';
  const endForeground = background ? null : beginForeground();
  try {
    for (let start = 0; start < plan.elements; start += plan.windowElements) {
      if (background) await foregroundIdle();
      const count = Math.min(plan.windowElements, plan.elements - start);
      const bytes = count * plan.elementBytes;
      const targets = buffers.map((buffer) => (buffer === null ? null : buffer.subarray(0, bytes)));
      await Promise.all(
        streams.map(async (stream, side) => {
          const target = targets[side] ?? null;
          if (stream === null || target === null) return;
          const got = await stream.fill(target);
          if (got !== bytes)
            throw new Error(
              `pass ${plan.pass} boundary "${plan.name}" ended after ${start * plan.elementBytes + got} bytes, its shape needs ${plan.elements * plan.elementBytes}`,
            );
        }),
      );
      if (visit({ start, count, native: targets[0] ?? null, reference: targets[1] ?? null }) === 'stop') {
        await Promise.all(live.map((stream) => stream.abort()));
        return;
      }
    }
    const complete = await Promise.all(live.map((stream) => stream.finish()));
    if (complete.some((done) => !done)) throw new Error(`pass ${plan.pass} boundary "${plan.name}" holds more bytes than its shape`);
  } catch (error) {
    await Promise.all(live.map((stream) => stream.abort()));
    throw error;
  } finally {
    endForeground?.();
  }
}

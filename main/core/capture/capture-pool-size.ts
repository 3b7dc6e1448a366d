// The capture pool's ring size for a capture against a reference bundle. The pool stores to every
// page of its ring when it opens (capture-pool.ts: no page fault inside a pass), so the default
// 64 MiB ring cost a capture of the embedded default, a few hundred KiB of records, about 0.1 s of
// CPU and 64 MiB of page cache per case. Sized from what the reference recorded instead: room for
// PASSES_AHEAD of its largest passes (the engine runs that far ahead of the writer before it
// waits for room), never less than MIN_RING_BYTES nor more than the default ring. An engine that
// records more than its reference is still captured whole: the ring wraps, waits for the writer,
// or grows for a record larger than itself.
import { frameHeaderBytes } from '../bundle/capture-frame.ts';
import { entryBytes } from '../bundle/capture-pool-layout.ts';
import { DTYPE_SIZE, elementCount } from '../bundle/dtype.ts';
import type { PassEntry } from '../bundle/manifest-schema.ts';
import { DEFAULT_POOL_BYTES } from '../../engine-host/capture-pool.ts';

const PASSES_AHEAD = 4;
const MIN_RING_BYTES = 4 * 1024 * 1024;
/** The BEGIN_PASS and END_PASS entries and the pass's output mode, generously. */
const PASS_ENTRY_BYTES = 512;

/** The ring's bytes a pass of these boundaries takes: one frame entry per record. */
function passRingBytes(pass: PassEntry): number {
  let bytes = PASS_ENTRY_BYTES;
  for (const entry of pass.boundaries) {
    const header = frameHeaderBytes(entry.shape.length, Buffer.byteLength(entry.name, 'utf8'), Buffer.byteLength(entry.stage, 'utf8'));
    bytes += entryBytes(header + elementCount(entry.shape) * DTYPE_SIZE[entry.dtype]);
  }
  return bytes;
}

/** The ring size for capturing the passes of `passes` (a reference's). */
export function capturePoolBytes(passes: readonly PassEntry[]): number {
  let largest = 0;
  for (const pass of passes) largest = Math.max(largest, passRingBytes(pass));
  const wanted = Math.ceil((PASSES_AHEAD * largest) / MIN_RING_BYTES) * MIN_RING_BYTES;
  return Math.min(DEFAULT_POOL_BYTES, Math.max(MIN_RING_BYTES, wanted));
}

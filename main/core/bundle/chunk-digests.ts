// Chunked tensor digests (docs/bundle-format.md, "Chunk digests"): beside a tensor's sha256, a
// bundle may state the sha256 of every fixed-size chunk of its bytes. Verification then
// parallelises across chunks, and a range read (the bit inspector, a zoomed heatmap) checks only
// the chunks it touches instead of hashing the whole tensor. Optional: bundles without them
// keep working, and the whole-tensor sha256 stays authoritative for full reads.
import { z } from 'zod';
import { createSha256 } from './digest.ts';

/** Smallest and largest chunk a manifest may declare (powers of two). */
export const MIN_CHUNK_DIGEST_BYTES = 64 * 1024;
export const MAX_CHUNK_DIGEST_BYTES = 1024 * 1024 * 1024;
/** What the project's writers use: large enough that the list stays short, small enough for a range read. */
export const DEFAULT_CHUNK_DIGEST_BYTES = 4 * 1024 * 1024;

export const ChunkDigestsSchema = z.strictObject({
  /** Chunk size in bytes (a power of two); the last chunk holds the remainder. */
  bytes: z
    .number()
    .int()
    .min(MIN_CHUNK_DIGEST_BYTES, `a chunk is at least ${MIN_CHUNK_DIGEST_BYTES} bytes`)
    .max(MAX_CHUNK_DIGEST_BYTES, `a chunk is at most ${MAX_CHUNK_DIGEST_BYTES} bytes`)
    .refine((n) => (n & (n - 1)) === 0, 'a chunk size is a power of two'),
  /** sha256 (lowercase hex) of each chunk, in order: ceil(byte_length / bytes) of them. */
  sha256: z.array(z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lowercase hex digits')),
});
export type ChunkDigests = z.infer<typeof ChunkDigestsSchema>;

export const chunkCount = (byteLength: number, chunkBytes: number): number => Math.ceil(byteLength / chunkBytes);

/** Why a tensor's chunk list does not fit its byte length, or null. */
export function chunkListProblem(chunks: ChunkDigests, byteLength: number): string | null {
  const expected = chunkCount(byteLength, chunks.bytes);
  return chunks.sha256.length === expected
    ? null
    : `lists ${chunks.sha256.length} chunk digests; ${byteLength} bytes in chunks of ${chunks.bytes} make ${expected}`;
}

/** The chunks [first, last] a byte range [begin, end) of a tensor touches (end > begin). */
export function chunksCovering(begin: number, end: number, chunkBytes: number): { first: number; last: number } {
  return { first: Math.floor(begin / chunkBytes), last: Math.floor((end - 1) / chunkBytes) };
}

/** sha256 of each chunk of `data` (a tensor's bytes from chunk `firstChunk` on). */
export function chunkDigestsOf(data: Uint8Array, chunkBytes: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < data.byteLength; at += chunkBytes)
    out.push(
      createSha256()
        .update(data.subarray(at, Math.min(at + chunkBytes, data.byteLength)))
        .digest('hex'),
    );
  return out;
}

// A large file hashed in parts by several workers (split-hash-job.ts) gives exactly what hashing
// it whole gives — its sha256, every span's sha256 and chunk digests, in the spans' order — and a
// file that changes between its parts is refused as changed, never combined. Sizes are KB: the
// split thresholds are the test's, the production ones are tens of MB.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashFilesInParallel, type HashJob, type HashOutcome, type HashSpan } from '../../main/core/bundle/parallel-verify.ts';
import { combineParts, splitHashJob } from '../../main/core/bundle/split-hash-job.ts';
import { tempDirTracker } from '../helpers/paths.ts';

const { tempDir, removeTempDirs } = tempDirTracker('split-hash');
afterAll(removeTempDirs);

const SIZES = { fileBytes: 4096, partBytes: 40_000 };

/** A 200 KB file with a 96-byte "header" and twelve spans of varied sizes, some with chunk digests, listed out of file order. */
function fileWithSpans(): { path: string; job: HashJob; bytes: number } {
  const bytes = 96 + 12 * 16_000;
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 2654435761) >>> 24;
  const path = join(tempDir('file'), 'pass.safetensors');
  writeFileSync(path, data);
  const spans: HashSpan[] = [];
  for (let s = 0; s < 12; s++) spans.push({ begin: 96 + s * 16_000, end: 96 + (s + 1) * 16_000 - (s % 3) * 100, chunkBytes: s % 2 === 0 ? 4096 : null });
  // The manifest's order is not the file's.
  spans.reverse();
  return { path, job: { path, spans, settleMs: 0 }, bytes };
}

const ok = (outcome: HashOutcome | null | undefined): Extract<HashOutcome, { ok: true }> => {
  if (outcome?.ok !== true) throw new Error(`not hashed: ${JSON.stringify(outcome)}`);
  return outcome;
};

describe('hashing one file in parts', () => {
  it('is split into its own sha256 and parts of its spans, and combined gives what hashing it whole gives', async () => {
    const { job, bytes } = fileWithSpans();
    const parts = splitHashJob(job, bytes, SIZES);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts[0]?.spans).toEqual([]);
    expect(parts[0]?.range).toBeUndefined();
    expect(parts.slice(1).flatMap((part) => part.spans)).toHaveLength(job.spans.length);
    const [whole] = await hashFilesInParallel([job]);
    const combined = combineParts(parts, job.spans, (await hashFilesInParallel(parts)) as HashOutcome[]);
    expect(ok(combined).sha256).toBe(ok(whole).sha256);
    expect(ok(combined).bytes).toBe(bytes);
    expect(ok(combined).spans).toEqual(ok(whole).spans);
    expect(ok(combined).spans.some((span) => span.chunks.length > 1)).toBe(true);
    expect(ok(combined).pin.identity).toBe(ok(whole).pin.identity);
  });

  it('a small file, or one without tensors, is one job', () => {
    const { job, bytes } = fileWithSpans();
    expect(splitHashJob(job, bytes)).toEqual([job]);
    expect(splitHashJob({ ...job, spans: [] }, bytes, SIZES)).toEqual([{ ...job, spans: [] }]);
  });

  it('a file written between its parts is refused as changed, never combined', async () => {
    const { path, job, bytes } = fileWithSpans();
    const parts = splitHashJob(job, bytes, SIZES);
    const [first] = await hashFilesInParallel(parts.slice(0, 1));
    appendFileSync(path, new Uint8Array([1]));
    const rest = await hashFilesInParallel(parts.slice(1));
    const combined = combineParts(parts, job.spans, [first, ...rest] as HashOutcome[]);
    expect(combined.ok).toBe(false);
    expect(combined.ok === false && combined.problem).toBe('changed');
  });
});

// Chunk digests (main/core/bundle/chunk-digests.ts, docs/bundle-format.md): validated with the
// manifest, verified with the file when a bundle is opened (a wrong one is E_DIGEST naming the
// file, the tensor and the chunk), and what lets a range read check only the chunks it touches.
// Bundles without them keep working: their range reads verify the whole tensor.
import { createHash } from 'node:crypto';
import { openSync, readFileSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import { dummyWeights, faithful, removeTempDirs, tempDir } from '../gate/gate-fixtures.ts';
import { writeBundle } from '../helpers/bundle-builder.ts';
import { rejectionOf } from '../helpers/rejection.ts';

afterAll(removeTempDirs);

const CHUNK = 64 * 1024;
const ROWS = 5;
const COLS = 15_000; // 300,000 bytes of F32: chunks 0..3 of 64 KiB and a short chunk 4
const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

function values(): Uint8Array {
  const out = new Float32Array(ROWS * COLS);
  for (let i = 0; i < out.length; i++) out[i] = Math.sin(i * 0.001);
  return new Uint8Array(out.buffer);
}

/** A one-pass bundle whose boundary `big.t` states chunk digests (unless `chunks` is false). */
function chunkedBundle(name: string, options: { chunks?: boolean; editChunks?: (digests: string[]) => void } = {}): { dir: string; data: Uint8Array } {
  const root = tempDir(name);
  const data = values();
  const weights = dummyWeights(root);
  const dir = writeBundle(join(root, 'reference'), {
    kind: 'reference',
    caseId: name,
    weightsFile: weights.file,
    weightsSha256: weights.sha256,
    inputs: [{ name: 'prompt_tokens', dtype: 'I32', shape: [1], data: new Uint8Array(4) }],
    passes: [{ kind: 'prefill', mode: 'text', boundaries: [{ name: 'big.t', stage: 's', dtype: 'F32', shape: [ROWS, COLS], data, contract: faithful(0, 0) }] }],
  });
  if (options.chunks !== false) {
    const manifestPath = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { passes: { boundaries: Record<string, unknown>[] }[] };
    const digests: string[] = [];
    for (let at = 0; at < data.byteLength; at += CHUNK) digests.push(sha256(data.subarray(at, at + CHUNK)));
    options.editChunks?.(digests);
    (manifest.passes[0]?.boundaries[0] as Record<string, unknown>)['chunks'] = { bytes: CHUNK, sha256: digests };
    writeFileSync(manifestPath, JSON.stringify(manifest));
  }
  return { dir, data };
}

/** Overwrites one byte of `big.t`'s data in its pass file (the manifest is left as it was). */
async function corruptByte(dir: string, tensorByte: number): Promise<void> {
  const path = join(dir, 'pass-000.safetensors');
  const file = await SafetensorsFile.open(path);
  const at = file.dataStart + (file.tensor('big.t')?.begin ?? 0) + tensorByte;
  await file.close();
  const fd = openSync(path, 'r+');
  writeSync(fd, new Uint8Array([0x7f]), 0, 1, at);
  closeSync(fd);
}

async function expectDigestError(promise: Promise<unknown>, file: string, field: string): Promise<BundleError> {
  const bundleError = await rejectionOf(promise, BundleError);
  expect(bundleError.code).toBe('E_DIGEST');
  expect(bundleError.file).toBe(file);
  expect(bundleError.field).toBe(field);
  return bundleError;
}

describe('chunk digests in the manifest', () => {
  it('a bundle with correct chunk digests opens; a range read returns exactly the bytes asked for', async () => {
    const { dir, data } = chunkedBundle('chunks-ok');
    const bundle = await openBundle(dir);
    try {
      expect(bundle.boundary(0, 'big.t')?.chunks?.sha256).toHaveLength(5);
      expect(await bundle.readBoundaryRange(0, 'big.t', 70_000, 70_008)).toEqual(data.slice(70_000, 70_008));
      expect(await bundle.readBoundaryRange(0, 'big.t', CHUNK - 4, CHUNK + 4)).toEqual(data.slice(CHUNK - 4, CHUNK + 4)); // straddles two chunks
      expect(await bundle.readBoundaryRange(0, 'big.t', data.byteLength - 4, data.byteLength)).toEqual(data.slice(-4)); // the short last chunk
    } finally {
      await bundle.close();
    }
  });

  it('a wrong chunk digest (file and tensor digests right): E_DIGEST on open naming the file, the tensor and the chunk', async () => {
    const { dir } = chunkedBundle('chunks-wrong', { editChunks: (digests) => (digests[2] = '0'.repeat(64)) });
    const error = await expectDigestError(openBundle(dir), join(dir, 'pass-000.safetensors'), 'passes[0].boundaries[0].chunks.sha256[2]');
    expect(error.message).toContain('tensor "big.t", chunk 2');
  });

  it('a range read checks only the chunks it touches, and each of them', async () => {
    const { dir, data } = chunkedBundle('chunks-range', { editChunks: (digests) => (digests[3] = '0'.repeat(64)) });
    const bundle = await openBundle(dir, { verify: 'none' });
    try {
      // Chunk 3's digest is wrong, but a read inside chunk 0 neither needs nor checks it.
      expect(await bundle.readBoundaryRange(0, 'big.t', 0, 16)).toEqual(data.slice(0, 16));
      await expectDigestError(
        bundle.readBoundaryRange(0, 'big.t', 3 * CHUNK + 8, 3 * CHUNK + 12),
        join(dir, 'pass-000.safetensors'),
        'passes[0].boundaries[0].chunks.sha256[3]',
      );
      // A byte changed after the bundle was opened is caught by the chunk that holds it.
      await corruptByte(dir, CHUNK + 100);
      await expectDigestError(
        bundle.readBoundaryRange(0, 'big.t', CHUNK + 96, CHUNK + 104),
        join(dir, 'pass-000.safetensors'),
        'passes[0].boundaries[0].chunks.sha256[1]',
      );
      expect(await bundle.readBoundaryRange(0, 'big.t', 0, 16)).toEqual(data.slice(0, 16));
    } finally {
      await bundle.close();
    }
  });

  it('without chunk digests (older bundles) a range read verifies the whole tensor', async () => {
    const { dir, data } = chunkedBundle('chunks-absent', { chunks: false });
    const bundle = await openBundle(dir);
    try {
      expect(bundle.boundary(0, 'big.t')?.chunks).toBeUndefined();
      expect(await bundle.readBoundaryRange(0, 'big.t', 8, 16)).toEqual(data.slice(8, 16));
      await corruptByte(dir, 4 * CHUNK + 10); // far from the range read
      await expectDigestError(bundle.readBoundaryRange(0, 'big.t', 8, 16), join(dir, 'pass-000.safetensors'), 'passes[0].boundaries[0].sha256');
    } finally {
      await bundle.close();
    }
  });

  it('a chunk list that does not fit the byte length, or a chunk size that is not a power of two, is refused with the manifest', async () => {
    const short = chunkedBundle('chunks-count', { editChunks: (digests) => digests.pop() });
    const error = await openBundle(short.dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).message).toContain('passes[0].boundaries[0].chunks.sha256');
    expect((error as BundleError).message).toContain('lists 4 chunk digests; 300000 bytes in chunks of 65536 make 5');

    const odd = chunkedBundle('chunks-size');
    const manifestPath = join(odd.dir, 'manifest.json');
    writeFileSync(manifestPath, readFileSync(manifestPath, 'utf8').replace(`"bytes":${CHUNK}`, '"bytes":100000'));
    const oddError = await openBundle(odd.dir).catch((caught: unknown) => caught);
    expect(oddError).toBeInstanceOf(BundleError);
    expect((oddError as BundleError).message).toContain('chunks.bytes');
    expect((oddError as BundleError).message).toContain('power of two');
  });
});

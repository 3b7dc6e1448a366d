// The tree-sha256 digest scheme (main/core/bundle/tree-digest.ts, docs/bundle-format.md "Digest
// schemes"): the writers' digests agree with an independent implementation written from the
// specification (python/trace_inspector/bundle_digests.py, standard library only), and a changed
// byte anywhere — the header, a tensor, a gap, the chunk list, a tensor digest, the declaration —
// is caught naming the file and the field. Bundles with plain sha256 digests keep working.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { bundleChangedSinceOpen } from '../../main/core/bundle/evidence-unchanged.ts';
import { fileDigestInScheme } from '../../main/core/bundle/scheme-file-digest.ts';
import { fileSegments, FileTreeHasher, leafDigest, segmentDigest, TREE_SCHEME } from '../../main/core/bundle/tree-digest.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import { combineTreeParts, planTreeJobs } from '../../main/core/bundle/tree-hash-job.ts';
import { REPO_ROOT } from '../helpers/paths.ts';
import { flipFileByte } from '../helpers/tensor-tamper.ts';
import { writeScaleReference, type ScaleReferenceSpec } from '../scale/scale-reference.ts';
import { editManifest, expectBundleError, readManifestJson, removeTempDirs, tempDir, writeSmallBundle } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

const CHUNK = 64 * 1024;
// One prefill of the scale engine at a tiny size: 4 tokens + 0.2 s of audio, logits of 256 KiB
// (four chunks of 64 KiB).
const TINY: ScaleReferenceSpec = { caseId: 'tree', prompt: [1, 17, 300, 65_535], pcmSamples: 4800, passes: 1, kvCache: false, chunkBytes: CHUNK };

function treeBundle(label: string, spec: Partial<ScaleReferenceSpec> = {}): string {
  return writeScaleReference(join(tempDir(label), 'reference'), { ...TINY, ...spec }).dir;
}

function python(args: readonly string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('/usr/bin/python3', args, {
    encoding: 'utf8',
    input,
    env: { ...process.env, PYTHONPATH: join(REPO_ROOT, 'python') },
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Byte position of a boundary's tensor in its pass file, and the boundary's index. */
async function tensorAt(dir: string, pass: number, name: string): Promise<{ file: string; begin: number; b: number }> {
  const manifest = readManifestJson(dir);
  const entry = manifest.passes[pass];
  const b = entry?.boundaries.findIndex((boundary) => boundary.name === name) ?? -1;
  const file = join(dir, entry?.file ?? '');
  const tensors = await SafetensorsFile.open(file);
  await tensors.close();
  const info = tensors.tensor(name);
  if (info === undefined || b < 0) throw new Error(`no ${name}`);
  return { file, begin: tensors.dataStart + info.begin, b };
}

const flipByte = (file: string, at: number): void => flipFileByte(file, at, 0x01);

describe('tree-sha256 digests', () => {
  it('the writers agree with an implementation written from the specification (Python, standard library)', () => {
    const reference = treeBundle('py-reference');
    expect(readManifestJson(reference).digests).toEqual({ scheme: TREE_SCHEME, version: 1, chunk_bytes: CHUNK });
    const native = writeSmallBundle('py-native').dir; // the native capture writer
    expect(readManifestJson(native).digests?.scheme).toBe(TREE_SCHEME);
    for (const dir of [reference, native]) {
      const run = python(['-m', 'trace_inspector.bundle_digests', dir]);
      expect(run.stdout + run.stderr).toContain('every digest matches');
      expect(run.status).toBe(0);
    }
    // The empty segment and a one-leaf segment, by hand from the formulas.
    const u64 = (n: number): Buffer => Buffer.from(new BigUint64Array([BigInt(n)]).buffer);
    const sha = (...parts: Uint8Array[]): string => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest('hex');
    expect(segmentDigest(0, CHUNK, [])).toBe(sha(Buffer.from([1]), u64(0), u64(CHUNK)));
    const three = Buffer.from('abc');
    expect(leafDigest(three)).toBe(sha(Buffer.from([0]), three));
    expect(segmentDigest(3, CHUNK, [leafDigest(three)])).toBe(sha(Buffer.from([1]), u64(3), u64(CHUNK), Buffer.from(sha(Buffer.from([0]), three), 'hex')));
  });

  it('a file with gap bytes between tensors: every byte is in one segment, as the Python implementation computes it; a changed gap byte changes the digest', () => {
    // A header naming two tensors with 8 bytes between them and 8 after (a gap the safetensors
    // rules refuse in a bundle, but the digest covers it all the same).
    const header = Buffer.from(
      JSON.stringify({ a: { dtype: 'U8', shape: [16], data_offsets: [0, 16] }, b: { dtype: 'U8', shape: [8], data_offsets: [24, 32] } }),
    );
    const prefix = Buffer.alloc(8);
    prefix.writeBigUInt64LE(BigInt(header.length));
    const data = Buffer.from(Array.from({ length: 40 }, (_, i) => (i * 37) & 0xff));
    const file = Buffer.concat([prefix, header, data]);
    const digestOf = (bytes: Buffer): string => {
      const start = 8 + header.length;
      const segments = fileSegments(bytes.length, start, [
        { begin: 0, end: 16 },
        { begin: 24, end: 32 },
      ]);
      expect(segments.map((segment) => segment.end - segment.begin)).toEqual([start, 16, 8, 8, 8]);
      const hasher = new FileTreeHasher(
        CHUNK,
        segments.map((segment) => segment.end),
      );
      hasher.update(bytes);
      return hasher.digest();
    };
    const path = join(tempDir('gap'), 'gap.safetensors');
    writeFileSync(path, file);
    const script = `import sys; from trace_inspector.bundle_digests import file_digest; print(file_digest(open(sys.argv[1], 'rb').read(), ${CHUNK}))`;
    const expected = python(['-c', script, path]);
    expect(expected.status, expected.stderr).toBe(0);
    expect(digestOf(file)).toBe(expected.stdout.trim());
    const tampered = Buffer.from(file);
    const gapAt = 8 + header.length + 20; // inside the gap between a and b
    tampered[gapAt] = (tampered[gapAt] as number) ^ 0x01;
    expect(digestOf(tampered)).not.toBe(digestOf(file));
  });

  it('a changed header byte fails the file digest, naming the file and files[i].sha256', async () => {
    const dir = treeBundle('header');
    const { file } = await tensorAt(dir, 0, 'backbone.logits');
    // The first character of the first key in the header's JSON: still a valid string, another name.
    expect(readFileSync(file).subarray(8, 10).toString()).toBe('{"');
    flipByte(file, 10);
    await expectBundleError(openBundle(dir), 'E_DIGEST', file, 'files[1].sha256');
  });

  it('a changed tensor byte: the file digest names the tensor; with the file digest restated, the tensor digest catches it', async () => {
    const dir = treeBundle('tensor');
    const { file, begin, b } = await tensorAt(dir, 0, 'backbone.logits');
    flipByte(file, begin + 3 * CHUNK + 5);
    const error = await expectBundleError(openBundle(dir), 'E_DIGEST', file, 'files[1].sha256');
    expect(error.message).toContain('"backbone.logits"');
    const restated = await fileDigestInScheme(file, { kind: 'tree', chunkBytes: CHUNK });
    editManifest(dir, (manifest) => {
      (manifest.files[1] as { sha256: string }).sha256 = restated;
    });
    await expectBundleError(openBundle(dir), 'E_DIGEST', file, `passes[0].boundaries[${b}].sha256`);
  });

  it('an edited chunk list or tensor digest is refused as the manifest is read: a range read can never trust a list the tensor digest does not make', async () => {
    const dir = treeBundle('chunks');
    const { file, begin, b } = await tensorAt(dir, 0, 'backbone.logits');
    const manifestPath = join(dir, 'manifest.json');
    // Bytes of chunk 1 changed AND the list restating that chunk's leaf: only the tensor digest,
    // which the list must hash to, still tells. Opened without hashing the files (range reads).
    flipByte(file, begin + CHUNK + 9);
    const leaf = leafDigest(readFileSync(file).subarray(begin + CHUNK, begin + 2 * CHUNK));
    editManifest(dir, (manifest) => {
      const chunks = manifest.passes[0]?.boundaries[b]?.chunks;
      if (chunks !== undefined) chunks.sha256[1] = leaf;
    });
    await expectBundleError(openBundle(dir, { verify: 'none' }), 'E_DIGEST', manifestPath, `passes[0].boundaries[${b}].chunks.sha256`);

    const other = treeBundle('tensor-digest');
    const at = (await tensorAt(other, 0, 'backbone.logits')).b;
    editManifest(other, (manifest) => {
      const boundary = manifest.passes[0]?.boundaries[at];
      if (boundary !== undefined) boundary.sha256 = '0'.repeat(64);
    });
    await expectBundleError(openBundle(other), 'E_DIGEST', join(other, 'manifest.json'), `passes[0].boundaries[${at}].chunks.sha256`);
  });

  it('an edited input digest (no chunk list) is caught by hashing, naming the file and inputs[i].sha256', async () => {
    const dir = treeBundle('input');
    editManifest(dir, (manifest) => {
      const input = manifest.inputs[0];
      if (input !== undefined) input.sha256 = '0'.repeat(64);
    });
    await expectBundleError(openBundle(dir), 'E_DIGEST', join(dir, 'inputs.safetensors'), 'inputs[0].sha256');
  });

  it('a range read checks the tree leaves of the chunks it reads: a byte changed after the open is caught at its chunk', async () => {
    const dir = treeBundle('range');
    const { file, begin, b } = await tensorAt(dir, 0, 'backbone.logits');
    const bundle = await openBundle(dir);
    try {
      const clean = await bundle.readBoundaryRange(0, 'backbone.logits', 2 * CHUNK + 10, 2 * CHUNK + 20);
      expect(clean).toEqual(new Uint8Array(readFileSync(file).subarray(begin + 2 * CHUNK + 10, begin + 2 * CHUNK + 20)));
      flipByte(file, begin + 2 * CHUNK + 100);
      await expectBundleError(
        bundle.readBoundaryRange(0, 'backbone.logits', 2 * CHUNK, 2 * CHUNK + 4),
        'E_DIGEST',
        file,
        `passes[0].boundaries[${b}].chunks.sha256[2]`,
      );
      // The chunks untouched still read.
      expect((await bundle.readBoundaryRange(0, 'backbone.logits', 0, 8)).byteLength).toBe(8);
    } finally {
      await bundle.close();
    }
  });

  it('the closing check before a receipt is signed: an untouched tree bundle is unchanged by its pins; a byte changed after the open is found by re-hashing in the tree', async () => {
    const dir = treeBundle('recheck');
    const { file, begin } = await tensorAt(dir, 0, 'backbone.logits');
    const bundle = await openBundle(dir);
    await bundle.close();
    expect(await bundleChangedSinceOpen(dir, null)).toBeNull();
    flipByte(file, begin + 11);
    const changed = await bundleChangedSinceOpen(dir, null);
    expect(changed).toContain(file);
    expect(changed).toContain('files[1].sha256');
    expect(changed).toContain('"backbone.logits"');
    // Bytes appended to a file (every segment still as listed) are caught too.
    const grown = treeBundle('recheck-grown');
    const pass = join(grown, 'pass-0000.safetensors');
    const opened = await openBundle(grown);
    await opened.close();
    writeFileSync(pass, Buffer.concat([readFileSync(pass), Buffer.from([0])]));
    expect(await bundleChangedSinceOpen(grown, null)).toContain(pass);
  });

  it('a file that grew between the planning of its segments and its hashing is refused as changed, never verified without its tail', () => {
    const plan = planTreeJobs({ path: 'f' }, 100, [{ begin: 0, end: 100 }], CHUNK);
    const pin = { identity: 'i', ctimeNs: '0', statAtMs: 0, fsType: 0 };
    const leaves = [leafDigest(new Uint8Array(100))];
    const asPlanned = combineTreeParts(plan, [{ ok: true, sha256: '', bytes: 100, size: 100, spans: [{ sha256: '', chunks: leaves }], pin }], []);
    expect(asPlanned.ok).toBe(true);
    const grown = combineTreeParts(plan, [{ ok: true, sha256: '', bytes: 101, size: 101, spans: [{ sha256: '', chunks: leaves }], pin }], []);
    expect(grown).toMatchObject({ ok: false, problem: 'changed' });
  });

  it('the declaration: an unknown scheme or version is refused by name; without it the digests are read as plain sha256 and fail; another chunk size is refused', async () => {
    const cases: [string, (digests: Record<string, unknown>) => void, string][] = [
      ['version', (digests) => void (digests['version'] = 2), 'digests.version'],
      ['scheme', (digests) => void (digests['scheme'] = 'blake3'), 'digests.scheme'],
    ];
    for (const [label, edit, field] of cases) {
      const dir = treeBundle(`declaration-${label}`);
      editManifest(dir, (manifest) => edit(manifest.digests as unknown as Record<string, unknown>));
      await expectBundleError(openBundle(dir), 'E_MANIFEST_SCHEMA', join(dir, 'manifest.json'), field);
    }
    const removed = treeBundle('declaration-removed');
    editManifest(removed, (manifest) => {
      delete manifest.digests;
      // Without the declaration, plain sha256 chunk lists would not hash to anything either.
      for (const boundary of manifest.passes[0]?.boundaries ?? []) delete boundary.chunks;
    });
    await expectBundleError(openBundle(removed), 'E_DIGEST', join(removed, 'inputs.safetensors'), 'files[0].sha256');
    const resized = treeBundle('declaration-chunk-bytes');
    editManifest(resized, (manifest) => {
      if (manifest.digests !== undefined) manifest.digests.chunk_bytes = 2 * CHUNK;
    });
    const error = await expectBundleError(openBundle(resized), 'E_MANIFEST_SCHEMA', join(resized, 'manifest.json'), '.chunks.bytes');
    expect(error.message).toContain(`chunks of ${2 * CHUNK} bytes`);
  });

  it('a bundle with plain sha256 digests (no declaration) is verified as before, by the reader and by the Python verifier', async () => {
    const dir = treeBundle('plain', { digests: 'sha256' });
    expect(readManifestJson(dir).digests).toBeUndefined();
    const bundle = await openBundle(dir);
    const data = await bundle.readBoundary(0, 'backbone.logits');
    await bundle.close();
    const { file, begin, b } = await tensorAt(dir, 0, 'backbone.logits');
    expect(createHash('sha256').update(data.data).digest('hex')).toBe(readManifestJson(dir).passes[0]?.boundaries[b]?.sha256);
    expect(python(['-m', 'trace_inspector.bundle_digests', dir]).status).toBe(0);
    flipByte(file, begin + 7);
    await expectBundleError(openBundle(dir), 'E_DIGEST', file, 'files[1].sha256');
  });
});

// The closing check re-reads every manifest; identical bytes reuse the manifest parsed from them
// (parsed-manifests.ts), while bytes that differ by one character are parsed and validated anew.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readManifestWithDigest } from '../../main/core/bundle/bundle-reader.ts';
import { knownManifestAt } from '../../main/core/bundle/parsed-manifests.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { referenceBundle } from '../helpers/paths.ts';
import { removeTempDirs, tempDir } from '../gate/gate-fixtures.ts';

afterAll(removeTempDirs);

describe('manifests parsed once per content', () => {
  const dir = join(tempDir('parsed-manifests'), 'reference');
  cpSync(referenceBundle('greedy'), dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.json');

  it('the same bytes give the same manifest object; other bytes are parsed and validated again', async () => {
    const first = await readManifestWithDigest(dir);
    const again = await readManifestWithDigest(dir);
    expect(again.sha256).toBe(first.sha256);
    expect(again.manifest).toBe(first.manifest);

    const text = readFileSync(manifestPath, 'utf8');
    writeFileSync(manifestPath, text.replace('"schema_version": 1', '"schema_version":  1'));
    const edited = await readManifestWithDigest(dir);
    expect(edited.sha256).not.toBe(first.sha256);
    expect(edited.manifest).not.toBe(first.manifest);
    expect(edited.manifest).toEqual(first.manifest);

    writeFileSync(manifestPath, text.replace('"schema_version": 1', '"schema_version": 99'));
    await expect(readManifestWithDigest(dir)).rejects.toBeInstanceOf(BundleError);
  });
});

describe('a known manifest recognised by its streamed sha256 (no copy of its bytes)', () => {
  const dir = join(tempDir('known-manifest'), 'reference');
  cpSync(referenceBundle('greedy'), dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.json');

  it('gives the manifest parsed from the same bytes and their sha256; null for other bytes, a missing file or one over the limit', async () => {
    const parsed = await readManifestWithDigest(dir);
    const bytes = readFileSync(manifestPath);
    const known = await knownManifestAt(manifestPath, bytes.length);
    expect(known?.manifest).toBe(parsed.manifest);
    expect(known?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(await knownManifestAt(manifestPath, bytes.length - 1)).toBeNull();
    expect(await knownManifestAt(join(dir, 'absent.json'), bytes.length)).toBeNull();
    writeFileSync(manifestPath, Buffer.concat([bytes, Buffer.from(' ')]));
    expect(await knownManifestAt(manifestPath, bytes.length + 1)).toBeNull();
  });
});

describe('a parsed manifest holds each distinct shape once', () => {
  it('gives boundary entries of the same shape or strides one frozen array, and every entry the values its JSON states', async () => {
    const dir = join(tempDir('shared-shapes'), 'reference');
    cpSync(referenceBundle('greedy'), dir, { recursive: true });
    const raw = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { passes: { boundaries: { shape: number[]; strides: number[] }[] }[] };
    const { manifest } = await readManifestWithDigest(dir);
    const byContent = new Map<string, number[]>();
    let shared = 0;
    manifest.passes.forEach((pass, p) =>
      pass.boundaries.forEach((entry, b) => {
        const stated = raw.passes[p]?.boundaries[b];
        expect(entry.shape).toEqual(stated?.shape);
        expect(entry.strides).toEqual(stated?.strides);
        for (const list of [entry.shape, entry.strides]) {
          expect(Object.isFrozen(list)).toBe(true);
          const earlier = byContent.get(list.join(','));
          if (earlier === undefined) byContent.set(list.join(','), list);
          else {
            expect(list).toBe(earlier);
            shared += 1;
          }
        }
      }),
    );
    expect(shared).toBeGreaterThan(manifest.passes.length);
  });
});

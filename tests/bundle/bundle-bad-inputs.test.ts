// Each bad input is rejected with its own code, and the message names the file and the field.
// Bad bundles are made by damaging a small good bundle written with NativeBundleWriter.
import { cpSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { bytes, editManifest, expectBundleError, rawSafetensors, removeTempDirs, replaceDataFile, tempDir, writeSmallBundle } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

const manifestOf = (dir: string): string => join(dir, 'manifest.json');

describe('openBundle rejects bad manifests', () => {
  it('accepts the undamaged bundle (the baseline every case below damages)', async () => {
    const { dir } = writeSmallBundle('baseline');
    const bundle = await openBundle(dir);
    expect(bundle.passes.length).toBe(2);
    await bundle.close();
  });

  it('a folder that does not exist, or has no manifest.json: E_FILE_MISSING naming the manifest', async () => {
    const missing = join(tempDir('no-bundle'), 'nothing-here');
    await expectBundleError(openBundle(missing), 'E_FILE_MISSING', manifestOf(missing), 'does not exist');
    const { dir } = writeSmallBundle('no-manifest');
    unlinkSync(manifestOf(dir));
    await expectBundleError(openBundle(dir), 'E_FILE_MISSING', manifestOf(dir), '"manifest.json" does not exist');
  });

  it('malformed JSON: E_MANIFEST_JSON', async () => {
    const { dir } = writeSmallBundle('bad-json');
    writeFileSync(manifestOf(dir), '{"schema": "trace-inspector.bundle", ');
    await expectBundleError(openBundle(dir), 'E_MANIFEST_JSON', manifestOf(dir), '(root)');
  });

  it('wrong schema name: E_SCHEMA_NAME', async () => {
    const { dir } = writeSmallBundle('bad-schema');
    editManifest(dir, (m) => {
      (m as Record<string, unknown>)['schema'] = 'some-other.bundle';
    });
    const error = await expectBundleError(openBundle(dir), 'E_SCHEMA_NAME', manifestOf(dir), 'schema');
    expect(error.message).toContain('some-other.bundle');
  });

  it('wrong schema_version: E_SCHEMA_VERSION', async () => {
    const { dir } = writeSmallBundle('bad-version');
    editManifest(dir, (m) => {
      (m as Record<string, unknown>)['schema_version'] = 2;
    });
    await expectBundleError(openBundle(dir), 'E_SCHEMA_VERSION', manifestOf(dir), 'schema_version');
  });

  it('missing provenance fields: E_PROVENANCE naming every one of them', async () => {
    const { dir } = writeSmallBundle('bad-provenance');
    editManifest(dir, (m) => {
      const provenance = m.provenance as unknown as Record<string, Record<string, unknown>>;
      delete provenance['model']?.['weights_sha256'];
      delete provenance['generator']?.['revision'];
      delete provenance['runtime']?.['engine_build_id'];
      delete (provenance as Record<string, unknown>)['created_at'];
    });
    const error = await expectBundleError(openBundle(dir), 'E_PROVENANCE', manifestOf(dir), 'provenance.model.weights_sha256');
    for (const field of ['provenance.generator.revision', 'provenance.runtime.engine_build_id', 'provenance.created_at']) {
      expect(error.message).toContain(field);
    }
    expect(error.issues.map((issue) => issue.field)).toEqual(
      expect.arrayContaining([
        'provenance.model.weights_sha256',
        'provenance.generator.revision',
        'provenance.runtime.engine_build_id',
        'provenance.created_at',
      ]),
    );
  });

  it('a whole missing provenance object names each of its fields', async () => {
    const { dir } = writeSmallBundle('bad-provenance-object');
    editManifest(dir, (m) => {
      delete (m.provenance as unknown as Record<string, unknown>)['generator'];
    });
    const error = await expectBundleError(openBundle(dir), 'E_PROVENANCE', manifestOf(dir), 'provenance.generator.implementation');
    for (const field of ['revision', 'dirty', 'command']) expect(error.message).toContain(`provenance.generator.${field}`);
  });

  it('every schema problem is listed with its JSON path, not just the first', async () => {
    const { dir } = writeSmallBundle('bad-many');
    editManifest(dir, (m) => {
      const boundary = m.passes[1]?.boundaries[3] as unknown as Record<string, unknown>;
      boundary['sha256'] = 'xyz';
      (m.passes[0]?.boundaries[0] as unknown as Record<string, unknown>)['dtype'] = 'F128';
      (m as Record<string, unknown>)['extra'] = true;
    });
    const error = await expectBundleError(openBundle(dir), 'E_MANIFEST_SCHEMA', manifestOf(dir), 'passes[1].boundaries[3].sha256');
    expect(error.message).toContain('expected 64 lowercase hex characters');
    expect(error.message).toContain('passes[0].boundaries[0].dtype');
    expect(error.message).toContain('extra: unknown field');
  });

  it('byte_length wrong: E_BYTE_LENGTH', async () => {
    const { dir } = writeSmallBundle('bad-bytelength');
    editManifest(dir, (m) => {
      (m.passes[0]?.boundaries[0] as { byte_length: number }).byte_length = 100;
    });
    const error = await expectBundleError(openBundle(dir), 'E_BYTE_LENGTH', manifestOf(dir), 'passes[0].boundaries[0].byte_length');
    expect(error.message).toContain('expected 128');
  });

  it('duplicate boundary name within a pass: E_DUPLICATE_BOUNDARY', async () => {
    const { dir } = writeSmallBundle('bad-duplicate');
    editManifest(dir, (m) => {
      (m.passes[0]?.boundaries[2] as { name: string }).name = 'backbone.embed';
    });
    await expectBundleError(openBundle(dir), 'E_DUPLICATE_BOUNDARY', manifestOf(dir), 'passes[0].boundaries[2].name');
  });

  it('pass kinds out of order: E_PASS_ORDER', async () => {
    const { dir } = writeSmallBundle('bad-order');
    editManifest(dir, (m) => {
      (m.passes[1] as { kind: string }).kind = 'prefill';
    });
    await expectBundleError(openBundle(dir), 'E_PASS_ORDER', manifestOf(dir), 'passes[1].kind');
  });

  it('strides whose rank differs from the shape: E_SHAPE', async () => {
    const { dir } = writeSmallBundle('bad-strides');
    editManifest(dir, (m) => {
      (m.passes[0]?.boundaries[0] as { strides: number[] }).strides = [8];
    });
    await expectBundleError(openBundle(dir), 'E_SHAPE', manifestOf(dir), 'passes[0].boundaries[0].strides');
  });

  it('a reference bundle without a contract: E_CONTRACT', async () => {
    const { dir } = writeSmallBundle('bad-contract');
    editManifest(dir, (m) => {
      m.kind = 'reference';
      m.provenance.precision = 'float32';
      m.provenance.runtime = { torch: '1.13.1', python: '3.11.2' };
    });
    await expectBundleError(openBundle(dir), 'E_CONTRACT', manifestOf(dir), 'passes[0].boundaries[0].contract');
  });

  it('path escaping the bundle ("../x"): E_PATH_ESCAPE', async () => {
    const { dir } = writeSmallBundle('bad-dotdot');
    editManifest(dir, (m) => {
      (m.passes[1] as { file: string }).file = '../x';
    });
    await expectBundleError(openBundle(dir), 'E_PATH_ESCAPE', manifestOf(dir), 'passes[1].file');
  });

  it('absolute path: E_PATH_ABSOLUTE', async () => {
    const { dir } = writeSmallBundle('bad-absolute');
    editManifest(dir, (m) => {
      (m.files[0] as { path: string }).path = '/etc/passwd';
    });
    await expectBundleError(openBundle(dir), 'E_PATH_ABSOLUTE', manifestOf(dir), 'files[0].path');
  });

  it('symlink escaping the bundle: E_PATH_ESCAPE', async () => {
    const { dir } = writeSmallBundle('bad-symlink');
    const outside = join(dir, '..', 'outside.safetensors');
    cpSync(join(dir, 'pass-001.safetensors'), outside);
    unlinkSync(join(dir, 'pass-001.safetensors'));
    symlinkSync(outside, join(dir, 'pass-001.safetensors'));
    const error = await expectBundleError(openBundle(dir), 'E_PATH_ESCAPE', manifestOf(dir), 'files[2].path');
    expect(error.message).toContain('outside the bundle folder');
  });

  it('a symlink that stays inside the bundle is accepted', async () => {
    const { dir } = writeSmallBundle('ok-symlink');
    cpSync(join(dir, 'pass-001.safetensors'), join(dir, 'real-pass-001.safetensors'));
    unlinkSync(join(dir, 'pass-001.safetensors'));
    symlinkSync('real-pass-001.safetensors', join(dir, 'pass-001.safetensors'));
    const bundle = await openBundle(dir);
    await bundle.close();
  });

  it('a file used by the manifest but not listed in files[]: E_FILE_UNLISTED', async () => {
    const { dir } = writeSmallBundle('bad-unlisted');
    editManifest(dir, (m) => {
      m.files = m.files.filter((file) => file.path !== 'pass-001.safetensors');
    });
    await expectBundleError(openBundle(dir), 'E_FILE_UNLISTED', manifestOf(dir), 'passes[1].file');
  });
});

describe('openBundle rejects data files that disagree with the manifest', () => {
  it('whole-file digest mismatch (one flipped byte): E_DIGEST naming the file', async () => {
    const { dir } = writeSmallBundle('bad-digest');
    const path = join(dir, 'pass-000.safetensors');
    const content = readFileSync(path);
    content[content.length - 1] = (content[content.length - 1] as number) ^ 0x01;
    writeFileSync(path, content);
    const error = await expectBundleError(openBundle(dir), 'E_DIGEST', path, 'files[1].sha256');
    expect(error.file).toBe(path);
  });

  it('file size differs from files[].bytes: E_FILE_SIZE', async () => {
    const { dir } = writeSmallBundle('bad-size');
    const path = join(dir, 'pass-001.safetensors');
    writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from([0])]));
    await expectBundleError(openBundle(dir), 'E_FILE_SIZE', path, 'files[2].bytes');
  });

  it('per-tensor digest mismatch: openBundle throws E_DIGEST naming the file and the tensor, before any read', async () => {
    const { dir, records } = writeSmallBundle('bad-tensor-digest-open');
    const path = join(dir, 'pass-000.safetensors');
    const content = readFileSync(path);
    // Flip the last byte (in the data of the pass's last tensor) and re-list the whole-file
    // digest, so the file check passes and only the tensor digest can catch it.
    content[content.length - 1] = (content[content.length - 1] as number) ^ 0x80;
    replaceDataFile(dir, 'pass-000.safetensors', content);
    const last = (records[0]?.length ?? 0) - 1;
    const error = await expectBundleError(openBundle(dir), 'E_DIGEST', path, `passes[0].boundaries[${last}].sha256`);
    expect(error.message).toContain(`tensor "${records[0]?.[last]?.name}"`);
  });

  it('a wrong sha256 listed for an input tensor is refused at open too, naming the input', async () => {
    const { dir } = writeSmallBundle('bad-input-digest');
    editManifest(dir, (m) => {
      (m.inputs[1] as { sha256: string }).sha256 = '0'.repeat(64);
    });
    const error = await expectBundleError(openBundle(dir), 'E_DIGEST', join(dir, 'inputs.safetensors'), 'inputs[1].sha256');
    expect(error.message).toContain('tensor "');
  });

  it("per-tensor digest mismatch with verify: 'none': readBoundary throws E_DIGEST naming the file and the tensor", async () => {
    const { dir, records } = writeSmallBundle('bad-tensor-digest');
    const path = join(dir, 'pass-000.safetensors');
    const content = readFileSync(path);
    content[content.length - 1] = (content[content.length - 1] as number) ^ 0x80;
    replaceDataFile(dir, 'pass-000.safetensors', content);
    const bundle = await openBundle(dir, { verify: 'none' });
    try {
      const failures: string[] = [];
      for (const record of records[0] ?? []) {
        try {
          await bundle.readBoundary(0, record.name);
        } catch (error) {
          const e = await expectBundleError(Promise.reject(error), 'E_DIGEST', path, 'sha256');
          failures.push(e.field);
          expect(e.message).toContain('tensor "');
        }
      }
      expect(failures.length).toBe(1);
      expect(failures[0]).toMatch(/^passes\[0\]\.boundaries\[\d\]\.sha256$/);
    } finally {
      await bundle.close();
    }
  });

  it("verify: 'none' skips whole-file hashing but still checks each tensor when it is read", async () => {
    const { dir } = writeSmallBundle('verify-none');
    const path = join(dir, 'pass-001.safetensors');
    const content = readFileSync(path);
    content[content.length - 1] = (content[content.length - 1] as number) ^ 0x01; // in the last tensor of pass 1
    writeFileSync(path, content);
    await expectBundleError(openBundle(dir), 'E_DIGEST', path, 'files[2].sha256');
    const bundle = await openBundle(dir, { verify: 'none' });
    try {
      const names = bundle.passes[1]?.boundaries.map((boundary) => boundary.name) ?? [];
      const results = await Promise.allSettled(names.map((name) => bundle.readBoundary(1, name)));
      expect(results.filter((result) => result.status === 'rejected').length).toBe(1);
    } finally {
      await bundle.close();
    }
  });

  it('chunked reads check the tensor digest too, when the last chunk is delivered', async () => {
    const { dir } = writeSmallBundle('bad-tensor-digest-chunks');
    editManifest(dir, (m) => {
      (m.passes[0]?.boundaries[0] as { sha256: string }).sha256 = '0'.repeat(64);
    });
    const bundle = await openBundle(dir, { verify: 'none' });
    try {
      const consume = async (): Promise<void> => {
        for await (const chunk of bundle.readBoundaryChunks(0, 'backbone.embed', 16)) expect(chunk.byteLength).toBeLessThanOrEqual(16);
      };
      await expectBundleError(consume(), 'E_DIGEST', join(dir, 'pass-000.safetensors'), 'passes[0].boundaries[0].sha256');
    } finally {
      await bundle.close();
    }
  });

  it('truncated safetensors (length prefix only): E_SAFETENSORS_HEADER', async () => {
    const { dir } = writeSmallBundle('bad-truncated');
    const prefix = Buffer.alloc(8);
    prefix.writeBigUInt64LE(120n);
    replaceDataFile(dir, 'pass-001.safetensors', new Uint8Array(prefix));
    await expectBundleError(openBundle(dir), 'E_SAFETENSORS_HEADER', join(dir, 'pass-001.safetensors'), 'header length');
  });

  it('header length past EOF: E_SAFETENSORS_HEADER', async () => {
    const { dir } = writeSmallBundle('bad-length');
    const content = readFileSync(join(dir, 'pass-001.safetensors'));
    content.writeBigUInt64LE(BigInt(content.length), 0);
    replaceDataFile(dir, 'pass-001.safetensors', content);
    const error = await expectBundleError(openBundle(dir), 'E_SAFETENSORS_HEADER', join(dir, 'pass-001.safetensors'), 'header length');
    expect(error.message).toContain('past the end of the file');
  });

  it('header offsets overlapping: E_SAFETENSORS_HEADER naming the tensor', async () => {
    const { dir } = writeSmallBundle('bad-overlap');
    const header = { a: { dtype: 'U8', shape: [8], data_offsets: [0, 8] }, b: { dtype: 'U8', shape: [8], data_offsets: [4, 12] } };
    replaceDataFile(dir, 'pass-001.safetensors', rawSafetensors(header, bytes(12)));
    const error = await expectBundleError(openBundle(dir), 'E_SAFETENSORS_HEADER', join(dir, 'pass-001.safetensors'), 'header.b.data_offsets');
    expect(error.message).toContain('overlaps');
  });

  it('header offsets with a hole: E_SAFETENSORS_HEADER naming the tensor', async () => {
    const { dir } = writeSmallBundle('bad-hole');
    const header = { a: { dtype: 'U8', shape: [4], data_offsets: [0, 4] }, b: { dtype: 'U8', shape: [4], data_offsets: [6, 10] } };
    replaceDataFile(dir, 'pass-001.safetensors', rawSafetensors(header, bytes(10)));
    const error = await expectBundleError(openBundle(dir), 'E_SAFETENSORS_HEADER', join(dir, 'pass-001.safetensors'), 'header.b.data_offsets');
    expect(error.message).toContain('hole');
  });

  it('header dtype x shape disagrees with its data length: E_SAFETENSORS_HEADER', async () => {
    const { dir } = writeSmallBundle('bad-span');
    const header = { a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } };
    replaceDataFile(dir, 'pass-001.safetensors', rawSafetensors(header, bytes(8)));
    const error = await expectBundleError(openBundle(dir), 'E_SAFETENSORS_HEADER', join(dir, 'pass-001.safetensors'), 'header.a.data_offsets');
    expect(error.message).toContain('needs 12');
  });

  it('manifest dtype differs from the header: E_DTYPE_MISMATCH', async () => {
    const { dir } = writeSmallBundle('bad-dtype');
    editManifest(dir, (m) => {
      (m.passes[0]?.boundaries[0] as { dtype: string }).dtype = 'I32'; // same size, so byte_length still agrees
    });
    const error = await expectBundleError(openBundle(dir), 'E_DTYPE_MISMATCH', join(dir, 'pass-000.safetensors'), 'passes[0].boundaries[0].dtype');
    expect(error.message).toContain('F32');
  });

  it('manifest shape differs from the header: E_SHAPE_MISMATCH', async () => {
    const { dir } = writeSmallBundle('bad-shape');
    editManifest(dir, (m) => {
      const boundary = m.passes[0]?.boundaries[0] as { shape: number[]; strides: number[] };
      boundary.shape = [8, 4];
      boundary.strides = [4, 1];
    });
    await expectBundleError(openBundle(dir), 'E_SHAPE_MISMATCH', join(dir, 'pass-000.safetensors'), 'passes[0].boundaries[0].shape');
  });

  it('a key the header lacks: E_TENSOR_MISSING', async () => {
    const { dir } = writeSmallBundle('bad-key');
    editManifest(dir, (m) => {
      (m.passes[1]?.boundaries[0] as { key: string }).key = 'nope';
    });
    const error = await expectBundleError(openBundle(dir), 'E_TENSOR_MISSING', join(dir, 'pass-001.safetensors'), 'passes[1].boundaries[0].key');
    // The tensor the manifest no longer points at is reported as unlisted in the same error.
    expect(error.message).toContain('header["backbone.embed"]');
  });

  it('weights that are not the ones the bundle was made from: E_DIGEST naming the weights file', async () => {
    const { resolveWeights } = await import('../../main/core/bundle/bundle-reader.ts');
    const { dir } = writeSmallBundle('bad-weights');
    const weights = join(dir, '..', 'weights.safetensors');
    writeFileSync(weights, 'not the weights');
    const bundle = await openBundle(dir);
    try {
      // The weights sit beside the bundle folder: listed as a weights root, they may be read.
      await expectBundleError(
        resolveWeights(bundle, { TRACE_INSPECTOR_WEIGHTS_ROOTS: join(dir, '..') }),
        'E_DIGEST',
        weights,
        'provenance.model.weights_sha256',
      );
    } finally {
      await bundle.close();
    }
  });
});

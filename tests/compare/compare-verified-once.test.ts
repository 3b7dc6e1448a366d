// `compare` verifies every bundle on the worker pool while it already compares (each byte hashed
// once, read again straight into the comparison's windows), and releases nothing until every
// digest matched (compare-run.ts, bundle-reader.ts verify 'deferred'). Its rows and verdicts are
// those of the path that verifies first and hashes every tensor as it reads it (what
// TRACE_INSPECTOR_REHASH=always still runs), on committed fixtures; a changed byte fails the run
// naming the file and field, with no result.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REHASH_ENV } from '../../main/core/bundle/file-pins.ts';
import { runCompare } from '../../main/core/compare/compare-run.ts';
import { plainCompareOptions } from '../helpers/compare-options.ts';
import { compareReceiptPredicate } from '../../main/core/compare/compare-receipt.ts';
import { InputError } from '../../main/core/io/input-error.ts';
import { oracleBundle, referenceBundle, tempDirTracker } from '../helpers/paths.ts';
import { writeScaleReference } from '../scale/scale-reference.ts';

const { tempDir, removeTempDirs } = tempDirTracker('compare-once');
afterAll(removeTempDirs);
const saved = process.env[REHASH_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[REHASH_ENV];
  else process.env[REHASH_ENV] = saved;
});

const options = plainCompareOptions;

describe('compare, verified once', () => {
  it.each(['greedy', 'nan_inf'])(
    'fixtures/bundles/%s: reference against its fp64 oracle, the same rows and verdicts as verifying first and hashing every read',
    async (caseId) => {
      const run = options(referenceBundle(caseId), oracleBundle(caseId));
      delete process.env[REHASH_ENV];
      const now = await runCompare(run);
      process.env[REHASH_ENV] = 'always';
      const before = await runCompare(run);
      expect(now.compared).toBeGreaterThan(100);
      // Every field of every row but the time it took.
      const rows = (result: typeof now): string => JSON.stringify(result.cases[0]?.verdicts.map(({ durationMs: _durationMs, ...row }) => row));
      expect(rows(now)).toBe(rows(before));
      expect(now.counts).toEqual(before.counts);
      expect(now.seals).toEqual(before.seals);
    },
  );

  it('a changed byte in a tree-sha256 candidate fails the run naming the file and field, no result; the receipt states each side’s digest scheme', async () => {
    const root = tempDir('tamper');
    const spec = { caseId: 'tree', prompt: [1, 17, 300, 65_535], pcmSamples: 4800, passes: 2, kvCache: false, chunkBytes: 64 * 1024 };
    const reference = writeScaleReference(join(root, 'reference'), spec).dir;
    const plain = writeScaleReference(join(root, 'plain'), { ...spec, digests: 'sha256' }).dir;
    const candidate = join(root, 'candidate');
    cpSync(reference, candidate, { recursive: true });

    const clean = await runCompare(options(reference, plain));
    expect(clean.seals.overall).toBe('PASSED');
    const predicate = compareReceiptPredicate(clean) as { comparison: { reference: { digestScheme: string }; candidate: { digestScheme: string } } };
    expect(predicate.comparison.reference.digestScheme).toBe(`tree-sha256/1:${64 * 1024}`);
    expect(predicate.comparison.candidate.digestScheme).toBe('sha256');

    const file = join(candidate, 'pass-0001.safetensors');
    const bytes = readFileSync(file);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 0x10;
    writeFileSync(file, bytes);
    const error = await runCompare(options(reference, candidate)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toContain(`candidate bundle ${candidate} is not valid`);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toContain('files[2].sha256');
  });
});

// Issue 10, class 5 (one item): an output folder on a special or impossible location fails at
// once with a named error. Node's recursive mkdir loops for ever when a file system answers
// ENOENT for a child of an existing folder, as /proc does: `capture --out /proc/x` hung.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createOutputFolder, OutputFolderError } from '../../main/core/io/output-folder.ts';
import { referenceBundle } from '../helpers/paths.ts';
import { SMALL_CASE, describeRefusal, hasStackTrace, removeTempDirs, runCliBounded, tempDir } from './hostile-fixtures.ts';

afterAll(removeTempDirs);

/** The promise, or a rejection naming a hang after `ms`. */
function bounded<T>(promise: Promise<T>, ms = 5_000): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms (hang)`)), ms))]);
}

describe('createOutputFolder', () => {
  it('refuses a folder under /proc at once, naming the location', async () => {
    const error = await bounded(createOutputFolder('/proc/ti-no-such/out', '--out')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutputFolderError);
    expect((error as Error).message).toContain('--out /proc/ti-no-such/out');
    expect((error as Error).message).toContain('/proc');
  });

  it('refuses a path below a file and an existing file, naming which', async () => {
    const root = tempDir('below-file');
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    await expect(bounded(createOutputFolder(join(file, 'out'), '--out'))).rejects.toThrow(/lies below a file: .* is a file, not a folder/);
    await expect(bounded(createOutputFolder(file, '--out'))).rejects.toThrow(/is a file, not a folder/);
  });

  it('creates missing levels and accepts an existing folder', async () => {
    const root = tempDir('levels');
    await createOutputFolder(join(root, 'a', 'b', 'c'), '--out');
    await createOutputFolder(join(root, 'a', 'b', 'c'), '--out');
  });
});

describe('the commands', () => {
  it('capture --out /proc/... exits 2 naming the location, within the bound', async () => {
    const run = await runCliBounded(['capture', '--bundle', referenceBundle(SMALL_CASE), '--out', '/proc/ti-no-such/out']);
    const said = describeRefusal(run);
    expect(run.timedOut, said).toBe(false);
    expect(run.status, said).toBe(2);
    expect(run.stderr, said).toContain('--out /proc/ti-no-such/out');
    expect(hasStackTrace(run.stderr), said).toBe(false);
  });

  it('--gate --work /proc/... exits 2 naming the location, within the bound', async () => {
    const config = tempDir('gate-config');
    const run = await runCliBounded(['--gate', '--bundle', referenceBundle(SMALL_CASE), '--work', '/proc/ti-no-such/work'], {
      env: { TRACE_INSPECTOR_CONFIG_DIR: config },
    });
    const said = describeRefusal(run);
    expect(run.timedOut, said).toBe(false);
    expect(run.status, said).toBe(2);
    expect(run.stderr, said).toContain('--work /proc/ti-no-such/work');
    expect(hasStackTrace(run.stderr), said).toBe(false);
  });
});

// A capture refused before it returns (here: its output folder is not empty) closes the
// reference bundle it opened: the padding check read the reference's tensors, and their files'
// descriptors must not outlive the call until the garbage collector closes them (Node warns of
// that, and will make it an error).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureRun } from '../../main/core/capture/capture-run.ts';
import { InputError } from '../../main/core/io/input-error.ts';
import { REFERENCE_ENGINE, referenceBundle, tempDirTracker } from '../helpers/paths.ts';
import { descriptorsUnder } from '../helpers/open-descriptors.ts';
import { rejectionOf } from '../helpers/rejection.ts';

const { tempDir, removeTempDirs } = tempDirTracker('capture-refused');
afterAll(removeTempDirs);

describe('a capture refused after the reference was opened', () => {
  it('closes the reference: no descriptor is left on its files', async () => {
    const referenceDir = referenceBundle('greedy');
    const outDir = join(tempDir('out'), 'out');
    mkdirSync(outDir);
    writeFileSync(join(outDir, 'keep.txt'), 'not ours');
    expect(descriptorsUnder(referenceDir)).toEqual([]);
    const refused = await rejectionOf(captureRun({ library: REFERENCE_ENGINE, referenceDir, outDir, command: 'test' }), InputError);
    expect(refused.message).toContain('not empty');
    expect(descriptorsUnder(referenceDir)).toEqual([]);
  });
});

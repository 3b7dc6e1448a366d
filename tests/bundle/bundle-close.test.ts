// A bundle that closes while a read is on its way to its file (a comparison's read-ahead,
// abandoned when the comparison fails or is cancelled) must not open that file again: the
// descriptor would outlive the bundle, closed only by the garbage collector, which Node warns of
// ("Closing file descriptor N on garbage collection") and will make an error.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BUNDLES_DIR } from '../helpers/paths.ts';
import { descriptorsUnder } from '../helpers/open-descriptors.ts';
import { rejectionOf } from '../helpers/rejection.ts';

const REFERENCE = join(BUNDLES_DIR, 'greedy', 'reference');

/** A boundary of pass 1 and the bundle, opened as a session opens a run it has verified. */
async function opened(): Promise<{ bundle: TraceBundle; pass: number; name: string }> {
  const bundle = await openBundle(REFERENCE, { verify: 'none' });
  const pass = bundle.passes[1];
  const name = pass?.boundaries[0]?.name;
  if (pass === undefined || name === undefined) throw new Error('the greedy fixture lost its second pass');
  return { bundle, pass: pass.index, name };
}

describe('closing a bundle', () => {
  it('leaves no descriptor open when a read was on its way to the file, and refuses it naming the tensor and the bundle', async () => {
    expect(descriptorsUnder(REFERENCE)).toEqual([]);
    const { bundle, pass, name } = await opened();
    const reading = rejectionOf(bundle.readBoundary(pass, name), Error);
    const windows = rejectionOf(bundle.boundaryWindows?.(pass, name) ?? Promise.resolve(), Error);
    await bundle.close();
    const refused = await reading;
    expect(refused.message).toContain(`was asked for after its bundle (${join(REFERENCE, 'manifest.json')}) was closed`);
    expect(refused.message).toContain(join(REFERENCE, bundle.manifest.passes[pass]?.file ?? ''));
    expect((await windows).message).toContain('was closed');
    expect(descriptorsUnder(REFERENCE)).toEqual([]);
  });

  it('refuses a read asked for after the close, without opening the file', async () => {
    const { bundle, pass, name } = await opened();
    await bundle.readBoundary(pass, name);
    expect(descriptorsUnder(REFERENCE).length).toBeGreaterThan(0);
    await bundle.close();
    expect(descriptorsUnder(REFERENCE)).toEqual([]);
    await expect(bundle.readBoundary(pass, name)).rejects.toThrow('was closed');
    await expect(bundle.readBoundaryRange(pass, name, 0, 4)).rejects.toThrow('was closed');
    expect(descriptorsUnder(REFERENCE)).toEqual([]);
  });
});

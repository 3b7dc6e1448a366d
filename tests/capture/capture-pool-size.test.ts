// The capture pool's ring is sized from the reference's passes (capture-pool-size.ts): a capture
// of the embedded default no longer touches a 64 MiB ring for a few hundred KiB of records, a
// reference with large passes still gets room for several of them, and the environment's
// TRACE_INSPECTOR_CAPTURE_POOL_BYTES still decides when it is set.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import type { BoundaryEntry, PassEntry } from '../../main/core/bundle/manifest-schema.ts';
import { capturePoolBytes } from '../../main/core/capture/capture-pool-size.ts';
import { captureRun } from '../../main/core/capture/capture-run.ts';
import { DEFAULT_POOL_BYTES } from '../../main/engine-host/capture-pool.ts';
import type { PassResult } from '../../main/engine-host/engine-host.ts';
import { REFERENCE_ENGINE, referenceBundle, tempDirTracker } from '../helpers/paths.ts';

const { tempDir, removeTempDirs } = tempDirTracker('capture-pool-size');
afterAll(removeTempDirs);

const MiB = 1024 * 1024;
const ringsOf = (passes: readonly PassResult[]): (number | undefined)[] => passes.map((pass) => (pass.status === 'ok' ? pass.capture?.poolBytes : undefined));

/** The reference's first pass with one more F32 boundary of `elements` values (a large hidden state). */
function passWithLarge(pass: PassEntry, elements: number): PassEntry {
  const first = pass.boundaries[0] as BoundaryEntry;
  const large: BoundaryEntry = { ...first, name: 'large.hidden', dtype: 'F32', shape: [elements], strides: [1] };
  return { ...pass, boundaries: [...pass.boundaries, large] };
}

describe('the ring for a capture against a reference', () => {
  it('is the least ring for the embedded default, and the capture uses it for every pass', async () => {
    const referenceDir = referenceBundle('greedy');
    const reference = await openBundle(referenceDir);
    const expected = capturePoolBytes(reference.passes);
    await reference.close();
    expect(expected).toBe(4 * MiB);
    expect(expected).toBeLessThan(DEFAULT_POOL_BYTES);
    const result = await captureRun({ library: REFERENCE_ENGINE, referenceDir, outDir: join(tempDir('least'), 'out'), command: 'test' });
    await result.reference.close();
    expect(result.run.status).toBe('completed');
    expect(result.passes.length).toBe(reference.passes.length);
    expect(ringsOf(result.passes)).toEqual(result.passes.map(() => expected));
  });

  it('holds four of the largest pass, in whole 4 MiB steps, up to the default ring', async () => {
    const reference = await openBundle(referenceBundle('greedy'));
    await reference.close();
    const pass = reference.passes[0] as PassEntry;
    // 2.5 MiB of values: four such passes need 10 MiB and a little more, so 12 MiB.
    const ring = capturePoolBytes([pass, passWithLarge(pass, (5 * MiB) / 8)]);
    expect(ring % (4 * MiB)).toBe(0);
    expect(ring).toBeGreaterThanOrEqual(4 * 2.5 * MiB);
    expect(ring).toBeLessThan(4 * 2.5 * MiB + 4 * MiB);
    // A pass of 16 MiB of values would want 64 MiB and more: the default ring is the most.
    expect(capturePoolBytes([passWithLarge(pass, 4 * MiB)])).toBe(DEFAULT_POOL_BYTES);
    expect(capturePoolBytes([])).toBe(4 * MiB);
  });

  it('TRACE_INSPECTOR_CAPTURE_POOL_BYTES still sets the ring when given', async () => {
    const previous = process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'];
    process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'] = String(8 * MiB);
    try {
      const result = await captureRun({
        library: REFERENCE_ENGINE,
        referenceDir: referenceBundle('greedy'),
        outDir: join(tempDir('env'), 'out'),
        command: 'test',
      });
      await result.reference.close();
      expect(result.run.status).toBe('completed');
      expect(ringsOf(result.passes)).toEqual(result.passes.map(() => 8 * MiB));
    } finally {
      if (previous === undefined) delete process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'];
      else process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'] = previous;
    }
  });
});

// docs/implementing-the-abi.md points users at engine/examples/minimal_engine.c as a complete
// engine, and at helper_minimal_engine.c, the same engine written with the helper header
// (engine/helpers/ti_helper.h) in under a third of the lines. This proves both: built by
// `npm install`, loaded by the real engine host, captured into a bundle whose values are the
// documented y = 2x, then y + 1 per decode, with the same errors.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { HELPER_MINIMAL_ENGINE, MINIMAL_ENGINE, REPO_ROOT, freshTempDir } from '../helpers/paths.ts';
import { captureHeader } from '../engine-host/engine-host-fixtures.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['minimal_engine.c', MINIMAL_ENGINE],
  ['helper_minimal_engine.c', HELPER_MINIMAL_ENGINE],
] as const)('the documented minimal engine (%s)', (_source, MINIMAL_ENGINE) => {
  it('describes itself, runs prefill and decodes, and is captured with the documented values', async () => {
    const dir = freshTempDir('minimal');
    dirs.push(dir);
    rmSync(dir, { recursive: true });
    const x = Float32Array.from([1, 2, 3]);
    const inputs = [{ name: 'x', dtype: 'F32' as const, shape: [3], data: x }];
    const host = await EngineHost.start({ library: MINIMAL_ENGINE });
    try {
      expect(host.description.engine.name).toBe('minimal-example');
      expect(host.description.boundaries.map((boundary) => boundary.name)).toEqual(['toy.y', 'toy.sum']);
      await host.open();
      await host.setInput('x', inputs[0] as (typeof inputs)[0]);
      await host.beginCapture(dir, captureHeader(host, inputs, 'minimal'));
      expect((await host.runPass('prefill')).status).toBe('ok');
      expect((await host.runPass('decode')).status).toBe('ok');
      const early = await host.runPass('decode');
      expect(early.status).toBe('ok');
      await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: 'toy.sum' });
    } finally {
      await host.close();
    }
    const bundle = await openBundle(dir);
    try {
      const values = async (pass: number, name: string): Promise<number[]> => {
        const tensor = await bundle.readBoundary(pass, name);
        return Array.from(new Float32Array(tensor.data.slice().buffer));
      };
      expect(await values(0, 'toy.y')).toEqual([2, 4, 6]);
      expect(await values(0, 'toy.sum')).toEqual([12]);
      expect(await values(1, 'toy.y')).toEqual([3, 5, 7]);
      expect(await values(2, 'toy.sum')).toEqual([18]);
    } finally {
      await bundle.close();
    }
  });

  it('reports its own errors through the host instead of crashing', async () => {
    const host = await EngineHost.start({ library: MINIMAL_ENGINE });
    try {
      await host.open();
      const decode = await host.runPass('decode');
      expect(decode).toMatchObject({ status: 'engine_error', code: 'TI_ERR_STATE', message: 'decode before prefill' });
      await expect(host.setInput('y', { dtype: 'F32', shape: [1], data: new Float32Array(1) })).rejects.toMatchObject({
        code: 'TI_ERR_UNKNOWN_NAME',
      });
    } finally {
      await host.close();
    }
  });
});

describe('the helper header', () => {
  it('writes the minimal engine in under a third of the lines', () => {
    const lines = (file: string): number =>
      readFileSync(join(REPO_ROOT, 'engine', 'examples', file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '').length;
    const plain = lines('minimal_engine.c');
    const helped = lines('helper_minimal_engine.c');
    expect(helped * 3).toBeLessThan(plain);
  });
});

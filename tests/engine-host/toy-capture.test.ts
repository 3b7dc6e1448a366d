// The capture path on the toy engine, whose toy.mix buffer is stored transposed (strides [1, T]):
// the host gathers it into row-major, keeps the engine's strides, and marks the layout strided.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { EngineHost, type Isolation } from '../../main/engine-host/engine-host.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { captureHeader, requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const tempDirs: string[] = [];
beforeAll(() => requireBuiltHost());
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe.each<Isolation>(['process', 'thread'])('toy capture, %s isolation', (isolation) => {
  it('gathers a transposed record into row-major and records its strides', async () => {
    const tokens = [4, 9, 2, 7, 1];
    const inputs = toyInputs(tokens);
    const dir = freshTempDir(`toy-${isolation}`);
    tempDirs.push(dir);
    rmSync(dir, { recursive: true });
    const host = await EngineHost.start({ library: testlib('toy_engine'), isolation });
    try {
      await host.open();
      await setInputs(host, inputs);
      await host.setOption('perturb.flip_sign', true);
      await host.beginCapture(dir, captureHeader(host, inputs));
      expect((await host.runPass('prefill')).status).toBe('ok');
      await host.finishCapture({ status: 'completed', message: '', last_pass: 0, last_boundary: 'toy.token' });
    } finally {
      await host.close();
    }
    const bundle = await openBundle(dir);
    try {
      const entry = bundle.boundary(0, 'toy.mix');
      expect(entry).toMatchObject({ strides: [1, tokens.length], layout: 'strided', shape: [tokens.length, 4], stage: 'toy' });
      const mix = await bundle.readBoundary(0, 'toy.mix');
      const values = new Float32Array(mix.data.buffer, mix.data.byteOffset, mix.data.byteLength / 4);
      // mix[t][j] = -(token_t * 0.5 + j + t) * (j + 1), row-major (toy_engine.h, flip_sign on).
      const expected = tokens.flatMap((token, t) => [0, 1, 2, 3].map((j) => -(token * 0.5 + j + t) * (j + 1)));
      expect(Array.from(values)).toEqual(expected);
      expect(bundle.boundary(0, 'toy.embed')).toMatchObject({ layout: 'row-major', strides: [4, 1] });
      expect(bundle.boundary(0, 'toy.token')?.stage).toBe('sampler');
    } finally {
      await bundle.close();
    }
  });

  it('injects a tensor the engine uses downstream and records', async () => {
    const host = await EngineHost.start({ library: testlib('toy_engine'), isolation });
    try {
      await host.open();
      await setInputs(host, toyInputs([3]));
      await host.inject('toy.token', { dtype: 'I32', shape: [1], data: Int32Array.from([42]) });
      const prefill = await host.runPass('prefill');
      expect(prefill.status === 'ok' && prefill.state['last_token']).toBe(42);
      await expect(host.inject('toy.mix', { dtype: 'F32', shape: [1, 4], data: new Float32Array(4) })).rejects.toMatchObject({
        code: 'TI_ERR_INVALID_ARGUMENT',
      });
      await host.reset();
      const again = await host.runPass('prefill');
      expect(again).toMatchObject({ status: 'ok', index: 0 });
    } finally {
      await host.close();
    }
  });
});

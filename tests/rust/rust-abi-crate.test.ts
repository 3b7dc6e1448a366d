// rust/trace-inspector-abi: a dependency-free crate with the ABI types, a safe Engine trait and
// export_engine!. Its example (examples/minimal_engine.rs, minimal_engine.c in Rust) is built
// offline with cargo, loaded by the real engine host and captured with the documented values;
// the crate's checks refuse bad inputs, options and injections with the right statuses; and a
// panic inside the engine becomes TI_ERR_INTERNAL with its message, never an abort of the host.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { captureHeader } from '../engine-host/engine-host-fixtures.ts';
import { cargoBuild, cdylibPath } from '../helpers/cargo.ts';
import { REPO_ROOT, freshTempDir } from '../helpers/paths.ts';

const root = freshTempDir('rust-abi');
let library = '';
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => {
  cargoBuild(join(REPO_ROOT, 'rust', 'trace-inspector-abi'), join(root, 'target'), ['--examples']);
  library = cdylibPath(join(root, 'target'), 'minimal_engine', true);
}, 300_000);

const x = Float32Array.from([1, 2, 3]);

describe('the Rust crate trace-inspector-abi', () => {
  it('exports an engine the host captures with the documented values', async () => {
    const dir = join(root, 'capture');
    const inputs = [{ name: 'x', dtype: 'F32' as const, shape: [3], data: x }];
    const host = await EngineHost.start({ library });
    try {
      expect(host.description.engine.name).toBe('minimal-example-rust');
      expect(host.description.boundaries.map((b) => [b.name, b.stage, b.dtype, b.shape])).toEqual([
        ['toy.y', 'toy', 'F32', ['N']],
        ['toy.sum', 'toy', 'F32', [1]],
      ]);
      expect(host.description.options).toEqual([
        { name: 'debug.panic_in_pass', type: 'bool', default: false, doc: 'panic inside the pass (shows the FFI guard)' },
      ]);
      await host.open();
      await host.setInput('x', inputs[0] as (typeof inputs)[0]);
      await host.beginCapture(dir, captureHeader(host, inputs, 'rust-minimal'));
      for (const kind of ['prefill', 'decode', 'decode'] as const) expect((await host.runPass(kind)).status).toBe('ok');
      await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: 'toy.sum' });
    } finally {
      await host.close();
    }
    const bundle = await openBundle(dir);
    try {
      const values = async (pass: number, name: string): Promise<number[]> =>
        Array.from(new Float32Array((await bundle.readBoundary(pass, name)).data.slice().buffer));
      expect(await values(0, 'toy.y')).toEqual([2, 4, 6]);
      expect(await values(0, 'toy.sum')).toEqual([12]);
      expect(await values(1, 'toy.y')).toEqual([3, 5, 7]);
      expect(await values(2, 'toy.sum')).toEqual([18]);
    } finally {
      await bundle.close();
    }
  });

  it('refuses what the catalogue does not allow, with the status and a message naming it', async () => {
    const host = await EngineHost.start({ library });
    try {
      await host.open();
      expect(await host.runPass('decode')).toMatchObject({ status: 'engine_error', code: 'TI_ERR_STATE', message: 'decode before prefill' });
      expect(await host.runPass('prefill')).toMatchObject({ status: 'engine_error', code: 'TI_ERR_STATE', message: 'set input x before prefill' });
      await expect(host.setInput('y', { dtype: 'F32', shape: [1], data: new Float32Array(1) })).rejects.toMatchObject({ code: 'TI_ERR_UNKNOWN_NAME' });
      await expect(host.setInput('x', { dtype: 'F64', shape: [1], data: new Float64Array(1) })).rejects.toMatchObject({
        code: 'TI_ERR_SHAPE',
        message: expect.stringContaining('input x: dtype f64, the catalogue declares f32'),
      });
      await expect(host.setOption('debug.panic_in_pass', 'maybe')).rejects.toMatchObject({
        code: 'TI_ERR_INVALID_ARGUMENT',
        message: expect.stringContaining('expected 0, 1, true or false'),
      });
      await expect(host.setOption('nope', '1')).rejects.toMatchObject({ code: 'TI_ERR_UNKNOWN_NAME' });
      await expect(host.inject('toy.sum', { dtype: 'F32', shape: [1], data: Float32Array.from([1]) })).rejects.toMatchObject({
        code: 'TI_ERR_INVALID_ARGUMENT',
        message: expect.stringContaining('does not accept injection'),
      });
      await host.setInput('x', { dtype: 'F32', shape: [3], data: x });
      await expect(host.inject('toy.y', { dtype: 'F32', shape: [2], data: Float32Array.from([1, 2]) })).rejects.toMatchObject({
        code: 'TI_ERR_SHAPE',
        message: expect.stringContaining('injection at toy.y: extent 0 is 2, expected N = 3'),
      });
      await expect(host.inject('toy.y', { dtype: 'I32', shape: [3], data: Int32Array.from([1, 2, 3]) })).rejects.toMatchObject({ code: 'TI_ERR_SHAPE' });
    } finally {
      await host.close();
    }
  });

  it("records the engine's own value at an injected boundary, then lets the injected value flow on, for one pass", async () => {
    const dir = join(root, 'inject');
    const inputs = [{ name: 'x', dtype: 'F32' as const, shape: [3], data: x }];
    const host = await EngineHost.start({ library });
    try {
      await host.open();
      await host.setInput('x', inputs[0] as (typeof inputs)[0]);
      await host.beginCapture(dir, captureHeader(host, inputs, 'rust-inject'));
      expect((await host.runPass('prefill')).status).toBe('ok');
      await host.inject('toy.y', { dtype: 'F32', shape: [3], data: Float32Array.from([10, 20, 30]) });
      expect((await host.runPass('decode')).status).toBe('ok');
      expect((await host.runPass('decode')).status).toBe('ok');
      await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: 'toy.sum' });
    } finally {
      await host.close();
    }
    const bundle = await openBundle(dir);
    try {
      const values = async (pass: number, name: string): Promise<number[]> =>
        Array.from(new Float32Array((await bundle.readBoundary(pass, name)).data.slice().buffer));
      expect(await values(1, 'toy.y')).toEqual([3, 5, 7]); // the engine's own value is recorded
      expect(await values(1, 'toy.sum')).toEqual([60]); // the injected one flows into the sum
      expect(await values(2, 'toy.y')).toEqual([11, 21, 31]); // and into the next pass; the injection held one pass
    } finally {
      await bundle.close();
    }
  });

  it('turns a panic inside the engine into TI_ERR_INTERNAL with its message, and refuses the poisoned session', async () => {
    const host = await EngineHost.start({ library });
    try {
      await host.open();
      await host.setInput('x', { dtype: 'F32', shape: [3], data: x });
      await host.setOption('debug.panic_in_pass', '1');
      const failed = await host.runPass('prefill');
      expect(failed).toMatchObject({ status: 'engine_error', code: 'TI_ERR_INTERNAL' });
      expect(failed.status === 'engine_error' ? failed.message : '').toMatch(
        /^the engine panicked in pass 0: index out of bounds: the len is 0 but the index is 3/,
      );
      expect(host.alive).toBe(true);
      const again = await host.runPass('prefill');
      expect(again).toMatchObject({ status: 'engine_error', code: 'TI_ERR_STATE' });
      expect(again.status === 'engine_error' ? again.message : '').toMatch(/panicked earlier in this session/);
    } finally {
      await host.close();
    }
  });
});

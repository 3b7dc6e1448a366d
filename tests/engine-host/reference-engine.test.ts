// The engine host driving the real reference engine (engine/build/libti_reference.so), in both
// isolation modes: the catalogue's promises hold on every pass, the capture is byte-exact, and
// engine errors come back with the engine's own message.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { EngineCallError } from '../../main/engine-host/engine-errors.ts';
import { EngineHost, type Isolation, type PassResult, type RecordEvent } from '../../main/engine-host/engine-host.ts';
import { freshTempDir } from '../helpers/paths.ts';
import {
  captureHeader,
  endOfAudioPasses,
  expectedBoundaries,
  REFERENCE_ENGINE,
  REFERENCE_PROMPT,
  referenceInputs,
  requireBuiltHost,
  runDirect,
  setInputs,
  WEIGHTS_FILE,
} from './engine-host-fixtures.ts';

const PASSES = ['prefill', 'decode', 'decode', 'decode', 'decode', 'decode', 'decode'] as const;
const tempDirs: string[] = [];

beforeAll(() => requireBuiltHost());
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

type OkPass = Extract<PassResult, { status: 'ok' }>;

function expectOk(result: PassResult): OkPass {
  if (result.status !== 'ok') throw new Error(`pass failed: ${JSON.stringify(result)}`);
  return result;
}

describe.each<Isolation>(['process', 'thread'])('reference engine, %s isolation', (isolation) => {
  it('emits every catalogue boundary on every pass its emit says, with the declared dtype and shape', async () => {
    const host = await EngineHost.start({ library: REFERENCE_ENGINE, isolation });
    try {
      expect(host.abiVersion).toBe(1);
      expect(host.librarySha256).toMatch(/^[0-9a-f]{64}$/);
      const events: RecordEvent[] = [];
      host.onRecord((event) => events.push(event));
      await host.open({}, WEIGHTS_FILE);
      await setInputs(host, referenceInputs());
      const results: OkPass[] = [];
      for (const kind of PASSES) results.push(expectOk(await host.runPass(kind)));

      expect(results.map((r) => r.index)).toEqual(PASSES.map((_, i) => i));
      const modes = new Set(results.map((r) => r.mode));
      expect(modes).toEqual(new Set(['text', 'audio'])); // both emit rules are exercised
      const rows = REFERENCE_PROMPT.filter((token) => token === -1).length;
      const eoa = endOfAudioPasses(REFERENCE_ENGINE, WEIGHTS_FILE, referenceInputs(), PASSES);
      for (const result of results) {
        const T = result.kind === 'prefill' ? REFERENCE_PROMPT.length : 1;
        const facts = { pcmIn: false, endOfAudio: eoa.has(result.index) };
        const expected = expectedBoundaries(host.description, result, { T, R: rows }, facts);
        const seen = events.filter((event) => event.pass === result.index).map(({ name, dtype, shape }) => ({ name, dtype, shape }));
        expect(seen, `pass ${result.index} (${result.kind}, ${result.mode})`).toEqual(expected);
        expect(result.recordCount).toBe(expected.length);
        expect(result.state.passes_run).toBe(result.index + 1);
      }
      // Stages come from the catalogue.
      const stageOf = new Map(host.description.boundaries.map((b) => [b.name, b.stage]));
      for (const event of events) expect(event.stage).toBe(stageOf.get(event.name));
    } finally {
      await host.close();
    }
  });

  it('captures a bundle that reads back byte-exact against the records the engine emitted', async () => {
    const inputs = referenceInputs();
    const direct = runDirect(REFERENCE_ENGINE, WEIGHTS_FILE, inputs, PASSES);
    const dir = freshTempDir(`ref-capture-${isolation}`);
    tempDirs.push(dir);
    rmSync(dir, { recursive: true });
    const host = await EngineHost.start({ library: REFERENCE_ENGINE, isolation });
    let manifestPath: string;
    const results: OkPass[] = [];
    try {
      await host.open({}, WEIGHTS_FILE);
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs));
      for (const kind of PASSES) results.push(expectOk(await host.runPass(kind)));
      manifestPath = await host.finishCapture({ status: 'completed', message: '', last_pass: PASSES.length - 1, last_boundary: 'gen.prng' });
    } finally {
      await host.close();
    }
    const bundle = await openBundle(dir);
    try {
      expect(bundle.manifestPath).toBe(manifestPath);
      expect(bundle.passes.map((p) => p.mode)).toEqual(results.map((r) => r.mode));
      const listed = bundle.passes.flatMap((pass) => pass.boundaries.map((b) => `${pass.index}:${b.name}`));
      expect(listed).toEqual(direct.map((r) => `${r.pass}:${r.name}`));
      for (const record of direct) {
        const tensor = await bundle.readBoundary(record.pass, record.name);
        expect(tensor.dtype, `${record.pass}:${record.name}`).toBe(record.dtype);
        expect(tensor.shape).toEqual(record.shape);
        expect(tensor.strides).toEqual(record.strides);
        expect(Buffer.compare(Buffer.from(tensor.data), Buffer.from(record.data)), `${record.pass}:${record.name} bytes`).toBe(0);
      }
      const totalBytes = direct.reduce((sum, r) => sum + r.data.byteLength, 0);
      expect(results.reduce((sum, r) => sum + r.bytes, 0)).toBe(totalBytes);
      for (const input of inputs) {
        const stored = await bundle.readInput(input.name);
        expect(Buffer.compare(Buffer.from(stored.data), Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength))).toBe(0);
      }
    } finally {
      await bundle.close();
    }
  });

  it('reports engine errors with the engine message: decode before prefill, an unknown input', async () => {
    const host = await EngineHost.start({ library: REFERENCE_ENGINE, isolation });
    try {
      await host.open({}, WEIGHTS_FILE);
      await setInputs(host, referenceInputs());
      const early = await host.runPass('decode');
      expect(early.status).toBe('engine_error');
      if (early.status !== 'engine_error') return;
      expect(early.code).toBe('TI_ERR_STATE');
      expect(early.message).toMatch(/prefill/i);
      expect(early.recordCount).toBe(0);

      const refused = host.setInput('no_such_input', { dtype: 'I32', shape: [1], data: Int32Array.from([1]) });
      await expect(refused).rejects.toBeInstanceOf(EngineCallError);
      await expect(refused).rejects.toMatchObject({ status: 'engine_error', code: 'TI_ERR_UNKNOWN_NAME', call: 'ti_set_input' });
      await expect(refused).rejects.toThrow(/no_such_input/);
      await expect(host.setOption('perturb.no_such_option', '1')).rejects.toMatchObject({ code: 'TI_ERR_UNKNOWN_NAME' });

      // The session is still usable after refused calls.
      expect(expectOk(await host.runPass('prefill')).index).toBe(0);
    } finally {
      await host.close();
    }
  });

  it('records only the wanted boundaries, and nothing with the callback cleared', async () => {
    const host = await EngineHost.start({ library: REFERENCE_ENGINE, isolation });
    try {
      const events: RecordEvent[] = [];
      host.onRecord((event) => events.push(event));
      await host.open({}, WEIGHTS_FILE);
      await setInputs(host, referenceInputs());
      await host.setWanted(['backbone.logits', 'gen.state']);
      const prefill = expectOk(await host.runPass('prefill'));
      expect(events.map((e) => e.name)).toEqual(['backbone.logits', 'gen.state']);
      expect(prefill.recordCount).toBe(2);
      await host.setRecordCallbackEnabled(false);
      const decode = expectOk(await host.runPass('decode'));
      expect(decode.recordCount).toBe(0);
      expect(events).toHaveLength(2);
      await host.setWanted(null);
      await host.setRecordCallbackEnabled(true);
      const again = expectOk(await host.runPass('decode'));
      const eoa = endOfAudioPasses(REFERENCE_ENGINE, WEIGHTS_FILE, referenceInputs(), ['prefill', 'decode', 'decode']);
      const facts = { pcmIn: false, endOfAudio: eoa.has(again.index) };
      expect(again.recordCount).toBe(expectedBoundaries(host.description, again, { T: 1 }, facts).length);
    } finally {
      await host.close();
    }
  });
});

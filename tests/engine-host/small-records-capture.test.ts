// A capture of the small-records testlib (engine/testlibs/small_records_engine.c: thousands of
// 300-byte records a pass, the capture-overhead bench's small-record case) is whole: through the
// C recorder and a capture pool far smaller than a pass (so the ring wraps and the engine's thread
// waits for the writer many times a pass), every record lands in its pass, in the engine's order,
// with the engine's values.
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { EngineHost, type Isolation } from '../../main/engine-host/engine-host.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { captureHeader, requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const RECORDS = 4096;
const ELEMENTS = 75;
const TOKENS = [5, 11, 2];
const KINDS = ['prefill', 'decode', 'decode'] as const;

const tempDirs: string[] = [];
beforeAll(() => requireBuiltHost());
afterEach(() => {
  delete process.env['TRACE_INSPECTOR_RECORDER'];
  delete process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'];
});
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

const nameOf = (record: number): string => `small.r${String(record).padStart(4, '0')}`;

/** The engine's values of one record, computed as its header comment says (xorshift32, FNV-1a seed). */
function expectedValues(tokens: readonly number[], pass: number, record: number, elements: number): Float32Array {
  let seed = 2166136261;
  for (const token of tokens) seed = Math.imul((seed ^ token) >>> 0, 16777619) >>> 0;
  let h = (seed ^ Math.imul(pass, 0x9e3779b9) ^ Math.imul(record + 1, 0x85ebca6b)) >>> 0;
  if (h === 0) h = 1;
  const values = new Float32Array(elements);
  for (let i = 0; i < elements; i++) {
    h = (h ^ (h << 13)) >>> 0;
    h = (h ^ (h >>> 17)) >>> 0;
    h = (h ^ (h << 5)) >>> 0;
    values[i] = (h >>> 8) / 16777216;
  }
  return values;
}

describe.each<Isolation>(['process', 'thread'])('a small-records capture, %s isolation', (isolation) => {
  it('holds every record of every pass, in order, with the engine values', async () => {
    process.env['TRACE_INSPECTOR_RECORDER'] = 'c';
    // 256 KiB of ring against 1.3 MB of entries a pass: the recorder asks the host for room again and again.
    process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'] = String(256 * 1024);
    const dir = freshTempDir(`small-records-${isolation}`);
    tempDirs.push(dir);
    rmSync(dir, { recursive: true });
    const inputs = toyInputs(TOKENS);
    const host = await EngineHost.start({ library: testlib('small_records_engine'), isolation });
    let announced = 0;
    const unsubscribe = host.onRecord(() => (announced += 1));
    try {
      await host.open();
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs));
      for (const kind of KINDS) {
        const result = await host.runPass(kind);
        if (result.status !== 'ok') throw new Error(`pass failed: ${JSON.stringify(result)}`);
        expect(result.capture?.recorder).toBe('c');
        expect(result.recordCount).toBe(RECORDS);
        expect(result.bytes).toBe(RECORDS * ELEMENTS * 4);
      }
      await host.finishCapture({ status: 'completed', message: '', last_pass: KINDS.length - 1, last_boundary: nameOf(RECORDS - 1) });
    } finally {
      unsubscribe();
      await host.close();
    }
    expect(announced).toBe(KINDS.length * RECORDS);

    const names = Array.from({ length: RECORDS }, (_, record) => nameOf(record));
    const bundle = await openBundle(dir);
    try {
      expect(bundle.passes).toHaveLength(KINDS.length);
      for (const [pass, entry] of bundle.passes.entries()) {
        expect(entry.boundaries.map((boundary) => boundary.name)).toEqual(names);
        const wrong: string[] = [];
        for (const [record, name] of names.entries()) {
          const tensor = await bundle.readBoundary(pass, name);
          const expected = Buffer.from(expectedValues(TOKENS, pass, record, ELEMENTS).buffer);
          if (tensor.dtype !== 'F32' || tensor.shape.join() !== String(ELEMENTS) || !Buffer.from(tensor.data).equals(expected)) wrong.push(name);
        }
        expect(wrong, `pass ${pass}`).toEqual([]);
      }
    } finally {
      await bundle.close();
    }
  });
});

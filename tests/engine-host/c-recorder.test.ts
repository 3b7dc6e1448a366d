// The engine host's record callback in C (engine/host-recorder/ti_recorder.c): a capture through
// it writes the same bundle, byte for byte, as one through the JavaScript callback
// (TRACE_INSPECTOR_RECORDER=js), through a pool small enough to wrap, wait and grow, on the reference engine (~100 small records a pass), the bulk
// testlib (large records) and the toy engine (a strided record the recorder gathers), and the
// caller hears of the same records (onRecord) either way.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EngineHost, type Isolation, type RecordEvent } from '../../main/engine-host/engine-host.ts';
import { freshTempDir } from '../helpers/paths.ts';
import {
  captureHeader,
  REFERENCE_ENGINE,
  referenceInputs,
  requireBuiltHost,
  setInputs,
  testlib,
  toyInputs,
  WEIGHTS_FILE,
  type NamedTensor,
} from './engine-host-fixtures.ts';

const tempDirs: string[] = [];
beforeAll(() => requireBuiltHost());
afterEach(() => {
  delete process.env['TRACE_INSPECTOR_RECORDER'];
  delete process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'];
});
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

interface Case {
  readonly title: string;
  readonly library: string;
  readonly weights: string | null;
  readonly inputs: NamedTensor[];
  readonly options: Readonly<Record<string, string>>;
  readonly decodes: number;
}

const CASES: readonly Case[] = [
  { title: 'reference engine', library: REFERENCE_ENGINE, weights: WEIGHTS_FILE, inputs: referenceInputs(), options: {}, decodes: 3 },
  {
    title: 'bulk testlib',
    library: testlib('bulk_engine'),
    weights: null,
    inputs: toyInputs(),
    options: { 'bulk.rows': '16', 'bulk.records': '4' },
    decodes: 2,
  },
  { title: 'toy engine (strided records)', library: testlib('toy_engine'), weights: null, inputs: toyInputs([4, 9, 2, 7, 1]), options: {}, decodes: 2 },
];

/** Captures the case with one recorder; returns the folder and which recorder each pass reported. */
async function capture(
  c: Case,
  isolation: Isolation,
  recorder: 'c' | 'js',
  header: ReturnType<typeof captureHeader> | null,
): Promise<{ dir: string; recorders: string[]; passEntries: number[]; header: ReturnType<typeof captureHeader>; events: RecordEvent[] }> {
  process.env['TRACE_INSPECTOR_RECORDER'] = recorder;
  // A small pool: records wrap the ring, wait for the writer, and outgrow it (the recorder asks the host for room).
  process.env['TRACE_INSPECTOR_CAPTURE_POOL_BYTES'] = '16384';
  const dir = freshTempDir(`c-recorder-${recorder}`);
  tempDirs.push(dir);
  rmSync(dir, { recursive: true });
  const host = await EngineHost.start({ library: c.library, isolation });
  const recorders: string[] = [];
  const passEntries: number[] = [];
  const events: RecordEvent[] = [];
  const unsubscribe = host.onRecord((event) => events.push(event));
  try {
    await host.open({}, c.weights);
    await setInputs(host, c.inputs);
    for (const [key, value] of Object.entries(c.options)) await host.setOption(key, value);
    const used = header ?? captureHeader(host, c.inputs);
    await host.beginCapture(dir, used);
    const kinds = ['prefill' as const, ...Array.from({ length: c.decodes }, () => 'decode' as const)];
    for (const kind of kinds) {
      const result = await host.runPass(kind);
      if (result.status !== 'ok') throw new Error(`pass failed: ${JSON.stringify(result)}`);
      recorders.push(result.capture?.recorder ?? 'none');
      passEntries.push(result.capture?.passEntriesByRecorder ?? -1);
    }
    await host.finishCapture({ status: 'completed', message: '', last_pass: c.decodes, last_boundary: null });
    return { dir, recorders, passEntries, header: used, events };
  } finally {
    unsubscribe();
    await host.close();
  }
}

function filesOf(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name))]));
}

describe.each<Isolation>(['process', 'thread'])('the C recorder, %s isolation', (isolation) => {
  it.each(CASES)('writes the same bundle files as the JavaScript callback: $title', async (c) => {
    const viaC = await capture(c, isolation, 'c', null);
    const viaJs = await capture(c, isolation, 'js', viaC.header);
    expect(viaC.recorders.every((recorder) => recorder === 'c')).toBe(true);
    expect(viaJs.recorders.every((recorder) => recorder === 'js')).toBe(true);
    // The C recorder wrote passes' BEGIN_PASS and END_PASS entries itself (the pool the others: no
    // room then, a wrap); the JavaScript callback never does.
    expect(viaC.passEntries.every((entries) => entries >= 0 && entries <= 2)).toBe(true);
    expect(viaC.passEntries.reduce((sum, entries) => sum + entries, 0)).toBeGreaterThan(0);
    expect(viaJs.passEntries.every((entries) => entries === 0)).toBe(true);
    const cFiles = filesOf(viaC.dir);
    const jsFiles = filesOf(viaJs.dir);
    expect([...cFiles.keys()].sort()).toEqual([...jsFiles.keys()].sort());
    expect(cFiles.size).toBeGreaterThan(c.decodes + 1);
    for (const [name, bytes] of cFiles) expect(bytes.equals(jsFiles.get(name) as Buffer), name).toBe(true);
    // The caller hears of the same records, in the same order (the C recorder's log, decoded by the caller).
    expect(viaC.events.length).toBeGreaterThan(0);
    expect(viaC.events).toEqual(viaJs.events);
  });

  it('writes every pass entry itself when the pool has room (one call at each end of a pass)', async () => {
    const c = CASES[0] as Case;
    process.env['TRACE_INSPECTOR_RECORDER'] = 'c';
    const dir = freshTempDir('c-recorder-entries');
    tempDirs.push(dir);
    rmSync(dir, { recursive: true });
    const host = await EngineHost.start({ library: c.library, isolation });
    try {
      await host.open({}, c.weights);
      await setInputs(host, c.inputs);
      await host.beginCapture(dir, captureHeader(host, c.inputs));
      const entries: (number | undefined)[] = [];
      for (const kind of ['prefill', 'decode', 'decode'] as const) {
        const result = await host.runPass(kind);
        if (result.status !== 'ok') throw new Error(`pass failed: ${JSON.stringify(result)}`);
        entries.push(result.capture?.passEntriesByRecorder);
      }
      expect(entries).toEqual([2, 2, 2]);
      await host.finishCapture({ status: 'completed', message: '', last_pass: 2, last_boundary: null });
      expect(readdirSync(dir).filter((name) => /^pass-\d+\.safetensors$/.test(name))).toHaveLength(3);
    } finally {
      await host.close();
    }
  });
});

// Each record-contract check the engine host makes on the engine's thread, fed its violation by
// bad_record_engine (decode pass 1's toy.mix, a strided record, broken as TOY_BAD_RECORD says):
// the pass stops as engine_error with the message naming the record and the field, the same
// through the C recorder (engine/host-recorder/ti_recorder.c) as through the JavaScript callback
// (TRACE_INSPECTOR_RECORDER=js), and the host lives on.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { captureHeader, requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const tempDirs: string[] = [];
beforeAll(() => requireBuiltHost());
afterEach(() => {
  delete process.env['TOY_BAD_RECORD'];
  delete process.env['TRACE_INSPECTOR_RECORDER'];
});
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function filesOf(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name))]));
}

const VIOLATIONS: readonly [string, RegExp][] = [
  ['pass_index', /toy\.mix: ti_record says pass 2 \(kind 1\), but this is pass 1 \(decode\)/],
  ['pass_kind', /toy\.mix: ti_record says pass 1 \(kind 0\), but this is pass 1 \(decode\)/],
  ['name', /toy\.unknown: not a boundary of the engine's catalogue/],
  ['null_name', /ti_record\.name is NULL/],
  ['dtype', /toy\.mix: ti_record\.dtype 99 is not a ti_dtype/],
  ['rank', /ti_record\.rank is 9 \(at most 8\) at toy\.mix/],
  ['null_shape', /ti_record\.shape is NULL at toy\.mix \(rank 2\)/],
  ['extent', /toy\.mix: shape\[0\] is -1/],
  ['stride', /toy\.mix: strides\[0\] is -1 \(negative strides are not supported\)/],
  ['huge_stride', /record "toy\.mix"\.strides: expected 2 integers \(one per axis of shape \[0, 4\]\)/],
  [
    'huge_shape',
    /toy\.mix: engine contract violated: shape \[4503599627370496, 4\] has 1\.801e\+16 elements, more bytes than 2\^53 \(the product of the extents cannot be addressed\)/,
  ],
  ['byte_length', /toy\.mix: byte_length 15 does not cover the 16 bytes its shape and strides address/],
  ['data', /ti_record\.data is NULL at toy\.mix \(16 bytes\)/],
  ['duplicate', /boundary "toy\.mix" was already recorded in pass 1/],
];

/**
 * Captures prefill and decode pass 1 with `recorder`, then finishes the capture (the run ended
 * engine_error); returns which recorder took the prefill, how decode pass 1 ended, and the
 * bundle's files.
 */
async function breakDecode(
  violation: string,
  recorder: 'c' | 'js',
  header: ReturnType<typeof captureHeader> | null,
): Promise<{ prefillRecorder: string | undefined; message: string; alive: boolean; header: ReturnType<typeof captureHeader>; files: Map<string, Buffer> }> {
  process.env['TOY_BAD_RECORD'] = violation;
  process.env['TRACE_INSPECTOR_RECORDER'] = recorder;
  const dir = freshTempDir(`record-contract-${violation}-${recorder}`);
  tempDirs.push(dir);
  rmSync(dir, { recursive: true });
  const host = await EngineHost.start({ library: testlib('bad_record_engine'), isolation: 'thread' });
  try {
    const inputs = toyInputs([4, 9]);
    await host.open();
    await setInputs(host, inputs);
    const used = header ?? captureHeader(host, inputs);
    await host.beginCapture(dir, used);
    const prefill = await host.runPass('prefill');
    if (prefill.status !== 'ok') throw new Error(`prefill failed: ${JSON.stringify(prefill)}`);
    const decode = await host.runPass('decode');
    if (decode.status !== 'engine_error') throw new Error(`decode pass 1 ended ${decode.status}, not engine_error`);
    const message = decode.message.replaceAll(dir, '<out>');
    const alive = host.alive;
    // The stopped pass was ended in the pool (its END_PASS entry, written by the recorder itself
    // through the C recorder) and sealed as failed: the capture finishes.
    await host.finishCapture({ status: 'engine_error', message: 'decode pass 1 broke the record contract', last_pass: 1, last_boundary: 'toy.embed' });
    return { prefillRecorder: prefill.capture?.recorder, message, alive, header: used, files: filesOf(dir) };
  } finally {
    await host.close();
  }
}

describe('a record that breaks the contract stops its pass, named', () => {
  it.each(VIOLATIONS)('%s', async (violation, expected) => {
    const viaC = await breakDecode(violation, 'c', null);
    const viaJs = await breakDecode(violation, 'js', viaC.header);
    expect(viaC.prefillRecorder).toBe('c');
    expect(viaJs.prefillRecorder).toBe('js');
    expect(viaC.message).toMatch(expected);
    // toy.mix is the pass's second record (the duplicate: its third, after the first toy.mix).
    const stoppedAt = violation === 'duplicate' ? 'record 2 (after toy.mix)' : 'record 1 (after toy.embed)';
    expect(viaC.message.startsWith(`the host stopped the pass at ${stoppedAt}: `)).toBe(true);
    expect(viaC.message).toBe(viaJs.message);
    expect(viaC.alive).toBe(true);
    // The same bundle, byte for byte: the failed pass ended the same way through either callback.
    expect([...viaC.files.keys()].sort()).toEqual([...viaJs.files.keys()].sort());
    for (const [name, bytes] of viaC.files) expect(bytes.equals(viaJs.files.get(name) as Buffer), name).toBe(true);
  });
});

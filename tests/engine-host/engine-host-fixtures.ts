// Shared by the engine-host tests: the engines, their inputs, a capture header, and an
// independent way to see what an engine emits (koffi in the test process, decoding each
// ti_record with koffi.decode of the struct: none of the host's own record-reading code).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import koffi, { type TypeObject } from 'koffi';
import { DTYPE_SIZE, dtypeFromAbi, elementCount, type DType } from '../../main/core/bundle/dtype.ts';
import type { NativeCaptureHeader } from '../../main/core/bundle/native-bundle-writer.ts';
import { type EngineDescription, isEmittedIn, type PassFacts, resolveShape } from '../../main/engine-host/engine-description.ts';
import type { EngineHost, HostTensor, PassResult } from '../../main/engine-host/engine-host.ts';
import { REFERENCE_ENGINE, REPO_ROOT, TESTLIB_DIR, WEIGHTS_FILE } from '../helpers/paths.ts';

export { REFERENCE_ENGINE, WEIGHTS_FILE };

export const testlib = (name: string): string => join(TESTLIB_DIR, `lib${name}.so`);

/** The engine host runs dist/ bundles: fail with the fix rather than with a spawn error. */
export function requireBuiltHost(): void {
  for (const script of ['engine-worker.js', 'engine-host-process.js', 'capture-writer.js']) {
    if (!existsSync(join(REPO_ROOT, 'dist', script))) throw new Error(`dist/${script} is missing: run \`node scripts/build.mjs\` first`);
  }
}

export interface NamedTensor extends HostTensor {
  name: string;
}

export const bytesOf = (view: ArrayBufferView): Uint8Array => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/** The toy engines' (engine/testlibs/toy_engine.h) only input. */
export function toyInputs(tokens: readonly number[] = [1, 2, 3]): NamedTensor[] {
  return [{ name: 'prompt_tokens', dtype: 'I32', shape: [tokens.length], data: Int32Array.from(tokens) }];
}

/**
 * A reference-engine case that runs both output modes: 2 text outputs (prefill + pass 1), then
 * audio frames (up to 3) from pass 2; two audio-in rows; sampling (not greedy) from seed 7.
 */
export const REFERENCE_PROMPT = [1, 12, 130, -1, -1, 131, 40, 41] as const;
export function referenceInputs(): NamedTensor[] {
  const rows = REFERENCE_PROMPT.filter((token) => token === -1).length;
  const audio = new Float32Array(rows * 64);
  for (let i = 0; i < audio.length; i++) audio[i] = Math.sin(i * 0.37) * 0.8;
  return [
    { name: 'prompt_tokens', dtype: 'I32', shape: [REFERENCE_PROMPT.length], data: Int32Array.from(REFERENCE_PROMPT) },
    { name: 'audio_in_embeds', dtype: 'F32', shape: [rows, 64], data: audio },
    { name: 'gen_config', dtype: 'I32', shape: [3], data: Int32Array.from([2, 3, 0]) },
    { name: 'sampler_temperature', dtype: 'F32', shape: [2], data: Float32Array.from([0.8, 0.9]) },
    { name: 'sampler_top_k', dtype: 'I32', shape: [2], data: Int32Array.from([20, 8]) },
    { name: 'seed', dtype: 'U64', shape: [1], data: BigUint64Array.from([7n]) },
  ];
}

export async function setInputs(host: EngineHost, inputs: readonly NamedTensor[]): Promise<void> {
  for (const input of inputs) await host.setInput(input.name, input);
}

/** A valid native capture header for a test run of `host`. */
export function captureHeader(host: EngineHost, inputs: readonly NamedTensor[], caseId = 'engine-host-test'): NativeCaptureHeader {
  const engine = host.description.engine;
  return {
    kind: 'native',
    case: { id: caseId, description: 'engine host test run' },
    provenance: {
      model: {
        name: 'test-model',
        checkpoint_revision: 'test',
        weights_file: 'none',
        weights_sha256: createHash('sha256').update('no weights').digest('hex'),
      },
      generator: { implementation: 'tests/engine-host', revision: '0000000', dirty: true, command: 'vitest' },
      runtime: {
        node: process.version,
        engine_name: engine.name,
        engine_version: engine.version,
        engine_build_id: engine.build_id,
        engine_library_sha256: host.librarySha256,
        engine_abi_version: host.abiVersion,
      },
      precision: 'native',
      created_at: new Date().toISOString(),
    },
    inputs: inputs.map((input) => ({ name: input.name, dtype: input.dtype, shape: [...input.shape], data: bytesOf(input.data).slice() })),
  };
}

/**
 * The boundaries the catalogue promises for a pass, with shapes resolved, in execution order.
 * `facts`: whether the session had pcm_in and whether this pass's audio frame was end-of-audio.
 */
export function expectedBoundaries(
  description: EngineDescription,
  pass: Extract<PassResult, { status: 'ok' }>,
  symbols: Readonly<Record<string, number>>,
  facts: PassFacts,
): { name: string; dtype: DType; shape: number[] }[] {
  return description.boundaries
    .filter((boundary) => isEmittedIn(boundary, pass.kind, pass.mode, facts))
    .map((boundary) => ({ name: boundary.name, dtype: boundary.dtype, shape: resolveShape(boundary.shape, symbols, boundary.name) }));
}

/**
 * The passes (by index) whose audio frame is not decoded: an EOA code (32) in any codebook (code 0:
 * end of audio; codebooks 1..7: refused by the detokenizer), seen through a direct run of the same
 * inputs: emit `audio_frame` depends on it.
 */
export function endOfAudioPasses(
  library: string,
  weights: string | null,
  inputs: readonly NamedTensor[],
  passes: readonly ('prefill' | 'decode')[],
): Set<number> {
  const eoa = new Set<number>();
  for (const record of runDirect(library, weights, inputs, passes)) {
    if (record.name !== 'depth.codes') continue;
    const view = new DataView(record.data.buffer, record.data.byteOffset, record.data.byteLength);
    for (let k = 0; k < record.data.byteLength / 4; k += 1) if (view.getInt32(4 * k, true) >= 32) eoa.add(record.pass);
  }
  return eoa;
}

// ---- an independent look at the records -----------------------------------------------------

export interface SeenRecord {
  pass: number;
  name: string;
  dtype: DType;
  shape: number[];
  strides: number[];
  /** Row-major bytes (gathered here when the engine's strides were not contiguous). */
  data: Uint8Array;
}

let directTypes: { record: TypeObject; callback: TypeObject } | undefined;

function types(): { record: TypeObject; callback: TypeObject } {
  directTypes ??= (() => {
    const record = koffi.struct('test_direct_ti_record', {
      pass_index: 'uint32_t',
      pass_kind: 'uint32_t',
      name: 'const char *',
      dtype: 'uint32_t',
      rank: 'uint32_t',
      shape: 'const int64_t *',
      strides: 'const int64_t *',
      data: 'const void *',
      byte_length: 'uint64_t',
    });
    const proto = koffi.proto('int test_direct_ti_record_fn(void *user, const test_direct_ti_record *record)');
    return { record, callback: koffi.pointer(proto) };
  })();
  return directTypes;
}

/** Element-by-element gather, written plainly (the host uses tensor-view's gatherStrided). */
function gatherPlain(raw: Uint8Array, size: number, shape: readonly number[], strides: readonly number[]): Uint8Array {
  const count = elementCount(shape);
  const out = new Uint8Array(count * size);
  const index = new Array<number>(shape.length).fill(0);
  for (let element = 0; element < count; element++) {
    let offset = 0;
    for (let axis = 0; axis < shape.length; axis++) offset += (index[axis] as number) * (strides[axis] as number);
    out.set(raw.subarray(offset * size, offset * size + size), element * size);
    for (let axis = shape.length - 1; axis >= 0; axis--) {
      index[axis] = (index[axis] as number) + 1;
      if ((index[axis] as number) < (shape[axis] as number)) break;
      index[axis] = 0;
    }
  }
  return out;
}

type Native = (...args: unknown[]) => unknown;

/**
 * Runs `passes` directly through koffi in this process (no worker, no host code) and returns
 * every record the engine emitted. Only for engines that do not crash.
 */
export function runDirect(library: string, weights: string | null, inputs: readonly NamedTensor[], passes: readonly ('prefill' | 'decode')[]): SeenRecord[] {
  const { record, callback } = types();
  const lib = koffi.load(library);
  const fn = (prototype: string): Native => lib.func(prototype) as Native;
  const open = fn('int ti_open(const char *config, const char *weights, _Out_ void **out, char *err, size_t cap)');
  const setInput = fn('int ti_set_input(void *s, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape, const void *data, uint64_t n)');
  const setCallback = lib.func('ti_set_record_callback', 'int', ['void *', callback, 'void *']) as Native;
  const prefill = fn('int ti_prefill(void *s)');
  const decode = fn('int ti_decode(void *s)');
  const close = fn('void ti_close(void *s)');
  const lastError = fn('const char *ti_last_error(void *s)');
  const out: unknown[] = [null];
  const err = Buffer.alloc(512);
  if (open('{}', weights, out, err, err.length) !== 0) throw new Error(`ti_open: ${err.toString('utf8').replace(/\0.*$/s, '')}`);
  const session = out[0];
  const seen: SeenRecord[] = [];
  try {
    for (const input of inputs) {
      const status = setInput(
        session,
        input.name,
        ['F32', 'F16', 'BF16', 'F64', 'I8', 'I16', 'I32', 'I64', 'U8', 'U16', 'U32', 'U64', 'BOOL', 'C64'].indexOf(input.dtype),
        input.shape.length,
        BigInt64Array.from(input.shape, BigInt),
        bytesOf(input.data),
        BigInt(input.data.byteLength),
      );
      if (status !== 0) throw new Error(`ti_set_input ${input.name}: ${String(lastError(session))}`);
    }
    const registered = koffi.register((_user: unknown, address: unknown) => {
      const r = koffi.decode(address, record) as {
        pass_index: number;
        name: string;
        dtype: number;
        rank: number;
        shape: unknown;
        strides: unknown;
        data: unknown;
        byte_length: number | bigint;
      };
      const dtype = dtypeFromAbi(r.dtype);
      if (dtype === undefined) throw new Error(`bad dtype ${r.dtype}`);
      const shape = r.rank === 0 ? [] : Array.from(koffi.decode(r.shape, 'int64_t', r.rank) as BigInt64Array, Number);
      const strides = r.rank === 0 ? [] : Array.from(koffi.decode(r.strides, 'int64_t', r.rank) as BigInt64Array, Number);
      const byteLength = Number(r.byte_length);
      const raw = byteLength === 0 ? new Uint8Array(0) : Uint8Array.from(koffi.decode(r.data, 'uint8_t', byteLength) as Uint8Array);
      const size = DTYPE_SIZE[dtype];
      const contiguous = strides.every((stride, axis) => shape[axis] === 1 || stride === shape.slice(axis + 1).reduce((a, b) => a * b, 1));
      const data = contiguous ? raw.slice(0, elementCount(shape) * size) : gatherPlain(raw, size, shape, strides);
      seen.push({ pass: r.pass_index, name: r.name, dtype, shape, strides, data });
      return 0;
    }, callback);
    try {
      if (setCallback(session, registered, null) !== 0) throw new Error('ti_set_record_callback failed');
      for (const kind of passes) {
        const status = kind === 'prefill' ? prefill(session) : decode(session);
        if (status !== 0) throw new Error(`ti_${kind}: ${String(lastError(session))}`);
      }
    } finally {
      koffi.unregister(registered);
    }
  } finally {
    close(session);
  }
  return seen;
}

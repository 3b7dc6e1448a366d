// The scale engine's catalogue and value rule (engine/testlibs/scale_engine.c), implemented here
// independently so the reference writer (scale-reference.ts) computes every value itself rather
// than copying the engine's output: a disagreement between the two is a FAIL the gate shows.
import type { DType } from '../../main/core/bundle/dtype.ts';

export const SCALE = {
  hidden: 2048,
  layers: 16,
  /** LFM2 1.2B: attention at these layers, double-gated short conv elsewhere (10 + 6). */
  attentionLayers: [2, 5, 8, 10, 12, 14],
  queryHeads: 32,
  kvHeads: 8,
  headDim: 64,
  vocab: 65_536,
  depthWidth: 1024,
  depthLayers: 6,
  codebooks: 8,
  codes: 2049,
  mels: 128,
  encoderWidth: 512,
  encoderBlocks: 17,
  detokWidth: 512,
  detokLayers: 8,
  detokPositions: 6,
  detokSpectrum: 1282,
  pcmPerFrame: 1920,
  textRun: 6,
  audioRun: 12,
} as const;

type Rows = 'T' | 'F' | 'R' | 'K' | { fixed: number };
type Emit = 'every_pass' | 'prefill_audio_in' | 'text_out' | 'audio_out';

export interface ScaleBoundary {
  readonly index: number;
  readonly name: string;
  readonly stage: string;
  readonly dtype: DType;
  readonly rows: Rows;
  readonly cols: readonly number[];
  readonly emit: Emit;
  readonly kvCache: boolean;
}

function buildCatalogue(): ScaleBoundary[] {
  const list: ScaleBoundary[] = [];
  const add = (name: string, stage: string, dtype: DType, rows: Rows, cols: number[], emit: Emit, kvCache = false): void => {
    list.push({ index: list.length, name, stage, dtype, rows, cols, emit, kvCache });
  };
  const S = SCALE;
  add('frontend.features', 'frontend', 'BF16', 'F', [S.mels], 'prefill_audio_in');
  add('encoder.subsampling', 'encoder', 'F32', 'R', [S.encoderWidth], 'prefill_audio_in');
  for (let i = 0; i < S.encoderBlocks; i++) add(`encoder.b${i}.out`, 'encoder', 'F32', 'R', [S.encoderWidth], 'prefill_audio_in');
  add('adapter.out', 'adapter', 'F32', 'R', [S.hidden], 'prefill_audio_in');
  add('backbone.embed', 'backbone', 'F32', 'T', [S.hidden], 'every_pass');
  for (let l = 0; l < S.layers; l++) {
    if ((S.attentionLayers as readonly number[]).includes(l)) {
      add(`backbone.l${l}.k_append`, 'backbone', 'F32', 'T', [S.kvHeads, S.headDim], 'every_pass');
      add(`backbone.l${l}.v_append`, 'backbone', 'F32', 'T', [S.kvHeads, S.headDim], 'every_pass');
      add(`backbone.l${l}.kv_len`, 'backbone', 'I32', { fixed: 0 }, [1], 'every_pass');
      add(`backbone.l${l}.k_cache`, 'backbone', 'F32', 'K', [S.kvHeads, S.headDim], 'every_pass', true);
      add(`backbone.l${l}.v_cache`, 'backbone', 'F32', 'K', [S.kvHeads, S.headDim], 'every_pass', true);
    } else {
      add(`backbone.l${l}.conv_carry`, 'backbone', 'F32', { fixed: 2 }, [S.hidden], 'every_pass');
    }
    add(`backbone.l${l}.mixer_out`, 'backbone', 'F32', 'T', [S.hidden], 'every_pass');
    add(`backbone.l${l}.out`, 'backbone', 'F32', 'T', [S.hidden], 'every_pass');
  }
  add('backbone.final_norm', 'backbone', 'F32', 'T', [S.hidden], 'every_pass');
  add('backbone.logits', 'backbone', 'F32', { fixed: 0 }, [S.vocab], 'every_pass');
  add('sampler.text.token', 'sampler', 'I32', { fixed: 0 }, [1], 'text_out');
  add('depth.in', 'depthformer', 'F32', { fixed: S.codebooks }, [S.depthWidth], 'audio_out');
  for (let c = 0; c < S.codebooks; c++) {
    add(`depth.cb${c}.in`, 'depthformer', 'F32', { fixed: 0 }, [S.depthWidth], 'audio_out');
    for (let l = 0; l < S.depthLayers; l++) add(`depth.cb${c}.l${l}.out`, 'depthformer', 'F32', { fixed: 0 }, [S.depthWidth], 'audio_out');
    add(`depth.cb${c}.logits`, 'depthformer', 'F32', { fixed: 0 }, [S.codes], 'audio_out');
    add(`depth.cb${c}.token`, 'sampler', 'I32', { fixed: 0 }, [1], 'audio_out');
  }
  add('detok.embed', 'detokenizer', 'F32', { fixed: S.detokPositions }, [S.detokWidth], 'audio_out');
  for (let l = 0; l < S.detokLayers; l++) add(`detok.l${l}.out`, 'detokenizer', 'F32', { fixed: S.detokPositions }, [S.detokWidth], 'audio_out');
  add('detok.spectrum', 'detokenizer', 'F32', { fixed: S.detokPositions }, [S.detokSpectrum], 'audio_out');
  add('detok.pcm', 'detokenizer', 'F32', { fixed: 0 }, [S.pcmPerFrame], 'audio_out');
  return list;
}

export const SCALE_CATALOGUE: readonly ScaleBoundary[] = buildCatalogue();

export interface ScaleRunSpec {
  /** prompt_tokens: their FNV-1a hash seeds the values, their count is part of T. */
  readonly prompt: readonly number[];
  /** Samples of pcm_in (24 kHz); 0: no audio input. */
  readonly pcmSamples: number;
  /** Passes in all: the prefill and passes - 1 decodes. */
  readonly passes: number;
  /** Option scale.kv_cache. */
  readonly kvCache: boolean;
}

export function promptSeed(prompt: readonly number[]): number {
  let seed = 2166136261;
  for (const token of prompt) seed = Math.imul((seed ^ token) >>> 0, 16777619) >>> 0;
  return seed;
}

export const frontendFrames = (pcmSamples: number): number => (pcmSamples === 0 ? 0 : 1 + Math.floor(Math.floor((2 * pcmSamples + 2) / 3) / 160));

export interface ScaleRecord {
  readonly boundary: ScaleBoundary;
  readonly shape: readonly number[];
  /** Row-stream position of the first row. */
  readonly firstPos: number;
  readonly rows: number;
  readonly width: number;
  readonly byteLength: number;
  /** backbone.lN.kv_len: element 0 is the KV length, not a hash. */
  readonly kvLen: number | null;
}

export interface ScalePass {
  readonly index: number;
  readonly kind: 'prefill' | 'decode';
  readonly mode: 'text' | 'audio';
  readonly records: readonly ScaleRecord[];
}

/** Every pass of a run and the records it emits, in emission order (no values yet). */
export function scalePasses(spec: ScaleRunSpec): ScalePass[] {
  const passes: ScalePass[] = [];
  let cursor = 0;
  for (let pass = 0; pass < spec.passes; pass++) {
    const prefill = pass === 0;
    const audio = !prefill && (pass - 1) % (SCALE.textRun + SCALE.audioRun) >= SCALE.textRun;
    const frames = prefill ? frontendFrames(spec.pcmSamples) : 0;
    const audioRows = Math.ceil(frames / 8);
    const t = prefill ? spec.prompt.length + audioRows : 1;
    const kv = cursor + t;
    const records: ScaleRecord[] = [];
    for (const boundary of SCALE_CATALOGUE) {
      if (boundary.emit === 'prefill_audio_in' && frames === 0) continue;
      if (boundary.emit === 'text_out' && audio) continue;
      if (boundary.emit === 'audio_out' && !audio) continue;
      if (boundary.kvCache && !spec.kvCache) continue;
      let rows = 1;
      let firstPos = pass;
      let leading: number[] = [];
      const r = boundary.rows;
      if (r === 'T') [rows, firstPos, leading] = [t, cursor, [t]];
      else if (r === 'F') [rows, firstPos, leading] = [frames, 0, [frames]];
      else if (r === 'R') [rows, firstPos, leading] = [audioRows, 0, [audioRows]];
      else if (r === 'K') [rows, firstPos, leading] = [kv, 0, [kv]];
      else if (r.fixed > 0) [rows, leading] = [r.fixed, [r.fixed]];
      const width = boundary.cols.reduce((a, b) => a * b, 1);
      const element = boundary.dtype === 'BF16' ? 2 : 4;
      records.push({
        boundary,
        shape: [...leading, ...boundary.cols],
        firstPos,
        rows,
        width,
        byteLength: rows * width * element,
        kvLen: boundary.name.endsWith('.kv_len') ? kv : null,
      });
    }
    passes.push({ index: pass, kind: prefill ? 'prefill' : 'decode', mode: audio ? 'audio' : 'text', records });
    cursor = kv;
  }
  return passes;
}

function rowSeed(seed: number, stream: number, pos: number): number {
  let h = (seed ^ Math.imul(stream, 0x9e3779b9) ^ Math.imul(pos, 0x85ebca6b)) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x7feb352d) >>> 0;
  h = (h ^ (h >>> 15)) >>> 0;
  h = Math.imul(h, 0x846ca68b) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h === 0 ? 1 : h;
}

/**
 * Fills `out` (at least record.byteLength bytes, 4-byte aligned) with the record's values. A
 * KV cache's stream is its append's (three catalogue entries before it), so the cache is the
 * concatenation of the appends.
 */
export function fillRecord(out: Uint8Array, record: ScaleRecord, seed: number): void {
  const stream = record.boundary.kvCache ? record.boundary.index - 3 : record.boundary.index;
  const { rows, width } = record;
  const dtype = record.boundary.dtype;
  const f32 = new Float32Array(out.buffer, out.byteOffset, dtype === 'F32' ? rows * width : 0);
  const i32 = new Int32Array(out.buffer, out.byteOffset, dtype === 'I32' ? rows * width : 0);
  const u16 = new Uint16Array(out.buffer, out.byteOffset, dtype === 'BF16' ? rows * width : 0);
  for (let r = 0; r < rows; r++) {
    let h = rowSeed(seed, stream, record.firstPos + r);
    const base = r * width;
    for (let j = 0; j < width; j++) {
      h ^= h << 13;
      h ^= h >>> 17;
      h ^= h << 5;
      h >>>= 0;
      if (dtype === 'F32') f32[base + j] = (h >>> 8) * (1 / 16777216);
      else if (dtype === 'I32') i32[base + j] = h % 65536;
      else u16[base + j] = 0x3f80 | ((h >>> 9) & 0x7f);
    }
  }
  if (record.kvLen !== null) i32[0] = record.kvLen;
}

/** Total bytes of a run's records (the size of one bundle's tensor data). */
export function scaleRunBytes(spec: ScaleRunSpec): number {
  return scalePasses(spec).reduce((sum, pass) => sum + pass.records.reduce((s, r) => s + r.byteLength, 0), 0);
}

// Compares one boundary of one pass between a native bundle and a reference (or oracle) bundle
// under the reference's contract (compare-kernels.ts does the element work). Structure first
// (missing, dtype, shape), then the values streamed in aligned windows (bounded memory for
// multi-GB tensors, every chunk digest-verified by the reader before a result is returned), then
// two bounded second looks when the values failed: a layout check (is native the reference with
// its axes permuted?) and, for sampler orders, a tie analysis.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, elementCount, isFloatDType, type DType } from '../bundle/dtype.ts';
import { contiguousStrides } from '../bundle/layout.ts';
import { ContractSchema, type BoundaryEntry, type Contract, type ValidRegion } from '../bundle/manifest-schema.ts';
import {
  BLOCK_BYTES,
  C_NONE,
  C_TIE_ORDER,
  C_VALUE,
  compareValues,
  comparePadding,
  halfTable,
  KernelState,
  KernelWorkspace,
  skipPadding,
  ulp64,
  unitBytes,
  unitsPerElement,
  type KernelMode,
} from './compare-kernels.ts';
import { compareAudio } from './compare-audio.ts';
import type { BoundaryComparison, MismatchClass, OracleError, SideCensus, StructuralProblem, TieAnalysis } from './comparison-types.ts';

export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
/**
 * Largest single read asked of a bundle. The reader hands every chunk over as a fresh array; at
 * 1 MiB the garbage is collected promptly (8 MiB reads left ~100 MiB of dead chunks waiting for
 * a GC, several hundred under load), and the windows still fill in whole.
 */
export const MAX_READ_BYTES = 1024 * 1024;
/** Tensors larger than this (bytes per side) skip the layout check and the tie analysis. */
export const DEFAULT_SECOND_LOOK_LIMIT = 64 * 1024 * 1024;

export interface CompareSides {
  readonly native: TraceBundle;
  readonly reference: TraceBundle;
  /** The fp64 oracle, for the three-way errors and `oracle_rel`. */
  readonly oracle?: TraceBundle | null;
}

export interface CompareOptions {
  /**
   * Bytes per side compared at a time, the window (rounded down to whole 8 KiB blocks, at least
   * one; default 8 MiB), read in aligned pieces of at most MAX_READ_BYTES. Memory per comparison
   * is about three windows.
   */
  readonly chunkBytes?: number;
  /** Overrides the reference entry's contract (validated). */
  readonly contract?: Contract;
  /** 'js' forces the pure JavaScript kernels (tests, benchmarks); default 'auto'. */
  readonly kernels?: KernelMode;
  /** Bytes per side above which the layout check and tie analysis are skipped. Default 64 MiB. */
  readonly secondLookLimitBytes?: number;
}

const CENSUS_ZERO: SideCensus = { nan: 0, posInf: 0, negInf: 0, negZero: 0, subnormal: 0, finite: 0 };

function emptyClasses(): Record<MismatchClass, number> {
  return { value: 0, nan_vs_number: 0, nan_payload: 0, inf_sign: 0, signed_zero: 0, tie_order: 0, padding: 0 };
}

/** A result with no element statistics (structural problem or gap). */
function blankResult(pass: number, entry: BoundaryEntry, contract: Contract): BoundaryComparison {
  return {
    pass,
    boundary: entry.name,
    stage: entry.stage,
    dtype: entry.dtype,
    shape: [...entry.shape],
    contract,
    structural: null,
    elements: elementCount(entry.shape),
    mismatches: 0,
    mismatchShare: 0,
    classes: emptyClasses(),
    census: { native: { ...CENSUS_ZERO }, reference: { ...CENSUS_ZERO } },
    firstMismatch: null,
    worst: null,
    maxAbs: 0,
    maxRel: 0,
    maxUlp: 0,
    rmse: 0,
    required: { abs: 0, rel: 0, ulp: 0 },
    oracle: null,
    ties: null,
    passed: false,
    gap: null,
    outcome: 'fail',
    compared: 0,
    padded: 0,
    maxAbsExact: null,
    oracleRel: null,
    audio: null,
    notes: [],
  };
}

function structural(result: BoundaryComparison, problem: StructuralProblem, detail: string): BoundaryComparison {
  return { ...result, structural: { problem, detail }, passed: false, outcome: 'fail' };
}

function gapResult(result: BoundaryComparison, gap: string): BoundaryComparison {
  return { ...result, gap, passed: false, outcome: 'gap' };
}

/** A contract for results that have none to report (the reference lacks the boundary). */
function placeholderContract(reason: string): Contract {
  return { kind: 'bit_exact', nan_policy: 'positions', signed_zero: 'must_match', reason };
}

const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((extent, i) => extent === b[i]);
const shapeText = (shape: readonly number[]): string => `[${shape.join(', ')}]`;

// ---- streaming -----------------------------------------------------------------------------------

/**
 * Copies a chunked byte stream into fixed windows, whatever the producer's chunk sizes, with one
 * chunk read ahead (so the next read runs while the current window is compared).
 */
export class ChunkStream {
  private chunk: Uint8Array | null = null;
  private offset = 0;
  private pending: Promise<IteratorResult<Uint8Array, void>> | null;
  private ended = false;

  constructor(private readonly iterator: AsyncGenerator<Uint8Array, void, undefined>) {
    this.pending = this.ahead();
  }

  private ahead(): Promise<IteratorResult<Uint8Array, void>> {
    const next = this.iterator.next();
    next.catch(() => undefined); // awaited later; never an unhandled rejection
    return next;
  }

  /** Fills `dest` completely; returns the bytes copied (fewer only when the stream ended). */
  async fill(dest: Uint8Array): Promise<number> {
    let filled = 0;
    while (filled < dest.byteLength) {
      if (this.chunk === null || this.offset >= this.chunk.byteLength) {
        if (this.ended || this.pending === null) break;
        const result = await this.pending;
        if (result.done === true) {
          this.ended = true;
          this.pending = null;
          break;
        }
        this.chunk = result.value;
        this.offset = 0;
        this.pending = this.ahead();
      }
      const take = Math.min(dest.byteLength - filled, this.chunk.byteLength - this.offset);
      dest.set(this.chunk.subarray(this.offset, this.offset + take), filled);
      this.offset += take;
      filled += take;
    }
    return filled;
  }

  /** Runs the stream to its end (the reader verifies the tensor's sha256 there); false if bytes were left. */
  async finish(): Promise<boolean> {
    if (this.chunk !== null && this.offset < this.chunk.byteLength) return false;
    while (!this.ended && this.pending !== null) {
      const result = await this.pending;
      if (result.done === true) {
        this.ended = true;
        this.pending = null;
        break;
      }
      if (result.value.byteLength > 0) return false;
      this.pending = this.ahead();
    }
    return true;
  }

  async abort(): Promise<void> {
    try {
      await this.iterator.return(undefined);
    } catch {
      // the comparison already failed; the first error is the one reported
    }
  }
}

// ---- oracle errors ---------------------------------------------------------------------------------

const DECODE_UNITS = 65536;

/** Values of units [from, from + count) of a window, as doubles (C64: components). */
export function decodeUnits(dtype: DType, bytes: Uint8Array, from: number, count: number, out: Float64Array): void {
  const { buffer, byteOffset } = bytes;
  switch (dtype) {
    case 'F32':
    case 'C64': {
      const view = new Float32Array(buffer, byteOffset + from * 4, count);
      for (let k = 0; k < count; k++) out[k] = view[k] as number;
      return;
    }
    case 'F64':
      out.set(new Float64Array(buffer, byteOffset + from * 8, count));
      return;
    case 'BF16':
    case 'F16': {
      const table = halfTable(dtype === 'BF16' ? 'bf16' : 'f16');
      const view = new Uint16Array(buffer, byteOffset + from * 2, count);
      for (let k = 0; k < count; k++) out[k] = table[view[k] as number] as number;
      return;
    }
    case 'I64':
    case 'U64': {
      const view = dtype === 'I64' ? new BigInt64Array(buffer, byteOffset + from * 8, count) : new BigUint64Array(buffer, byteOffset + from * 8, count);
      for (let k = 0; k < count; k++) out[k] = Number(view[k] as bigint);
      return;
    }
    case 'I8':
      out.set(new Int8Array(buffer, byteOffset + from, count));
      return;
    case 'I16':
      out.set(new Int16Array(buffer, byteOffset + from * 2, count));
      return;
    case 'U16':
      out.set(new Uint16Array(buffer, byteOffset + from * 2, count));
      return;
    case 'I32':
      out.set(new Int32Array(buffer, byteOffset + from * 4, count));
      return;
    case 'U32':
      out.set(new Uint32Array(buffer, byteOffset + from * 4, count));
      return;
    default:
      out.set(new Uint8Array(buffer, byteOffset + from, count));
  }
}

class OracleAccumulator {
  nativeSum = 0;
  nativeCount = 0;
  nativeMax = 0;
  oracleSqOnNative = 0;
  referenceSum = 0;
  referenceCount = 0;
  referenceMax = 0;
  private readonly n = new Float64Array(DECODE_UNITS);
  private readonly r = new Float64Array(DECODE_UNITS);
  private readonly o = new Float64Array(DECODE_UNITS);

  constructor(
    private readonly nativeDtype: DType,
    private readonly oracleDtype: DType,
  ) {}

  /** Units [from, to) of the three windows (all in the same unit indexing). */
  add(native: Uint8Array, reference: Uint8Array, oracle: Uint8Array, from: number, to: number): void {
    for (let at = from; at < to; at += DECODE_UNITS) {
      const count = Math.min(DECODE_UNITS, to - at);
      decodeUnits(this.nativeDtype, native, at, count, this.n);
      decodeUnits(this.nativeDtype, reference, at, count, this.r);
      decodeUnits(this.oracleDtype, oracle, at, count, this.o);
      const n = this.n;
      const r = this.r;
      const o = this.o;
      for (let k = 0; k < count; k++) {
        const ov = o[k] as number;
        if (ov - ov !== 0) continue; // oracle not finite
        const nv = n[k] as number;
        if (nv - nv === 0) {
          const d = Math.abs(nv - ov);
          this.nativeSum += d * d;
          this.nativeCount += 1;
          this.oracleSqOnNative += ov * ov;
          if (d > this.nativeMax) this.nativeMax = d;
        }
        const rv = r[k] as number;
        if (rv - rv === 0) {
          const d = Math.abs(rv - ov);
          this.referenceSum += d * d;
          this.referenceCount += 1;
          if (d > this.referenceMax) this.referenceMax = d;
        }
      }
    }
  }

  errors(): { native: OracleError; reference: OracleError } {
    const rmse = (sum: number, count: number): number => (count === 0 ? 0 : Math.sqrt(sum / count));
    return {
      native: { maxAbs: this.nativeMax, rmse: rmse(this.nativeSum, this.nativeCount) },
      reference: { maxAbs: this.referenceMax, rmse: rmse(this.referenceSum, this.referenceCount) },
    };
  }

  oracleRms(): number {
    return this.nativeCount === 0 ? 0 : Math.sqrt(this.oracleSqOnNative / this.nativeCount);
  }
}

const REAL_FLOATS: ReadonlySet<DType> = new Set(['F32', 'F16', 'BF16', 'F64']);

/** Why an oracle entry cannot serve this boundary, or null when it can. */
function oracleProblem(entry: BoundaryEntry | undefined, dtype: DType, shape: readonly number[]): string | null {
  if (entry === undefined) return 'the oracle bundle has no such boundary';
  if (!sameShape(entry.shape, shape)) return `the oracle's shape ${shapeText(entry.shape)} differs from ${shapeText(shape)}`;
  if (entry.dtype !== dtype && !(REAL_FLOATS.has(entry.dtype) && REAL_FLOATS.has(dtype))) return `the oracle's dtype ${entry.dtype} cannot stand for ${dtype}`;
  return null;
}

// ---- valid region --------------------------------------------------------------------------------

interface Region {
  /** Units per outer row (extent of the axis times the inner units), and the valid units at its start. */
  readonly period: number;
  readonly validSpan: number;
  readonly padding: 'zero' | 'any';
}

function regionOf(valid: ValidRegion | null, shape: readonly number[], units: number): Region | null {
  if (valid === null) return null;
  let inner = units;
  for (let axis = valid.axis + 1; axis < shape.length; axis++) inner *= shape[axis] as number;
  const extent = shape[valid.axis] ?? 0;
  return { period: extent * inner, validSpan: Math.min(valid.length, extent) * inner, padding: valid.padding };
}

// ---- the comparison ----------------------------------------------------------------------------------

/**
 * Compares boundary `name` of pass `pass`: native against reference under the reference entry's
 * contract (or options.contract). Errors reading either side (digest, I/O) are thrown as the
 * reader's BundleError: unreadable evidence, not a result.
 */
export async function compareBoundary(sides: CompareSides, pass: number, name: string, options: CompareOptions = {}): Promise<BoundaryComparison> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0) throw new RangeError(`chunkBytes must be a positive integer, got ${String(chunkBytes)}`);
  const override = options.contract === undefined ? null : ContractSchema.parse(options.contract);
  const referenceEntry = sides.reference.boundary(pass, name);
  const nativeEntry = sides.native.boundary(pass, name);

  if (referenceEntry === undefined) {
    if (nativeEntry === undefined) throw new RangeError(`neither bundle has boundary "${name}" in pass ${pass}`);
    const contract = override ?? placeholderContract('no contract: the reference bundle lacks this boundary');
    return gapResult(blankResult(pass, nativeEntry, contract), `the reference bundle (${sides.reference.dir}) has no boundary "${name}" in pass ${pass}`);
  }
  const declared = override ?? referenceEntry.contract;
  if (declared === null) {
    return gapResult(
      blankResult(pass, referenceEntry, placeholderContract('no contract declared')),
      `the reference entry declares no contract (a ${sides.reference.manifest.kind} bundle): supply one (--contracts FILE with a rule that matches it, or --contract bit_exact; docs/compare.md)`,
    );
  }
  const contract: Contract = declared;
  const blank = blankResult(pass, referenceEntry, contract);
  if (nativeEntry === undefined) return structural(blank, 'missing', `the native bundle has no boundary "${name}" in pass ${pass}`);
  if (nativeEntry.dtype !== referenceEntry.dtype) {
    return structural(blank, 'dtype', `native ${nativeEntry.dtype} vs reference ${referenceEntry.dtype}`);
  }
  if (!sameShape(nativeEntry.shape, referenceEntry.shape)) {
    return structural(blank, 'shape', `native ${shapeText(nativeEntry.shape)} vs reference ${shapeText(referenceEntry.shape)}`);
  }

  const dtype = referenceEntry.dtype;
  const shape = referenceEntry.shape;
  const notes: string[] = [];
  if (nativeEntry.layout !== 'row-major') {
    notes.push(`the engine emitted strides [${nativeEntry.strides.join(', ')}] (gathered to row-major by the capture; informative)`);
  }

  // The oracle, when one is given and fits.
  let oracleEntry: BoundaryEntry | undefined;
  let gap: string | null = null;
  if (sides.oracle !== undefined && sides.oracle !== null) {
    const candidate = sides.oracle.boundary(pass, name);
    const problem = oracleProblem(candidate, dtype, shape);
    if (problem === null) oracleEntry = candidate;
    else notes.push(`no oracle errors: ${problem}`);
  }
  const oracleBound = contract.kind === 'faithful' ? contract.oracle_rel : null;
  if (oracleBound !== null && oracleEntry === undefined) {
    gap =
      sides.oracle === undefined || sides.oracle === null
        ? `the contract bounds the error against the fp64 oracle (oracle_rel ${oracleBound}) and no oracle bundle was given`
        : `the contract bounds the error against the fp64 oracle (oracle_rel ${oracleBound}) and ${oracleProblem(sides.oracle.boundary(pass, name), dtype, shape) ?? 'the oracle is unusable'}`;
  }

  // Stream the values.
  const units = unitsPerElement(dtype);
  const bytesPerUnit = unitBytes(dtype);
  const totalUnits = elementCount(shape) * units;
  const requested = Math.max(BLOCK_BYTES, Math.floor(chunkBytes / BLOCK_BYTES) * BLOCK_BYTES);
  const windowBytes = Math.min(requested, Math.max(BLOCK_BYTES, Math.ceil((totalUnits * bytesPerUnit) / BLOCK_BYTES) * BLOCK_BYTES));
  const windowUnits = windowBytes / bytesPerUnit;
  const workspace = acquireWorkspace(windowBytes, options.kernels ?? 'auto');
  try {
    const state = new KernelState(workspace, { dtype, shape, contract });
    const region = regionOf(referenceEntry.valid, shape, units);
    const oracleDtype = oracleEntry?.dtype ?? dtype;
    const oracleUnitBytes = oracleDtype === 'C64' ? 4 : DTYPE_SIZE[oracleDtype];
    const oracleWindow = oracleEntry === undefined ? null : new Uint8Array(windowUnits * oracleUnitBytes);
    const oracle = oracleEntry === undefined ? null : new OracleAccumulator(dtype, oracleDtype);

    const readBytes = Math.min(windowBytes, MAX_READ_BYTES);
    const streams: ChunkStream[] = [
      new ChunkStream(sides.native.readBoundaryChunks(pass, name, readBytes)),
      new ChunkStream(sides.reference.readBoundaryChunks(pass, name, readBytes)),
    ];
    if (oracleEntry !== undefined && sides.oracle !== undefined && sides.oracle !== null) {
      streams.push(new ChunkStream(sides.oracle.readBoundaryChunks(pass, name, Math.min(windowUnits * oracleUnitBytes, MAX_READ_BYTES))));
    }
    try {
      for (let base = 0; base < totalUnits; base += windowUnits) {
        const count = Math.min(windowUnits, totalUnits - base);
        const native = workspace.native.subarray(0, count * bytesPerUnit);
        const reference = workspace.reference.subarray(0, count * bytesPerUnit);
        const targets = [native, reference];
        if (oracleWindow !== null) targets.push(oracleWindow.subarray(0, count * oracleUnitBytes));
        const got = await Promise.all(streams.map((stream, i) => stream.fill(targets[i] as Uint8Array)));
        got.forEach((bytes, i) => {
          if (bytes !== (targets[i] as Uint8Array).byteLength) throw new Error(`internal: boundary "${name}" ended after ${base * bytesPerUnit + bytes} bytes`);
        });
        forEachSegment(region, base, count, (from, to, valid) => {
          if (valid) {
            compareValues(state, native, reference, from, to, base);
            if (oracle !== null && oracleWindow !== null) oracle.add(native, reference, oracleWindow, from, to);
          } else if (region?.padding === 'zero') comparePadding(state, native, reference, from, to, base);
          else skipPadding(state, from, to);
        });
      }
      const complete = await Promise.all(streams.map((stream) => stream.finish()));
      if (complete.some((done) => !done)) throw new Error(`internal: boundary "${name}" holds more bytes than its shape`);
    } catch (error) {
      await Promise.all(streams.map((stream) => stream.abort()));
      throw error;
    }

    let result = resultOf(blank, state, notes);
    if (oracle !== null) {
      result.oracle = oracle.errors();
      if (oracleBound !== null) {
        const oracleRms = oracle.oracleRms();
        const nativeRmse = result.oracle.native.rmse;
        result.oracleRel = { bound: oracleBound, nativeRmse, oracleRms, passed: nativeRmse <= oracleBound * oracleRms };
      }
    }

    const secondLookLimit = options.secondLookLimitBytes ?? DEFAULT_SECOND_LOOK_LIMIT;
    if (state.mismatches > 0 && shape.length >= 2) {
      const layout = await layoutCheck(sides, pass, name, state, secondLookLimit);
      if (layout.note !== null) result.notes.push(layout.note);
      if (layout.permutation !== null) {
        result = {
          ...blankResult(pass, referenceEntry, contract),
          census: result.census,
          compared: result.compared,
          padded: result.padded,
          oracle: result.oracle,
          oracleRel: result.oracleRel,
          notes: result.notes,
        };
        result = structural(result, 'layout', layout.detail);
      }
    }
    if (result.structural === null) await tieAnalysis(sides, pass, name, state, result, secondLookLimit);
    if (result.structural === null && contract.kind === 'faithful' && contract.audio !== undefined) {
      result.audio = await compareAudio(sides, pass, name, referenceEntry, contract.audio);
      if (result.audio === null) result.notes.push(`audio bounds not judged: "${name}" is not one-dimensional F32 PCM on both sides`);
    }
    return finish(result, gap);
  } finally {
    releaseWorkspace(workspace);
  }
}

/** Calls `visit` for the runs of units [base, base + count) inside (valid) and past (padding) the valid region, window-relative. */
function forEachSegment(region: Region | null, base: number, count: number, visit: (from: number, to: number, valid: boolean) => void): void {
  if (region === null) return visit(0, count, true);
  if (region.period === 0) return;
  for (let pos = 0; pos < count; ) {
    const absolute = base + pos;
    const offset = absolute % region.period;
    const rowStart = absolute - offset;
    if (offset < region.validSpan) {
      const end = Math.min(count, rowStart + region.validSpan - base);
      visit(pos, end, true);
      pos = end;
    } else {
      const end = Math.min(count, rowStart + region.period - base);
      visit(pos, end, false);
      pos = end;
    }
  }
}

function resultOf(blank: BoundaryComparison, st: KernelState, notes: string[]): BoundaryComparison {
  const pairs = st.pairs;
  const maxUlp = st.maxUlpSeen;
  const integer = !isFloatDType(st.dtype);
  return {
    ...blank,
    mismatches: st.mismatches,
    mismatchShare: blank.elements === 0 ? 0 : st.mismatches / blank.elements,
    classes: st.classes(),
    census: { native: st.census('native'), reference: st.census('reference') },
    firstMismatch: st.first,
    worst: st.worst,
    maxAbs: st.maxAbs,
    maxRel: st.maxRel,
    maxUlp,
    rmse: pairs === 0 ? 0 : Math.sqrt(st.sumSq / pairs),
    required: { abs: st.maxAbs, rel: st.requiredRel, ulp: maxUlp },
    compared: st.compared,
    padded: st.padded,
    maxAbsExact: integer ? (st.family === 'int64' ? st.intMaxAbs.toString() : String(st.maxAbs)) : null,
    notes,
  };
}

function finish(result: BoundaryComparison, gap: string | null): BoundaryComparison {
  const failed = result.structural !== null || result.mismatches > 0 || result.oracleRel?.passed === false || result.audio?.passed === false;
  const outcome = failed ? 'fail' : gap !== null ? 'gap' : 'pass';
  return { ...result, gap, outcome, passed: outcome === 'pass' };
}

// ---- workspaces -----------------------------------------------------------------------------------

const idleWorkspaces: KernelWorkspace[] = [];
const IDLE_LIMIT = 4;

function acquireWorkspace(windowBytes: number, mode: KernelMode): KernelWorkspace {
  const wantWasm = mode !== 'js';
  const at = idleWorkspaces.findIndex(
    (ws) => ws.windowBytes >= windowBytes && ws.windowBytes <= 4 * windowBytes && (ws.wasm !== null) === wantWasm,
  );
  if (at >= 0) return idleWorkspaces.splice(at, 1)[0] as KernelWorkspace;
  const created = KernelWorkspace.create(windowBytes, mode);
  // Without wasm support 'auto' yields a JS workspace: tag it as such for reuse.
  return created;
}

function releaseWorkspace(ws: KernelWorkspace): void {
  if (idleWorkspaces.length >= IDLE_LIMIT) idleWorkspaces.shift();
  idleWorkspaces.push(ws);
}

// ---- second looks: layout and ties -----------------------------------------------------------------

/** Typed views of a whole tensor, for random access in the layout check. */
interface UnitViews {
  readonly bytes: Uint8Array;
  readonly words: Int32Array | null;
  readonly floats: Float32Array | null;
  readonly halves: Uint16Array | null;
  readonly doubles: Float64Array | null;
}

function unitViews(dtype: DType, data: Uint8Array): UnitViews {
  const { buffer, byteOffset, byteLength } = data;
  const wide = dtype === 'F32' || dtype === 'C64' || dtype === 'F64';
  return {
    bytes: data,
    words: wide ? new Int32Array(buffer, byteOffset, byteLength >> 2) : null,
    floats: dtype === 'F32' || dtype === 'C64' ? new Float32Array(buffer, byteOffset, byteLength >> 2) : null,
    halves: dtype === 'BF16' || dtype === 'F16' ? new Uint16Array(buffer, byteOffset, byteLength >> 1) : null,
    doubles: dtype === 'F64' ? new Float64Array(buffer, byteOffset, byteLength >> 3) : null,
  };
}

/** Whether native unit i against reference unit k is inside the contract (no state touched). */
function unitPasses(st: KernelState, dtype: DType, n: UnitViews, r: UnitViews, i: number, k: number): boolean {
  let x: number;
  let y: number;
  let same: boolean;
  let ulp: number;
  switch (dtype) {
    case 'F32':
    case 'C64': {
      const wn = (n.words as Int32Array)[i] as number;
      const wr = (r.words as Int32Array)[k] as number;
      x = (n.floats as Float32Array)[i] as number;
      y = (r.floats as Float32Array)[k] as number;
      same = wn === wr;
      const kn = (wn ^ ((wn >> 31) >>> 1)) - (wn >> 31);
      const kr = (wr ^ ((wr >> 31) >>> 1)) - (wr >> 31);
      ulp = Math.abs(kn - kr);
      break;
    }
    case 'BF16':
    case 'F16': {
      const hn = (n.halves as Uint16Array)[i] as number;
      const hr = (r.halves as Uint16Array)[k] as number;
      const table = halfTable(dtype === 'BF16' ? 'bf16' : 'f16');
      x = table[hn] as number;
      y = table[hr] as number;
      same = hn === hr;
      const kn = hn & 0x8000 ? -(hn & 0x7fff) : hn;
      const kr = hr & 0x8000 ? -(hr & 0x7fff) : hr;
      ulp = Math.abs(kn - kr);
      break;
    }
    case 'F64': {
      const wn = n.words as Int32Array;
      const wr = r.words as Int32Array;
      x = (n.doubles as Float64Array)[i] as number;
      y = (r.doubles as Float64Array)[k] as number;
      same = wn[2 * i] === wr[2 * k] && wn[2 * i + 1] === wr[2 * k + 1];
      ulp = ulp64(wn[2 * i + 1] as number, wn[2 * i] as number, wr[2 * k + 1] as number, wr[2 * k] as number);
      break;
    }
    default: {
      const size = DTYPE_SIZE[dtype];
      for (let b = 0; b < size; b++) if (n.bytes[i * size + b] !== r.bytes[k * size + b]) return false;
      return true;
    }
  }
  if (same) return true;
  if (x - x !== 0 || y - y !== 0) return st.nonFiniteCode(x, y, same) === C_NONE;
  return st.passes(Math.abs(x - y), Math.abs(y), ulp);
}

/** Every permutation of 0..rank-1 except the identity (rank <= 4), or the last-two-axes swap. */
function candidatePermutations(rank: number): number[][] {
  if (rank > 4) {
    const swap = [...Array(rank).keys()];
    [swap[rank - 2], swap[rank - 1]] = [swap[rank - 1] as number, swap[rank - 2] as number];
    return [swap];
  }
  const out: number[][] = [];
  const build = (prefix: number[], rest: number[]): void => {
    if (rest.length === 0) {
      if (prefix.some((axis, i) => axis !== i)) out.push(prefix);
      return;
    }
    rest.forEach((axis, i) => build([...prefix, axis], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  build([], [...Array(rank).keys()]);
  return out;
}

/** Whether a permutation only moves axes of extent 1 (then it reads the data in identity order). */
function isTrivialPermutation(shape: readonly number[], permutation: readonly number[]): boolean {
  const moving = permutation.filter((axis) => (shape[axis] as number) !== 1);
  return moving.every((axis, i) => i === 0 || (moving[i - 1] as number) < axis);
}

interface LayoutVerdict {
  readonly permutation: number[] | null;
  readonly detail: string;
  readonly note: string | null;
}

async function layoutCheck(sides: CompareSides, pass: number, name: string, st: KernelState, limit: number): Promise<LayoutVerdict> {
  const { dtype, shape } = st;
  const bytes = elementCount(shape) * DTYPE_SIZE[dtype];
  if (bytes > limit) {
    return { permutation: null, detail: '', note: `layout check skipped: ${bytes} bytes per side exceed the ${limit}-byte limit for a second read` };
  }
  const [native, reference] = await Promise.all([sides.native.readBoundary(pass, name), sides.reference.readBoundary(pass, name)]);
  const n = unitViews(dtype, aligned(native.data));
  const r = unitViews(dtype, aligned(reference.data));
  const units = unitsPerElement(dtype);
  const strides = contiguousStrides(shape);
  const count = elementCount(shape);
  for (const permutation of candidatePermutations(shape.length)) {
    if (isTrivialPermutation(shape, permutation)) continue;
    const permuted = permutation.map((axis) => shape[axis] as number);
    const source = permutation.map((axis) => strides[axis] as number);
    const index = new Array<number>(shape.length).fill(0);
    let src = 0;
    let matches = true;
    for (let j = 0; j < count && matches; j++) {
      for (let u = 0; u < units; u++) {
        if (!unitPasses(st, dtype, n, r, j * units + u, src * units + u)) {
          matches = false;
          break;
        }
      }
      // advance the odometer over the permuted shape
      for (let axis = permuted.length - 1; axis >= 0; axis--) {
        index[axis] = (index[axis] as number) + 1;
        src += source[axis] as number;
        if ((index[axis] as number) < (permuted[axis] as number)) break;
        src -= (index[axis] as number) * (source[axis] as number);
        index[axis] = 0;
      }
    }
    if (matches) {
      return {
        permutation,
        detail:
          `native holds the reference with its axes permuted [${permutation.join(', ')}]: the reference's ` +
          `${shapeText(shape)} laid out as ${shapeText(permuted)} and read back as ${shapeText(shape)} (within the ${st.bitExact ? 'bit_exact' : 'faithful'} contract)`,
        note: null,
      };
    }
  }
  return { permutation: null, detail: '', note: null };
}

function aligned(data: Uint8Array): Uint8Array {
  return data.byteOffset % 8 === 0 ? data : data.slice();
}

async function readValues(bundle: TraceBundle, pass: number, name: string, limit: number): Promise<Float64Array | null> {
  const entry = bundle.boundary(pass, name);
  if (entry === undefined || entry.byte_length > limit) return null;
  const tensor = await bundle.readBoundary(pass, name);
  const count = elementCount(tensor.shape) * unitsPerElement(tensor.dtype);
  const out = new Float64Array(count);
  decodeUnits(tensor.dtype, aligned(tensor.data), 0, count, out);
  return out;
}

/**
 * For `<p>.order` and `<p>.threshold`: the reference threshold, the indices tied with it and
 * whether native ordered them alike. For a failing `<p>.order` whose every difference stays inside
 * groups of equal reference `<p>.scaled` values, the mismatches become 'tie_order'.
 */
async function tieAnalysis(sides: CompareSides, pass: number, name: string, st: KernelState, result: BoundaryComparison, limit: number): Promise<void> {
  const suffix = name.endsWith('.order') ? '.order' : name.endsWith('.threshold') ? '.threshold' : null;
  if (suffix === null) return;
  const prefix = name.slice(0, -suffix.length);
  const scaled = await readValues(sides.reference, pass, `${prefix}.scaled`, limit);
  if (scaled === null) {
    result.notes.push(`no tie analysis: the reference has no readable ${prefix}.scaled in pass ${pass}`);
    return;
  }
  const referenceOrder = await readValues(sides.reference, pass, `${prefix}.order`, limit);
  const nativeOrder = await readValues(sides.native, pass, `${prefix}.order`, limit);

  if (suffix === '.order' && st.mismatches > 0 && referenceOrder !== null && nativeOrder !== null && nativeOrder.length === referenceOrder.length) {
    const size = scaled.length;
    const seen = new Uint8Array(size);
    let permutation = nativeOrder.length === size;
    for (const index of nativeOrder) {
      if (!Number.isInteger(index) || index < 0 || index >= size || seen[index] === 1) {
        permutation = false;
        break;
      }
      seen[index] = 1;
    }
    const insideTies =
      permutation &&
      st.classCounts.every((count, code) => code === C_NONE || code === C_VALUE || count === 0) &&
      nativeOrder.every((index, j) => scaled[index] === scaled[referenceOrder[j] as number]);
    if (insideTies) {
      st.reclassify(C_VALUE, C_TIE_ORDER);
      result.classes = st.classes();
      result.firstMismatch = st.first;
      result.worst = st.worst;
    }
  }

  const threshold = await readValues(sides.reference, pass, `${prefix}.threshold`, limit);
  if (threshold === null || threshold.length < 1) {
    result.notes.push(`no tie analysis: the reference has no readable ${prefix}.threshold in pass ${pass}`);
    return;
  }
  const value = threshold[0] as number;
  const ordered = referenceOrder ?? Float64Array.from(scaled.keys());
  const group = Array.from(ordered).filter((index) => scaled[index] === value);
  const members = new Set(group);
  let orderAgrees = false;
  if (nativeOrder === null) result.notes.push(`tie order not judged: the native bundle has no readable ${prefix}.order in pass ${pass}`);
  else {
    const nativeGroup = Array.from(nativeOrder).filter((index) => members.has(index));
    orderAgrees = nativeGroup.length === group.length && nativeGroup.every((index, i) => index === group[i]);
  }
  const ties: TieAnalysis = { threshold: value, group, orderAgrees };
  result.ties = ties;
}

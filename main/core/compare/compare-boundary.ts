// Compares one boundary of one pass between a native bundle and a reference (or oracle) bundle
// under the reference's contract: the orchestration. Structure first (missing, dtype, shape), then
// the values streamed in aligned windows (chunk-stream.ts; bounded memory for multi-GB tensors,
// every chunk digest-verified by the reader before a result is returned) through the kernels
// (compare-kernels.ts) and the oracle errors (oracle-errors.ts), then two bounded second looks
// when the values failed (second-looks.ts): a layout check and, for sampler orders, a tie analysis.
import type { BoundaryWindows, TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, elementCount, isFloatDType } from '../bundle/dtype.ts';
import { ContractSchema, type BoundaryEntry, type Contract, type ValidRegion } from '../bundle/manifest-schema.ts';
import { ChunkStream, MAX_READ_BYTES } from './chunk-stream.ts';
import {
  BLOCK_BYTES,
  compareValues,
  comparePadding,
  KernelState,
  KernelWorkspace,
  skipPadding,
  unitBytes,
  unitsPerElement,
  type KernelMode,
} from './compare-kernels.ts';
import { compareAudio } from './compare-audio.ts';
import type { BoundaryComparison, MismatchClass, SideCensus, StructuralProblem } from './comparison-types.ts';
import { OracleAccumulator, oracleProblem } from './oracle-errors.ts';
import { layoutCheck, tieAnalysis } from './second-looks.ts';
import { sameShape, shapeText } from './shapes.ts';

export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
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
    const wanted: { side: TraceBundle; readBytes: number }[] = [
      { side: sides.native, readBytes },
      { side: sides.reference, readBytes },
    ];
    if (oracleEntry !== undefined && sides.oracle !== undefined && sides.oracle !== null) {
      wanted.push({ side: sides.oracle, readBytes: Math.min(windowUnits * oracleUnitBytes, MAX_READ_BYTES) });
    }
    const sources = await openSources(wanted, pass, name);
    try {
      for (let base = 0; base < totalUnits; base += windowUnits) {
        const count = Math.min(windowUnits, totalUnits - base);
        const native = workspace.native.subarray(0, count * bytesPerUnit);
        const reference = workspace.reference.subarray(0, count * bytesPerUnit);
        const targets = [native, reference];
        if (oracleWindow !== null) targets.push(oracleWindow.subarray(0, count * oracleUnitBytes));
        const offsets = [base * bytesPerUnit, base * bytesPerUnit, base * oracleUnitBytes];
        const got = await Promise.all(sources.map((source, i) => source.fill(offsets[i] as number, targets[i] as Uint8Array)));
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
      const complete = await Promise.all(sources.map((source) => source.finish()));
      if (complete.some((done) => !done)) throw new Error(`internal: boundary "${name}" holds more bytes than its shape`);
    } catch (error) {
      await Promise.all(sources.map((source) => source.abort()));
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

/** Where one side's bytes come from: its verified file straight into the windows, or a hashed stream. */
interface ValueSource {
  fill(offset: number, dest: Uint8Array): Promise<number>;
  /** True when the boundary held no more bytes than were read (and, for a stream, its digest matched). */
  finish(): Promise<boolean>;
  abort(): Promise<void>;
}

/**
 * The sides' value sources: when every side's file is verified and pinned (bundle-reader.ts
 * boundaryWindows), each window is read straight into the comparison's buffers, no array
 * allocated and nothing hashed again; otherwise every side streams in chunks, each hashed as read.
 */
async function openSources(wanted: readonly { side: TraceBundle; readBytes: number }[], pass: number, name: string): Promise<ValueSource[]> {
  const windows: BoundaryWindows[] = [];
  let direct = true;
  try {
    for (const { side } of wanted) {
      const opened = direct ? ((await side.boundaryWindows?.(pass, name)) ?? null) : null;
      if (opened === null) direct = false;
      else windows.push(opened);
    }
  } catch (error) {
    await Promise.all(windows.map((window) => window.abort()));
    throw error;
  }
  if (direct) {
    return windows.map((window) => ({
      fill: async (offset, dest) => {
        await window.read(offset, dest);
        return dest.byteLength;
      },
      finish: async () => {
        await window.finish();
        return true;
      },
      abort: () => window.abort(),
    }));
  }
  await Promise.all(windows.map((window) => window.abort()));
  return wanted.map(({ side, readBytes }) => {
    const stream = new ChunkStream(side.readBoundaryChunks(pass, name, readBytes));
    return { fill: (_offset, dest) => stream.fill(dest), finish: () => stream.finish(), abort: () => stream.abort() };
  });
}

/** Calls `visit` for the runs of units [base, base + count) inside (valid) and past (padding) the valid region, window-relative. */
function forEachSegment(region: Region | null, base: number, count: number, visit: (from: number, to: number, valid: boolean) => void): void {
  if (region === null) return visit(0, count, true);
  if (region.period === 0) return;
  for (let pos = 0; pos < count;) {
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
  const at = idleWorkspaces.findIndex((ws) => ws.windowBytes >= windowBytes && ws.windowBytes <= 4 * windowBytes && (ws.wasm !== null) === wantWasm);
  if (at >= 0) return idleWorkspaces.splice(at, 1)[0] as KernelWorkspace;
  const created = KernelWorkspace.create(windowBytes, mode);
  // Without wasm support 'auto' yields a JS workspace: tag it as such for reuse.
  return created;
}

function releaseWorkspace(ws: KernelWorkspace): void {
  if (idleWorkspaces.length >= IDLE_LIMIT) idleWorkspaces.shift();
  idleWorkspaces.push(ws);
}

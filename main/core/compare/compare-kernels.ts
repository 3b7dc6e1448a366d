// The comparator's hot loops, separate from the I/O (compare-boundary.ts, chunk-stream.ts). One function per
// dtype family works on typed-array windows and accumulates into a running KernelState: per-class
// mismatch counts, census, maxima, the RMSE sum, the first/worst witnesses and the exact
// `required` tolerances. F32 (and C64 components) and BF16 run a WebAssembly SIMD fast path
// (compare-kernels-wasm.ts) for both contracts, F16 for bit_exact; it commits the blocks it can
// prove clean and hands every other block to the JS functions below, which classify. F64, F16
// under faithful and the integer types run in JS only.
//
// The JS loops are written for V8: monomorphic typed arrays, module-local numeric constants,
// block-local accumulators, class tests on the integer bits, and a method call only for the rare
// element that mismatches, is not finite, or could set a record (worst element, max rel, the
// required tolerances).
//
// CANONICAL ORDER (why a result never depends on chunking or on which path ran): blocks lie on a
// fixed grid of BLOCK_BYTES over the tensor's absolute unit index (units: elements, or float32
// components for C64), clipped to the range compared; inside a block the squared errors of the
// first floor(len / G) * G units (G = 8 for 16-bit types, else 4) are summed in four interleaved
// partial sums (unit offset mod 4), folded as (s0 + s2) + (s1 + s3) and added to the running sum,
// then the remaining units are added one by one. Counts and maxima are order-independent;
// witnesses keep the earliest index on ties; the required rel is an exact maximum.
//
// REQUIRED TOLERANCES, each alone: required.abs is the smallest abs under which every finite pair
// passes with rel = 0 (that is the max abs error), required.rel the smallest rel with abs = 0, as
// evaluated in double arithmetic (d <= abs + rel * |r|), and required.ulp the max ULP distance.
// MAX REL is that same required rel: the largest relative error in the form the tolerance test
// uses (within one double ULP of max fl(|n - r| / |r|); Infinity when some |r| = 0 < |n - r|). Its
// record test, d > fl(requiredRel * |r|), is exact, so exact ties with the record (common in
// quantized data) never count as candidates and no division runs in the loops.
import { endianness } from 'node:os';
import { DTYPE_SIZE, type DType } from '../bundle/dtype.ts';
import { f16BitsToF32Bits } from '../bundle/tensor-view.ts';
import type { Contract } from '../bundle/manifest-schema.ts';
import type { ElementWitness, MismatchClass, SideCensus } from './comparison-types.ts';
import { BLOCK_BYTES, DATA_START, instantiateKernels, MAX_ULP_BYTE, SLOT, STATE_SLOTS, type RangeKernel, type WasmKernels } from './compare-kernels-wasm.ts';

export { BLOCK_BYTES } from './compare-kernels-wasm.ts';

// Module-local copies of the slot indices (an imported object would be a property load, or a
// getter after transpilation, in every loop iteration).
const S_SUMSQ: number = SLOT.sumSq;
const S_PAIRS: number = SLOT.pairs;
const S_MAXABS: number = SLOT.maxAbs;
const S_MAXULP: number = SLOT.maxUlp;
const S_THR_D: number = SLOT.thrD;
const S_REQREL: number = SLOT.requiredRel;
const S_ABS: number = SLOT.abs;
const S_REL: number = SLOT.rel;
const S_CENSUS_N: number = SLOT.censusNative;
const S_CENSUS_R: number = SLOT.censusReference;

// ---- classes ---------------------------------------------------------------------------------

export const MISMATCH_CLASSES: readonly MismatchClass[] = ['value', 'nan_vs_number', 'nan_payload', 'inf_sign', 'signed_zero', 'tie_order', 'padding'];
/** Class codes: 0 = inside the contract, else 1 + the index in MISMATCH_CLASSES. */
export const C_NONE = 0;
export const C_VALUE = 1;
export const C_NAN_VS_NUMBER = 2;
export const C_NAN_PAYLOAD = 3;
export const C_INF_SIGN = 4;
export const C_SIGNED_ZERO = 5;
export const C_TIE_ORDER = 6;
export const C_PADDING = 7;

/** Which class a C64 element takes when its two components disagree differently (higher wins). */
const CLASS_RANK = [0, 3, 5, 2, 4, 1, 0, 0];

export function classOf(code: number): MismatchClass {
  return MISMATCH_CLASSES[code - 1] as MismatchClass;
}

export function codeOf(name: MismatchClass): number {
  return MISMATCH_CLASSES.indexOf(name) + 1;
}

/** Witness ranking: NaN-vs-number and infinity mismatches first, then other mismatches, then passing elements. */
function tierOf(code: number): number {
  if (code === C_NAN_VS_NUMBER || code === C_INF_SIGN) return 3;
  return code === C_NONE ? 1 : 2;
}

// ---- families --------------------------------------------------------------------------------

export type KernelFamily = 'f32' | 'c64' | 'bf16' | 'f16' | 'f64' | 'int' | 'int64';

export function familyOf(dtype: DType): KernelFamily {
  switch (dtype) {
    case 'F32':
      return 'f32';
    case 'C64':
      return 'c64';
    case 'BF16':
      return 'bf16';
    case 'F16':
      return 'f16';
    case 'F64':
      return 'f64';
    case 'I64':
    case 'U64':
      return 'int64';
    default:
      return 'int';
  }
}

/** Kernel units per element (C64 is compared as its two float32 components). */
export function unitsPerElement(dtype: DType): number {
  return dtype === 'C64' ? 2 : 1;
}

/** Bytes per kernel unit. */
export function unitBytes(dtype: DType): number {
  return dtype === 'C64' ? 4 : DTYPE_SIZE[dtype];
}

// ---- small numerics ----------------------------------------------------------------------------

const f64Scratch = new Float64Array(1);
const u32OfF64 = new Uint32Array(f64Scratch.buffer);
const u64OfF64 = new BigUint64Array(f64Scratch.buffer);

/** The next double above a non-negative x. */
export function nextUp(x: number): number {
  if (x !== x || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  f64Scratch[0] = x;
  const lo = ((u32OfF64[0] as number) + 1) >>> 0;
  u32OfF64[0] = lo;
  if (lo === 0) u32OfF64[1] = (u32OfF64[1] as number) + 1;
  return f64Scratch[0] as number;
}

/** The next double below a positive x (0 stays 0). */
export function nextDown(x: number): number {
  if (x !== x || x <= 0) return x <= 0 ? 0 : x;
  f64Scratch[0] = x;
  const lo = u32OfF64[0] as number;
  if (lo === 0) u32OfF64[1] = (u32OfF64[1] as number) - 1;
  u32OfF64[0] = (lo - 1) >>> 0;
  return f64Scratch[0] as number;
}

function keyOfDouble(x: number): bigint {
  f64Scratch[0] = x;
  return u64OfF64[0] as bigint;
}

function doubleOfKey(key: bigint): number {
  u64OfF64[0] = key;
  return f64Scratch[0] as number;
}

/** Smallest non-negative double t in (lo, hi] with pass(t), given !pass(lo), pass(hi), pass monotone. */
function smallestPassing(lo: number, hi: number, pass: (t: number) => boolean): number {
  let a = keyOfDouble(lo);
  let b = keyOfDouble(hi);
  while (b - a > 1n) {
    const mid = (a + b) >> 1n;
    if (pass(doubleOfKey(mid))) b = mid;
    else a = mid;
  }
  return doubleOfKey(b);
}

/** The smallest rel with d <= abs + rel * ar in double arithmetic (Infinity when ar = 0 and d > abs). */
export function minimalRel(d: number, ar: number, abs: number): number {
  if (d <= abs) return 0;
  if (ar === 0) return Infinity;
  let hi = (d - abs) / ar;
  while (!(d <= abs + hi * ar)) hi = nextUp(hi);
  const below = nextDown(hi);
  if (!(d <= abs + below * ar)) return hi;
  return smallestPassing(0, hi, (t) => d <= abs + t * ar);
}

function hex(value: number, digits: number): string {
  return `0x${(value >>> 0).toString(16).padStart(digits, '0')}`;
}

function hex64(value: bigint): string {
  return `0x${BigInt.asUintN(64, value).toString(16).padStart(16, '0')}`;
}

function hex64Words(hi: number, lo: number): string {
  return `0x${(hi >>> 0).toString(16).padStart(8, '0')}${(lo >>> 0).toString(16).padStart(8, '0')}`;
}

/** Bits of an element for a witness: 8 / 4 hex digits from `hi`, or 16 from (hi, lo). */
function bitsText(hi: number, lo: number, digits: number): string {
  return digits === 16 ? hex64Words(hi, lo) : hex(hi, digits);
}

export function complexText(re: number, im: number): string {
  const sign = im < 0 || Object.is(im, -0) ? '-' : '+';
  return `${re}${sign}${Math.abs(im)}j`;
}

// ---- half-precision tables --------------------------------------------------------------------

let bf16Table: Float32Array | null = null;
let f16Table: Float32Array | null = null;

/** Every 16-bit pattern's value, as float32 (exact). */
export function halfTable(family: 'bf16' | 'f16'): Float32Array {
  if (family === 'bf16') {
    if (bf16Table === null) {
      const bits = new Uint32Array(65536);
      for (let h = 0; h < 65536; h++) bits[h] = h << 16;
      bf16Table = new Float32Array(bits.buffer);
    }
    return bf16Table;
  }
  if (f16Table === null) {
    const bits = new Uint32Array(65536);
    for (let h = 0; h < 65536; h++) bits[h] = f16BitsToF32Bits(h);
    f16Table = new Float32Array(bits.buffer);
  }
  return f16Table;
}

// ---- workspace ---------------------------------------------------------------------------------

export type KernelMode = 'auto' | 'js';

/**
 * Memory for one comparison: the shared state slots and a native and a reference window. With
 * wasm, all three live in the kernel module's memory; the I/O copies each chunk into the windows.
 */
export class KernelWorkspace {
  readonly wasm: WasmKernels | null;
  readonly state: Float64Array;
  readonly native: Uint8Array;
  readonly reference: Uint8Array;
  readonly windowBytes: number;

  private constructor(wasm: WasmKernels | null, windowBytes: number) {
    this.wasm = wasm;
    this.windowBytes = windowBytes;
    if (wasm !== null) {
      const buffer = wasm.memory.buffer;
      this.state = new Float64Array(buffer, 0, STATE_SLOTS);
      this.native = new Uint8Array(buffer, DATA_START, windowBytes);
      this.reference = new Uint8Array(buffer, DATA_START + windowBytes, windowBytes);
    } else {
      this.state = new Float64Array(STATE_SLOTS);
      this.native = new Uint8Array(windowBytes);
      this.reference = new Uint8Array(windowBytes);
    }
  }

  /** `windowBytes` is rounded up to whole blocks. Mode 'js' never uses WebAssembly. */
  static create(windowBytes: number, mode: KernelMode = 'auto'): KernelWorkspace {
    if (endianness() !== 'LE') throw new Error('trace-inspector compares little-endian tensors and needs a little-endian host');
    const bytes = Math.max(BLOCK_BYTES, Math.ceil(windowBytes / BLOCK_BYTES) * BLOCK_BYTES);
    const wasm = mode === 'js' ? null : instantiateKernels(DATA_START + 2 * bytes);
    return new KernelWorkspace(wasm, bytes);
  }
}

// ---- state -----------------------------------------------------------------------------------

/** What the kernels need to know about one comparison. */
export interface KernelConfig {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly contract: Contract;
}

/**
 * The running state of one boundary comparison. Quantities the wasm path also updates live in
 * the shared slots `s` (RMSE sum, pairs, maxima, census); the JS path keeps its own counters in
 * fields and the accessors below merge both.
 */
export class KernelState {
  readonly dtype: DType;
  readonly family: KernelFamily;
  readonly shape: readonly number[];
  readonly units: number;
  readonly blockUnits: number;
  readonly s: Float64Array;
  readonly ws: KernelWorkspace;

  // contract
  readonly bitExact: boolean;
  readonly abs: number;
  readonly rel: number;
  /** -1: no ULP bound. */
  readonly maxUlp: number;
  readonly signedZeroMustMatch: boolean;
  readonly payloadMustMatch: boolean;

  // thresholds (mirrored into s for the wasm path)
  thrD = 0;

  // JS-side accumulators
  pairsJs = 0;
  maxAbsJs = 0;
  maxUlpJs = 0;
  readonly censusJs = new Float64Array(12); // native 0..5, reference 6..11 (nan, +inf, -inf, -0, sub, finite)
  readonly classCounts: number[] = [0, 0, 0, 0, 0, 0, 0, 0];
  mismatches = 0;
  first: ElementWitness | null = null;
  worst: ElementWitness | null = null;
  worstTier = 1;
  worstD = 0;
  /** The smallest rel with d <= rel * |r| for every finite pair so far (also the reported max rel). */
  requiredRel = 0;
  compared = 0;
  padded = 0;
  intMaxAbs = 0n;

  // per-component scratch (C64)
  lastD = 0;
  lastUlp = 0;
  lastFinite = false;

  constructor(ws: KernelWorkspace, config: KernelConfig) {
    this.ws = ws;
    this.dtype = config.dtype;
    this.family = familyOf(config.dtype);
    this.shape = config.shape;
    this.units = unitsPerElement(config.dtype);
    this.blockUnits = BLOCK_BYTES / unitBytes(config.dtype);
    const contract = config.contract;
    this.bitExact = contract.kind === 'bit_exact';
    this.abs = contract.kind === 'faithful' ? contract.abs : 0;
    this.rel = contract.kind === 'faithful' ? contract.rel : 0;
    this.maxUlp = contract.kind === 'faithful' && contract.max_ulp !== null ? contract.max_ulp : -1;
    this.signedZeroMustMatch = contract.signed_zero === 'must_match';
    this.payloadMustMatch = contract.nan_policy === 'positions_and_payload';
    this.s = ws.state;
    this.s.fill(0);
    this.s[S_ABS] = this.abs;
    this.s[S_REL] = this.rel;
    this.refreshThresholds();
    if (ws.wasm !== null) {
      const bound = this.maxUlp < 0 ? 0 : this.family === 'bf16' ? Math.min(this.maxUlp, 0xffff) * 65536 : Math.min(this.maxUlp, 0xffffffff);
      new Uint32Array(ws.wasm.memory.buffer, MAX_ULP_BYTE, 1)[0] = bound;
    }
  }

  /** Recomputes the candidate thresholds from the exact records (JS fields and wasm slots). */
  refreshThresholds(): void {
    this.thrD = this.worstTier === 1 ? this.worstD : Infinity;
    const s = this.s;
    s[S_THR_D] = this.thrD;
    s[S_REQREL] = this.requiredRel;
  }

  // -- slow paths: rare elements -----------------------------------------------------------------

  /**
   * A finite pair that mismatches or could set a record: exact records, class, count, witness.
   * (The caller has already counted the pair and its max abs / max ULP.)
   */
  slowFinite(
    flat: number,
    x: number,
    y: number,
    d: number,
    ulp: number,
    ok: boolean,
    nHi: number,
    nLo: number,
    rHi: number,
    rLo: number,
    digits: number,
  ): void {
    const code = this.finiteRecords(d, Math.abs(y), ok);
    if (this.wants(code, d)) this.note(flat, code, d, ulp, x, y, bitsText(nHi, nLo, digits), bitsText(rHi, rLo, digits));
    else this.count(code);
  }

  /** Updates the required rel for a finite pair; returns its class. */
  finiteRecords(d: number, ar: number, ok: boolean): number {
    if (d - this.requiredRel * ar > 0) {
      // exactly a new record: rel = requiredRel no longer passes this pair
      this.requiredRel = minimalRel(d, ar, 0);
      this.refreshThresholds();
    }
    if (ok) return C_NONE;
    return d === 0 ? C_SIGNED_ZERO : C_VALUE;
  }

  /** A pair where at least one side is NaN or infinite: its class (the caller handles the census). */
  nonFiniteCode(x: number, y: number, bitsEqual: boolean): number {
    const nNaN = x !== x;
    const rNaN = y !== y;
    if (nNaN || rNaN) {
      if (nNaN && rNaN) return !bitsEqual && this.payloadMustMatch ? C_NAN_PAYLOAD : C_NONE;
      return C_NAN_VS_NUMBER;
    }
    return x === y ? C_NONE : C_INF_SIGN;
  }

  slowNonFinite(flat: number, x: number, y: number, bitsEqual: boolean, nHi: number, nLo: number, rHi: number, rLo: number, digits: number): void {
    const code = this.nonFiniteCode(x, y, bitsEqual);
    if (this.wants(code, Infinity)) this.note(flat, code, 0, 0, x, y, bitsText(nHi, nLo, digits), bitsText(rHi, rLo, digits));
    else this.count(code);
  }

  /** Whether the pass test holds for a finite pair (bits equal handled by the caller). */
  passes(d: number, ar: number, ulp: number): boolean {
    if (this.bitExact) return d === 0 && !this.signedZeroMustMatch;
    if (d === 0) return !this.signedZeroMustMatch;
    return d <= this.abs + this.rel * ar || (this.maxUlp >= 0 && ulp <= this.maxUlp);
  }

  /** Whether an element of class `code` and rank error `d` needs a witness (first mismatch or new worst). */
  wants(code: number, d: number): boolean {
    if (code !== C_NONE && this.first === null) return true;
    const tier = tierOf(code);
    return tier > this.worstTier || (tier === this.worstTier && d > this.worstD);
  }

  /** Counts a mismatching element that needs no witness. */
  count(code: number): void {
    if (code === C_NONE) return;
    this.mismatches += 1;
    this.classCounts[code] = (this.classCounts[code] as number) + 1;
  }

  /** Counts an element and records it as first mismatch and/or worst element. */
  note(
    flat: number,
    code: number,
    d: number,
    ulp: number,
    native: number | string,
    reference: number | string,
    nativeBits: string,
    referenceBits: string,
  ): void {
    this.count(code);
    const tier = tierOf(code);
    const rankD = tier === 3 ? Infinity : d;
    const witness: ElementWitness = {
      flatIndex: flat,
      index: unravel(flat, this.shape),
      native,
      reference,
      absError: rankD,
      ulp: tier === 3 ? Infinity : ulp,
      class: code === C_NONE ? 'value' : classOf(code),
      mismatch: code !== C_NONE,
      nativeBits,
      referenceBits,
    };
    if (code !== C_NONE && this.first === null) this.first = witness;
    if (tier > this.worstTier || (tier === this.worstTier && rankD > this.worstD)) {
      this.worst = witness;
      this.worstTier = tier;
      this.worstD = rankD;
      this.refreshThresholds();
    }
  }

  /** Moves every count of class `from` to class `to`, witnesses included (tie analysis). */
  reclassify(from: number, to: number): void {
    const moved = this.classCounts[from] as number;
    this.classCounts[from] = 0;
    this.classCounts[to] = (this.classCounts[to] as number) + moved;
    for (const witness of [this.first, this.worst]) {
      if (witness !== null && witness.mismatch && witness.class === classOf(from)) witness.class = classOf(to);
    }
  }

  // -- merged results ----------------------------------------------------------------------------

  census(side: 'native' | 'reference'): SideCensus {
    const slot = side === 'native' ? S_CENSUS_N : S_CENSUS_R;
    const js = side === 'native' ? 0 : 6;
    const at = (k: number): number => (this.s[slot + k] as number) + (this.censusJs[js + k] as number);
    return { nan: at(0), posInf: at(1), negInf: at(2), negZero: at(3), subnormal: at(4), finite: at(5) };
  }

  classes(): Record<MismatchClass, number> {
    const out = {} as Record<MismatchClass, number>;
    MISMATCH_CLASSES.forEach((name, i) => (out[name] = this.classCounts[i + 1] as number));
    return out;
  }

  get sumSq(): number {
    return this.s[S_SUMSQ] as number;
  }
  get pairs(): number {
    return (this.s[S_PAIRS] as number) + this.pairsJs;
  }
  get maxAbs(): number {
    return Math.max(this.s[S_MAXABS] as number, this.maxAbsJs);
  }
  /** Max relative error = the required rel (see MAX REL above). */
  get maxRel(): number {
    return this.requiredRel;
  }
  get maxUlpSeen(): number {
    return Math.max(this.s[S_MAXULP] as number, this.maxUlpJs);
  }
}

/** Row-major multi-dimensional index of a flat index. */
export function unravel(flat: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length);
  let rest = flat;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    const extent = shape[axis] as number;
    index[axis] = extent === 0 ? 0 : rest % extent;
    rest = extent === 0 ? 0 : Math.floor(rest / extent);
  }
  return index;
}

// ---- census of special values (JS; normal values are counted in bulk by the loops) -------------

/** One side's census for a 32-bit float pattern whose exponent field is 0 or all ones. */
function special32(c: Float64Array, at: number, w: number): void {
  if ((w & 0x7f800000) === 0x7f800000) {
    if ((w & 0x007fffff) !== 0) c[at] = (c[at] as number) + 1;
    else if (w < 0) c[at + 2] = (c[at + 2] as number) + 1;
    else c[at + 1] = (c[at + 1] as number) + 1;
    return;
  }
  c[at + 5] = (c[at + 5] as number) + 1;
  if ((w & 0x007fffff) !== 0) c[at + 4] = (c[at + 4] as number) + 1;
  else if (w < 0) c[at + 3] = (c[at + 3] as number) + 1;
}

function special16(c: Float64Array, at: number, h: number, exp: number, mant: number): void {
  if ((h & exp) === exp) {
    if ((h & mant) !== 0) c[at] = (c[at] as number) + 1;
    else if (h & 0x8000) c[at + 2] = (c[at + 2] as number) + 1;
    else c[at + 1] = (c[at + 1] as number) + 1;
    return;
  }
  c[at + 5] = (c[at + 5] as number) + 1;
  if ((h & mant) !== 0) c[at + 4] = (c[at + 4] as number) + 1;
  else if (h & 0x8000) c[at + 3] = (c[at + 3] as number) + 1;
}

function special64(c: Float64Array, at: number, hi: number, lo: number): void {
  const mantissa = (hi & 0x000fffff) !== 0 || lo !== 0;
  if ((hi & 0x7ff00000) === 0x7ff00000) {
    if (mantissa) c[at] = (c[at] as number) + 1;
    else if (hi < 0) c[at + 2] = (c[at + 2] as number) + 1;
    else c[at + 1] = (c[at + 1] as number) + 1;
    return;
  }
  c[at + 5] = (c[at + 5] as number) + 1;
  if (mantissa) c[at + 4] = (c[at + 4] as number) + 1;
  else if (hi < 0) c[at + 3] = (c[at + 3] as number) + 1;
}

// ---- JS block kernels --------------------------------------------------------------------------
// Each processes ONE block [from, to) of units (window-relative; `base` is the absolute unit
// index of window unit 0) in canonical order.

function f32Block(st: KernelState, n: Float32Array, r: Float32Array, nb: Int32Array, rb: Int32Array, from: number, to: number, base: number): void {
  const absC = st.abs;
  const relC = st.rel;
  const maxUlpC = st.maxUlp;
  const faithful = !st.bitExact;
  const zeroSignsMatter = st.signedZeroMustMatch;
  const census = st.censusJs;
  let thrD = st.thrD;
  let requiredRel = st.requiredRel;
  let pairs = 0;
  let normal = 0;
  let maxAbs = st.maxAbsJs;
  let maxUlp = st.maxUlpJs;
  let run = st.s[S_SUMSQ] as number;
  const body = from + ((to - from) & ~3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = from; i < to; i++) {
    if (i === body) run += s0 + s2 + (s1 + s3);
    const wn = nb[i] as number;
    const wr = rb[i] as number;
    const en = wn & 0x7f800000;
    const er = wr & 0x7f800000;
    let e2 = 0;
    if (en === 0 || en === 0x7f800000 || er === 0 || er === 0x7f800000) {
      if (en === 0 || en === 0x7f800000) special32(census, 0, wn);
      else census[5] = (census[5] as number) + 1;
      if (er === 0 || er === 0x7f800000) special32(census, 6, wr);
      else census[11] = (census[11] as number) + 1;
    } else normal += 1;
    if (en === 0x7f800000 || er === 0x7f800000) {
      st.slowNonFinite(base + i, n[i] as number, r[i] as number, wn === wr, wn, 0, wr, 0, 8);
    } else {
      const x = n[i] as number;
      const y = r[i] as number;
      const d = Math.abs(x - y);
      pairs += 1;
      if (d > maxAbs) maxAbs = d;
      const kn = (wn ^ ((wn >> 31) >>> 1)) - (wn >> 31);
      const kr = (wr ^ ((wr >> 31) >>> 1)) - (wr >> 31);
      const ulp = kn > kr ? kn - kr : kr - kn;
      if (ulp > maxUlp) maxUlp = ulp;
      const ar = Math.abs(y);
      const c = relC * ar;
      const ok = wn === wr || (faithful ? (d === 0 ? !zeroSignsMatter : d <= absC + c || (maxUlpC >= 0 && ulp <= maxUlpC)) : d === 0 && !zeroSignsMatter);
      if (!ok || d > thrD || d - requiredRel * ar > 0) {
        st.slowFinite(base + i, x, y, d, ulp, ok, wn, 0, wr, 0, 8);
        thrD = st.thrD;
        requiredRel = st.requiredRel;
      }
      e2 = d * d;
    }
    if (i < body) {
      const lane = (i - from) & 3;
      if (lane === 0) s0 += e2;
      else if (lane === 1) s1 += e2;
      else if (lane === 2) s2 += e2;
      else s3 += e2;
    } else run += e2;
  }
  if (body === to) run += s0 + s2 + (s1 + s3);
  st.s[S_SUMSQ] = run;
  st.pairsJs += pairs;
  census[5] = (census[5] as number) + normal;
  census[11] = (census[11] as number) + normal;
  if (maxAbs > st.maxAbsJs) st.maxAbsJs = maxAbs;
  if (maxUlp > st.maxUlpJs) st.maxUlpJs = maxUlp;
}

function halfBlock(st: KernelState, table: Float32Array, nb: Uint16Array, rb: Uint16Array, from: number, to: number, base: number): void {
  const exp = st.family === 'bf16' ? 0x7f80 : 0x7c00;
  const mant = st.family === 'bf16' ? 0x007f : 0x03ff;
  const absC = st.abs;
  const relC = st.rel;
  const maxUlpC = st.maxUlp;
  const faithful = !st.bitExact;
  const zeroSignsMatter = st.signedZeroMustMatch;
  const census = st.censusJs;
  let thrD = st.thrD;
  let requiredRel = st.requiredRel;
  let pairs = 0;
  let normal = 0;
  let maxAbs = st.maxAbsJs;
  let maxUlp = st.maxUlpJs;
  let run = st.s[S_SUMSQ] as number;
  const body = from + ((to - from) & ~7);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = from; i < to; i++) {
    if (i === body) run += s0 + s2 + (s1 + s3);
    const hn = nb[i] as number;
    const hr = rb[i] as number;
    const en = hn & exp;
    const er = hr & exp;
    let e2 = 0;
    if (en === 0 || en === exp || er === 0 || er === exp) {
      if (en === 0 || en === exp) special16(census, 0, hn, exp, mant);
      else census[5] = (census[5] as number) + 1;
      if (er === 0 || er === exp) special16(census, 6, hr, exp, mant);
      else census[11] = (census[11] as number) + 1;
    } else normal += 1;
    const x = table[hn] as number;
    const y = table[hr] as number;
    if (en === exp || er === exp) {
      st.slowNonFinite(base + i, x, y, hn === hr, hn, 0, hr, 0, 4);
    } else {
      const d = Math.abs(x - y);
      pairs += 1;
      if (d > maxAbs) maxAbs = d;
      const kn = hn & 0x8000 ? -(hn & 0x7fff) : hn;
      const kr = hr & 0x8000 ? -(hr & 0x7fff) : hr;
      const ulp = kn > kr ? kn - kr : kr - kn;
      if (ulp > maxUlp) maxUlp = ulp;
      const ar = Math.abs(y);
      const c = relC * ar;
      const ok = hn === hr || (faithful ? (d === 0 ? !zeroSignsMatter : d <= absC + c || (maxUlpC >= 0 && ulp <= maxUlpC)) : d === 0 && !zeroSignsMatter);
      if (!ok || d > thrD || d - requiredRel * ar > 0) {
        st.slowFinite(base + i, x, y, d, ulp, ok, hn, 0, hr, 0, 4);
        thrD = st.thrD;
        requiredRel = st.requiredRel;
      }
      e2 = d * d;
    }
    if (i < body) {
      const lane = (i - from) & 3;
      if (lane === 0) s0 += e2;
      else if (lane === 1) s1 += e2;
      else if (lane === 2) s2 += e2;
      else s3 += e2;
    } else run += e2;
  }
  if (body === to) run += s0 + s2 + (s1 + s3);
  st.s[S_SUMSQ] = run;
  st.pairsJs += pairs;
  census[5] = (census[5] as number) + normal;
  census[11] = (census[11] as number) + normal;
  if (maxAbs > st.maxAbsJs) st.maxAbsJs = maxAbs;
  if (maxUlp > st.maxUlpJs) st.maxUlpJs = maxUlp;
}

/**
 * ULP distance of two float32 patterns (C64: of one component pair), the key transform the
 * loops above use inline: sign-magnitude mapped onto a line where +0 and -0 are one point.
 */
export function ulp32(wn: number, wr: number): number {
  const kn = (wn ^ ((wn >> 31) >>> 1)) - (wn >> 31);
  const kr = (wr ^ ((wr >> 31) >>> 1)) - (wr >> 31);
  return kn > kr ? kn - kr : kr - kn;
}

/** ULP distance of two bf16 or f16 patterns, as halfBlock counts it (+0 and -0 one point). */
export function ulp16(hn: number, hr: number): number {
  const kn = hn & 0x8000 ? -(hn & 0x7fff) : hn;
  const kr = hr & 0x8000 ? -(hr & 0x7fff) : hr;
  return kn > kr ? kn - kr : kr - kn;
}

/** The class of a C64 element from its components' classes, as c64Block picks it. */
export function c64ElementCode(codeRe: number, codeIm: number): number {
  return (CLASS_RANK[codeRe] as number) >= (CLASS_RANK[codeIm] as number) ? codeRe : codeIm;
}

/** ULP distance of two float64 patterns given as (hi, lo) words; exact below 2^53. */
export function ulp64(hiA: number, loA: number, hiB: number, loB: number): number {
  const magA = hiA & 0x7fffffff;
  const magB = hiB & 0x7fffffff;
  const la = loA >>> 0;
  const lb = loB >>> 0;
  if ((hiA ^ hiB) < 0) return (magA + magB) * 4294967296 + (la + lb);
  return Math.abs((magA - magB) * 4294967296 + (la - lb));
}

function f64Block(st: KernelState, n: Float64Array, r: Float64Array, nw: Int32Array, rw: Int32Array, from: number, to: number, base: number): void {
  const absC = st.abs;
  const relC = st.rel;
  const maxUlpC = st.maxUlp;
  const faithful = !st.bitExact;
  const zeroSignsMatter = st.signedZeroMustMatch;
  const census = st.censusJs;
  let thrD = st.thrD;
  let requiredRel = st.requiredRel;
  let pairs = 0;
  let normal = 0;
  let maxAbs = st.maxAbsJs;
  let maxUlp = st.maxUlpJs;
  let run = st.s[S_SUMSQ] as number;
  const body = from + ((to - from) & ~3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = from; i < to; i++) {
    if (i === body) run += s0 + s2 + (s1 + s3);
    const nlo = nw[2 * i] as number;
    const nhi = nw[2 * i + 1] as number;
    const rlo = rw[2 * i] as number;
    const rhi = rw[2 * i + 1] as number;
    const en = nhi & 0x7ff00000;
    const er = rhi & 0x7ff00000;
    const same = nlo === rlo && nhi === rhi;
    let e2 = 0;
    if (en === 0 || en === 0x7ff00000 || er === 0 || er === 0x7ff00000) {
      if (en === 0 || en === 0x7ff00000) special64(census, 0, nhi, nlo);
      else census[5] = (census[5] as number) + 1;
      if (er === 0 || er === 0x7ff00000) special64(census, 6, rhi, rlo);
      else census[11] = (census[11] as number) + 1;
    } else normal += 1;
    if (en === 0x7ff00000 || er === 0x7ff00000) {
      st.slowNonFinite(base + i, n[i] as number, r[i] as number, same, nhi, nlo, rhi, rlo, 16);
    } else {
      const x = n[i] as number;
      const y = r[i] as number;
      const d = Math.abs(x - y);
      pairs += 1;
      if (d > maxAbs) maxAbs = d;
      const ulp = same ? 0 : ulp64(nhi, nlo, rhi, rlo);
      if (ulp > maxUlp) maxUlp = ulp;
      const ar = Math.abs(y);
      const c = relC * ar;
      const ok = same || (faithful ? (d === 0 ? !zeroSignsMatter : d <= absC + c || (maxUlpC >= 0 && ulp <= maxUlpC)) : d === 0 && !zeroSignsMatter);
      if (!ok || d > thrD || d - requiredRel * ar > 0) {
        st.slowFinite(base + i, x, y, d, ulp, ok, nhi, nlo, rhi, rlo, 16);
        thrD = st.thrD;
        requiredRel = st.requiredRel;
      }
      e2 = d * d;
    }
    if (i < body) {
      const lane = (i - from) & 3;
      if (lane === 0) s0 += e2;
      else if (lane === 1) s1 += e2;
      else if (lane === 2) s2 += e2;
      else s3 += e2;
    } else run += e2;
  }
  if (body === to) run += s0 + s2 + (s1 + s3);
  st.s[S_SUMSQ] = run;
  st.pairsJs += pairs;
  census[5] = (census[5] as number) + normal;
  census[11] = (census[11] as number) + normal;
  if (maxAbs > st.maxAbsJs) st.maxAbsJs = maxAbs;
  if (maxUlp > st.maxUlpJs) st.maxUlpJs = maxUlp;
}

/** One C64 component: returns its class; leaves d, ULP and finiteness in st.lastD/lastUlp/lastFinite. */
function c64Component(st: KernelState, n: Float32Array, r: Float32Array, nb: Int32Array, rb: Int32Array, i: number): number {
  const census = st.censusJs;
  const wn = nb[i] as number;
  const wr = rb[i] as number;
  const en = wn & 0x7f800000;
  const er = wr & 0x7f800000;
  if (en === 0 || en === 0x7f800000) special32(census, 0, wn);
  else census[5] = (census[5] as number) + 1;
  if (er === 0 || er === 0x7f800000) special32(census, 6, wr);
  else census[11] = (census[11] as number) + 1;
  const x = n[i] as number;
  const y = r[i] as number;
  if (en === 0x7f800000 || er === 0x7f800000) {
    const code = st.nonFiniteCode(x, y, wn === wr);
    st.lastD = code === C_NONE ? 0 : Infinity;
    st.lastUlp = code === C_NONE ? 0 : Infinity;
    st.lastFinite = false;
    return code;
  }
  const kn = (wn ^ ((wn >> 31) >>> 1)) - (wn >> 31);
  const kr = (wr ^ ((wr >> 31) >>> 1)) - (wr >> 31);
  const ulp = kn > kr ? kn - kr : kr - kn;
  const d = Math.abs(x - y);
  st.pairsJs += 1;
  if (d > st.maxAbsJs) st.maxAbsJs = d;
  if (ulp > st.maxUlpJs) st.maxUlpJs = ulp;
  st.lastD = d;
  st.lastUlp = ulp;
  st.lastFinite = true;
  const ar = Math.abs(y);
  return st.finiteRecords(d, ar, wn === wr || st.passes(d, ar, ulp));
}

function c64Block(st: KernelState, n: Float32Array, r: Float32Array, nb: Int32Array, rb: Int32Array, from: number, to: number, base: number): void {
  // Units are components (from and to even); squared errors follow the canonical order over units.
  const s = st.s;
  const body = from + ((to - from) & ~3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = from; i < to; i += 2) {
    const codeRe = c64Component(st, n, r, nb, rb, i);
    const dRe = st.lastD;
    const uRe = st.lastUlp;
    const sqRe = st.lastFinite ? dRe * dRe : 0;
    const codeIm = c64Component(st, n, r, nb, rb, i + 1);
    const dIm = st.lastD;
    const uIm = st.lastUlp;
    const sqIm = st.lastFinite ? dIm * dIm : 0;
    if (i < body) {
      if (((i - from) & 3) === 0) {
        s0 += sqRe;
        s1 += sqIm;
      } else {
        s2 += sqRe;
        s3 += sqIm;
      }
      if (i + 2 === body) s[S_SUMSQ] = (s[S_SUMSQ] as number) + (s0 + s2 + (s1 + s3));
    } else {
      s[S_SUMSQ] = (s[S_SUMSQ] as number) + sqRe;
      s[S_SUMSQ] = (s[S_SUMSQ] as number) + sqIm;
    }
    const code = (CLASS_RANK[codeRe] as number) >= (CLASS_RANK[codeIm] as number) ? codeRe : codeIm;
    const d = Math.max(dRe, dIm);
    if (st.wants(code, d)) {
      st.note(
        (base + i) / 2,
        code,
        d,
        Math.max(uRe, uIm),
        complexText(n[i] as number, n[i + 1] as number),
        complexText(r[i] as number, r[i + 1] as number),
        `${hex(nb[i] as number, 8)},${hex(nb[i + 1] as number, 8)}`,
        `${hex(rb[i] as number, 8)},${hex(rb[i + 1] as number, 8)}`,
      );
    } else st.count(code);
  }
}

type IntArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;

/** A differing integer pair: records, class, witness. */
function slowInteger(st: KernelState, flat: number, a: number | bigint, b: number | bigint, d: number, digits: number): void {
  const ar = Math.abs(Number(b));
  if (d > st.maxAbsJs) st.maxAbsJs = d;
  if (d > st.maxUlpJs) st.maxUlpJs = d;
  st.finiteRecords(d, ar, true);
  if (st.wants(C_VALUE, d)) {
    const nativeValue = typeof a === 'bigint' ? a.toString() : a;
    const referenceValue = typeof b === 'bigint' ? b.toString() : b;
    const nativeBits = typeof a === 'bigint' ? hex64(a) : hex(a, digits);
    const referenceBits = typeof b === 'bigint' ? hex64(b) : hex(b, digits);
    st.note(flat, C_VALUE, d, d, nativeValue, referenceValue, nativeBits, referenceBits);
  } else st.count(C_VALUE);
}

function intBlock(st: KernelState, n: IntArray, r: IntArray, from: number, to: number, base: number): void {
  const digits = n.BYTES_PER_ELEMENT * 2;
  let run = st.s[S_SUMSQ] as number;
  const body = from + ((to - from) & ~3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = from; i < to; i++) {
    if (i === body) run += s0 + s2 + (s1 + s3);
    const a = n[i] as number;
    const b = r[i] as number;
    let e2 = 0;
    if (a !== b) {
      const d = Math.abs(a - b);
      slowInteger(st, base + i, a, b, d, digits);
      e2 = d * d;
    }
    if (i < body) {
      const lane = (i - from) & 3;
      if (lane === 0) s0 += e2;
      else if (lane === 1) s1 += e2;
      else if (lane === 2) s2 += e2;
      else s3 += e2;
    } else run += e2;
  }
  if (body === to) run += s0 + s2 + (s1 + s3);
  st.s[S_SUMSQ] = run;
  st.pairsJs += to - from;
  st.censusJs[5] = (st.censusJs[5] as number) + (to - from);
  st.censusJs[11] = (st.censusJs[11] as number) + (to - from);
}

function int64Block(st: KernelState, n: BigInt64Array | BigUint64Array, r: BigInt64Array | BigUint64Array, from: number, to: number, base: number): void {
  let run = st.s[S_SUMSQ] as number;
  const body = from + ((to - from) & ~3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = from; i < to; i++) {
    if (i === body) run += s0 + s2 + (s1 + s3);
    const a = n[i] as bigint;
    const b = r[i] as bigint;
    let e2 = 0;
    if (a !== b) {
      const diff = a > b ? a - b : b - a;
      if (diff > st.intMaxAbs) st.intMaxAbs = diff;
      const d = Number(diff);
      slowInteger(st, base + i, a, b, d, 16);
      e2 = d * d;
    }
    if (i < body) {
      const lane = (i - from) & 3;
      if (lane === 0) s0 += e2;
      else if (lane === 1) s1 += e2;
      else if (lane === 2) s2 += e2;
      else s3 += e2;
    } else run += e2;
  }
  if (body === to) run += s0 + s2 + (s1 + s3);
  st.s[S_SUMSQ] = run;
  st.pairsJs += to - from;
  st.censusJs[5] = (st.censusJs[5] as number) + (to - from);
  st.censusJs[11] = (st.censusJs[11] as number) + (to - from);
}

// ---- identical ranges (JS) ------------------------------------------------------------------

/** A range whose two sides are bit-identical: the native census counts for both sides; no value statistic moves. */
function identicalRange(st: KernelState, v: Views, from: number, to: number): void {
  const census = st.censusJs;
  const before = (census[0] as number) + (census[1] as number) + (census[2] as number);
  const snapshot = census.slice(0, 6);
  let normal = 0;
  switch (st.family) {
    case 'f32':
    case 'c64': {
      const w = v.i32n as Int32Array;
      for (let i = from; i < to; i++) {
        const x = w[i] as number;
        const e = x & 0x7f800000;
        if (e === 0 || e === 0x7f800000) special32(census, 0, x);
        else normal += 1;
      }
      break;
    }
    case 'bf16':
    case 'f16': {
      const h = v.u16n as Uint16Array;
      const exp = st.family === 'bf16' ? 0x7f80 : 0x7c00;
      const mant = st.family === 'bf16' ? 0x007f : 0x03ff;
      for (let i = from; i < to; i++) {
        const x = h[i] as number;
        const e = x & exp;
        if (e === 0 || e === exp) special16(census, 0, x, exp, mant);
        else normal += 1;
      }
      break;
    }
    case 'f64': {
      const w = v.i32n as Int32Array;
      for (let i = from; i < to; i++) {
        const hi = w[2 * i + 1] as number;
        const e = hi & 0x7ff00000;
        if (e === 0 || e === 0x7ff00000) special64(census, 0, hi, w[2 * i] as number);
        else normal += 1;
      }
      break;
    }
    default:
      normal = to - from;
  }
  census[5] = (census[5] as number) + normal;
  for (let k = 0; k < 6; k++) census[6 + k] = (census[6 + k] as number) + ((census[k] as number) - (snapshot[k] as number));
  const nonFinite = (census[0] as number) + (census[1] as number) + (census[2] as number) - before;
  st.pairsJs += to - from - nonFinite;
}

// ---- dispatch ----------------------------------------------------------------------------------

interface Views {
  f32n: Float32Array | null;
  f32r: Float32Array | null;
  i32n: Int32Array | null;
  i32r: Int32Array | null;
  u16n: Uint16Array | null;
  u16r: Uint16Array | null;
  f64n: Float64Array | null;
  f64r: Float64Array | null;
  intn: IntArray | null;
  intr: IntArray | null;
  bign: BigInt64Array | BigUint64Array | null;
  bigr: BigInt64Array | BigUint64Array | null;
}

function intView(dtype: DType, bytes: Uint8Array): IntArray {
  const { buffer, byteOffset, byteLength } = bytes;
  switch (dtype) {
    case 'I8':
      return new Int8Array(buffer, byteOffset, byteLength);
    case 'I16':
      return new Int16Array(buffer, byteOffset, byteLength / 2);
    case 'U16':
      return new Uint16Array(buffer, byteOffset, byteLength / 2);
    case 'I32':
      return new Int32Array(buffer, byteOffset, byteLength / 4);
    case 'U32':
      return new Uint32Array(buffer, byteOffset, byteLength / 4);
    default:
      return new Uint8Array(buffer, byteOffset, byteLength); // U8, BOOL
  }
}

function makeViews(st: KernelState, n: Uint8Array, r: Uint8Array): Views {
  const views: Views = {
    f32n: null,
    f32r: null,
    i32n: null,
    i32r: null,
    u16n: null,
    u16r: null,
    f64n: null,
    f64r: null,
    intn: null,
    intr: null,
    bign: null,
    bigr: null,
  };
  const words = (bytes: Uint8Array): Int32Array => new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  switch (st.family) {
    case 'f32':
    case 'c64':
      views.f32n = new Float32Array(n.buffer, n.byteOffset, n.byteLength >> 2);
      views.f32r = new Float32Array(r.buffer, r.byteOffset, r.byteLength >> 2);
      views.i32n = words(n);
      views.i32r = words(r);
      break;
    case 'bf16':
    case 'f16':
      views.u16n = new Uint16Array(n.buffer, n.byteOffset, n.byteLength >> 1);
      views.u16r = new Uint16Array(r.buffer, r.byteOffset, r.byteLength >> 1);
      break;
    case 'f64':
      views.f64n = new Float64Array(n.buffer, n.byteOffset, n.byteLength >> 3);
      views.f64r = new Float64Array(r.buffer, r.byteOffset, r.byteLength >> 3);
      views.i32n = words(n);
      views.i32r = words(r);
      break;
    case 'int64':
      views.bign =
        st.dtype === 'I64' ? new BigInt64Array(n.buffer, n.byteOffset, n.byteLength >> 3) : new BigUint64Array(n.buffer, n.byteOffset, n.byteLength >> 3);
      views.bigr =
        st.dtype === 'I64' ? new BigInt64Array(r.buffer, r.byteOffset, r.byteLength >> 3) : new BigUint64Array(r.buffer, r.byteOffset, r.byteLength >> 3);
      break;
    case 'int':
      views.intn = intView(st.dtype, n);
      views.intr = intView(st.dtype, r);
      break;
  }
  return views;
}

function sameBytes(n: Uint8Array, r: Uint8Array, from: number, to: number, bytesPerUnit: number): boolean {
  const a = Buffer.from(n.buffer, n.byteOffset + from * bytesPerUnit, (to - from) * bytesPerUnit);
  const b = Buffer.from(r.buffer, r.byteOffset + from * bytesPerUnit, (to - from) * bytesPerUnit);
  return a.equals(b);
}

function jsBlock(st: KernelState, v: Views, from: number, to: number, base: number): void {
  switch (st.family) {
    case 'f32':
      return f32Block(st, v.f32n as Float32Array, v.f32r as Float32Array, v.i32n as Int32Array, v.i32r as Int32Array, from, to, base);
    case 'c64':
      return c64Block(st, v.f32n as Float32Array, v.f32r as Float32Array, v.i32n as Int32Array, v.i32r as Int32Array, from, to, base);
    case 'bf16':
    case 'f16':
      return halfBlock(st, halfTable(st.family), v.u16n as Uint16Array, v.u16r as Uint16Array, from, to, base);
    case 'f64':
      return f64Block(st, v.f64n as Float64Array, v.f64r as Float64Array, v.i32n as Int32Array, v.i32r as Int32Array, from, to, base);
    case 'int':
      return intBlock(st, v.intn as IntArray, v.intr as IntArray, from, to, base);
    case 'int64':
      return int64Block(st, v.bign as BigInt64Array, v.bigr as BigInt64Array, from, to, base);
  }
}

function wasmKernelFor(st: KernelState, n: Uint8Array, r: Uint8Array): RangeKernel | null {
  const wasm = st.ws.wasm;
  if (wasm === null || n.buffer !== wasm.memory.buffer || r.buffer !== wasm.memory.buffer) return null;
  if (n.byteOffset % 16 !== 0 || r.byteOffset % 16 !== 0) return null;
  const variant = (st.maxUlp >= 0 ? 'u' : '') + (st.signedZeroMustMatch ? 'z' : '');
  const key = (variant === '' ? 'plain' : variant) as 'plain' | 'u' | 'z' | 'uz';
  switch (st.family) {
    case 'f32':
    case 'c64':
      return st.bitExact ? wasm.exact32 : wasm.faithful32[key];
    case 'bf16':
      return st.bitExact ? wasm.exact16bf : wasm.faithfulBf16[key];
    case 'f16':
      return st.bitExact ? wasm.exact16h : null;
    default:
      return null;
  }
}

/**
 * Compares units [from, to) of two windows by value (inside the valid region). `base` is the
 * absolute unit index of window unit 0 (units: elements, or float32 components for C64; for C64
 * from, to and base are even). The wasm path runs when both windows are views on the
 * workspace's kernel memory (KernelWorkspace.native / .reference or subarrays of them).
 */
export function compareValues(st: KernelState, native: Uint8Array, reference: Uint8Array, from: number, to: number, base: number): void {
  if (from >= to) return;
  st.compared += (to - from) / st.units;
  const bytesPerUnit = unitBytes(st.dtype);
  const kernel = wasmKernelFor(st, native, reference);
  const B = st.blockUnits;
  if (kernel === null) {
    const views = makeViews(st, native, reference);
    if (sameBytes(native, reference, from, to, bytesPerUnit)) return identicalRange(st, views, from, to);
    for (let pos = from; pos < to;) {
      const end = Math.min(to, (Math.floor((base + pos) / B) + 1) * B - base);
      if (sameBytes(native, reference, pos, end, bytesPerUnit)) identicalRange(st, views, pos, end);
      else jsBlock(st, views, pos, end, base);
      pos = end;
    }
    return;
  }
  let views: Views | null = null;
  for (let pos = from; pos < to;) {
    const next = kernel(native.byteOffset, reference.byteOffset, pos, to, Math.min(to, (Math.floor((base + pos) / B) + 1) * B - base));
    if (next >= to) return;
    const end = Math.min(to, (Math.floor((base + next) / B) + 1) * B - base);
    views ??= makeViews(st, native, reference);
    jsBlock(st, views, next, end, base);
    pos = end;
  }
}

// ---- padding ---------------------------------------------------------------------------------

function isZeroUnit(st: KernelState, v: Views, i: number): boolean {
  const positiveOnly = st.signedZeroMustMatch;
  switch (st.family) {
    case 'f32':
    case 'c64': {
      const w = (v.i32n as Int32Array)[i] as number;
      return w === 0 || (!positiveOnly && w === (0x80000000 | 0));
    }
    case 'bf16':
    case 'f16': {
      const h = (v.u16n as Uint16Array)[i] as number;
      return h === 0 || (!positiveOnly && h === 0x8000);
    }
    case 'f64': {
      const w = v.i32n as Int32Array;
      const hi = w[2 * i + 1] as number;
      return w[2 * i] === 0 && (hi === 0 || (!positiveOnly && hi === (0x80000000 | 0)));
    }
    case 'int':
      return (v.intn as IntArray)[i] === 0;
    case 'int64':
      return (v.bign as BigInt64Array)[i] === 0n;
  }
}

interface UnitValue {
  readonly value: number | string;
  readonly bits: string;
  /** |value| for ranking (Infinity for NaN). */
  readonly magnitude: number;
}

function unitValue(st: KernelState, v: Views, native: boolean, i: number): UnitValue {
  switch (st.family) {
    case 'f32': {
      const value = ((native ? v.f32n : v.f32r) as Float32Array)[i] as number;
      return { value, bits: hex(((native ? v.i32n : v.i32r) as Int32Array)[i] as number, 8), magnitude: value !== value ? Infinity : Math.abs(value) };
    }
    case 'c64': {
      const f = (native ? v.f32n : v.f32r) as Float32Array;
      const w = (native ? v.i32n : v.i32r) as Int32Array;
      const re = f[i] as number;
      const im = f[i + 1] as number;
      const magnitude = re !== re || im !== im ? Infinity : Math.max(Math.abs(re), Math.abs(im));
      return { value: complexText(re, im), bits: `${hex(w[i] as number, 8)},${hex(w[i + 1] as number, 8)}`, magnitude };
    }
    case 'bf16':
    case 'f16': {
      const h = ((native ? v.u16n : v.u16r) as Uint16Array)[i] as number;
      const value = halfTable(st.family)[h] as number;
      return { value, bits: hex(h, 4), magnitude: value !== value ? Infinity : Math.abs(value) };
    }
    case 'f64': {
      const value = ((native ? v.f64n : v.f64r) as Float64Array)[i] as number;
      const w = (native ? v.i32n : v.i32r) as Int32Array;
      return { value, bits: hex64Words(w[2 * i + 1] as number, w[2 * i] as number), magnitude: value !== value ? Infinity : Math.abs(value) };
    }
    case 'int': {
      const array = (native ? v.intn : v.intr) as IntArray;
      const value = array[i] as number;
      return { value, bits: hex(value, array.BYTES_PER_ELEMENT * 2), magnitude: Math.abs(value) };
    }
    case 'int64': {
      const value = ((native ? v.bign : v.bigr) as BigInt64Array)[i] as bigint;
      return { value: value.toString(), bits: hex64(value), magnitude: Math.abs(Number(value)) };
    }
  }
}

/** Units [from, to) past the valid region under padding 'zero': native must hold zeros there. */
export function comparePadding(st: KernelState, native: Uint8Array, reference: Uint8Array, from: number, to: number, base: number): void {
  if (from >= to) return;
  st.padded += (to - from) / st.units;
  const views = makeViews(st, native, reference);
  const step = st.units;
  for (let i = from; i < to; i += step) {
    if (isZeroUnit(st, views, i) && (step === 1 || isZeroUnit(st, views, i + 1))) continue;
    const n = unitValue(st, views, true, i);
    if (st.wants(C_PADDING, n.magnitude)) {
      const r = unitValue(st, views, false, i);
      st.note((base + i) / step, C_PADDING, n.magnitude, 0, n.value, r.value, n.bits, r.bits);
    } else st.count(C_PADDING);
  }
}

/** Units past the valid region under padding 'any': counted as padded, never compared. */
export function skipPadding(st: KernelState, from: number, to: number): void {
  if (from < to) st.padded += (to - from) / st.units;
}

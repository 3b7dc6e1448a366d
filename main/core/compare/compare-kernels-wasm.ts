// The comparator's SIMD fast path, emitted as WebAssembly at load time (wasm-asm.ts) and run on
// data copied into the module's memory. It never classifies anything: it walks a range block by
// block and, for every block it can prove CLEAN, commits the block's statistics to the shared
// state; at the first block it cannot (bits differ under bit_exact, a NaN or an infinity under
// faithful, an element outside the tolerance, a signed-zero violation, or an element that could
// set a new record: worst element, required rel (= max rel)) it returns that block's start and
// the JS kernel (compare-kernels.ts) processes the block in full. Both paths compute the same
// numbers in the same order (see CANONICAL ORDER in compare-kernels.ts), so a result never depends
// on which path processed which block.
//
// Block grid: blocks are BLOCK_BYTES long on the absolute element index of the tensor (the caller
// passes the end of the first, possibly partial, block); a block whose length is not a multiple
// of the vector group is returned to JS as well (it only happens at the edges of a valid region).
import { assembleModule, FunctionBuilder, type Label, type Local } from './wasm-asm.ts';

/** Bytes per block (8 KiB: both sides of a block stay in L1 for the second pass). */
export const BLOCK_BYTES = 8192;

/** f64 slots of the shared state (at byte 0 of the memory; compare-kernels.ts uses the same layout). */
export const SLOT = {
  sumSq: 0,
  pairs: 1,
  maxAbs: 2,
  maxUlp: 3,
  /** The worst passing element's |n - r| (Infinity once a mismatch is the worst): no lane above it, no new worst. */
  thrD: 4,
  /** The smallest rel under which every pair so far passes: d > fl(requiredRel * |r|) is exactly a new record. */
  requiredRel: 5,
  abs: 8,
  rel: 9,
  /** Census groups: nan, posInf, negInf, negZero, subnormal, finite. */
  censusNative: 10,
  censusReference: 16,
  /** Deltas written by the census functions (nan, posInf, negInf, negZero, subnormal). */
  scratch: 24,
} as const;
export const STATE_SLOTS = 32;
/** Byte offset of the u32 ULP bound (pre-scaled: bf16 distances are counted << 16). */
export const MAX_ULP_BYTE = 512;
/** First byte the caller may use for data. */
export const DATA_START = 4096;

interface Masks16 {
  readonly exp: number;
  readonly lsb: number;
  readonly mant: number;
}
const MASKS16: Readonly<Record<'bf16' | 'f16', Masks16>> = {
  bf16: { exp: 0x7f80, lsb: 0x0080, mant: 0x007f },
  f16: { exp: 0x7c00, lsb: 0x0400, mant: 0x03ff },
};

/** Kernel signature: (nativePtr, referencePtr, start, end, firstBlockEnd) -> first unprocessed block start, or end. */
export type RangeKernel = (nativePtr: number, referencePtr: number, start: number, end: number, firstBlockEnd: number) => number;

// The WebAssembly JS API, typed locally (the project's lib settings do not include its types).
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
  readonly Memory: new (descriptor: { initial: number }) => WasmMemory;
}
const wasmApi: WasmApi | undefined = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

export interface WasmKernels {
  readonly memory: WasmMemory;
  readonly exact32: RangeKernel;
  readonly exact16bf: RangeKernel;
  readonly exact16h: RangeKernel;
  /** faithful f32 lanes, by variant: u = a ULP bound is set, z = signed zeros must match. */
  readonly faithful32: Readonly<Record<'plain' | 'u' | 'z' | 'uz', RangeKernel>>;
  readonly faithfulBf16: Readonly<Record<'plain' | 'u' | 'z' | 'uz', RangeKernel>>;
}

// ---- shared emitters -----------------------------------------------------------------------

const slotOffset = (slot: number): number => slot * 8;

/** slot += (f64 on the stack is computed by `value`). */
function addToSlot(f: FunctionBuilder, slot: number, value: () => void): void {
  f.i32(0).i32(0).mem('f64.load', slotOffset(slot));
  value();
  f.op('f64.add').mem('f64.store', slotOffset(slot));
}

/** slot = max(slot, value). Values are never NaN here. */
function maxToSlot(f: FunctionBuilder, slot: number, value: () => void): void {
  f.i32(0).i32(0).mem('f64.load', slotOffset(slot));
  value();
  f.op('f64.max').mem('f64.store', slotOffset(slot));
}

/** Adds the census scratch deltas to a group, and finite += len - (nan + inf). */
function addCensusDeltas(f: FunctionBuilder, group: number, len: Local): void {
  for (let k = 0; k < 5; k++) addToSlot(f, group + k, () => f.i32(0).mem('f64.load', slotOffset(SLOT.scratch + k)));
  addToSlot(f, group + 5, () => {
    f.get(len).op('f64.convert_i32_u');
    for (let k = 0; k < 3; k++)
      f.i32(0)
        .mem('f64.load', slotOffset(SLOT.scratch + k))
        .op('f64.sub');
  });
}

/** Sum of the four i32 lanes of the v128 on the stack, as f64 (lanes are small counts). */
function hsumI32(f: FunctionBuilder, vec: Local, tmp: Local): void {
  f.get(vec).set(tmp);
  f.get(tmp).extractLane('i32x4.extract_lane', 0);
  for (let lane = 1; lane < 4; lane++) f.get(tmp).extractLane('i32x4.extract_lane', lane).op('i32.add');
  f.op('f64.convert_i32_u');
}

/** Max of the two f64 lanes. */
function hmaxF64(f: FunctionBuilder, vec: Local): void {
  f.get(vec).extractLane('f64x2.extract_lane', 0).get(vec).extractLane('f64x2.extract_lane', 1).op('f64.max');
}

/** Unsigned max of the four u32 lanes, as f64. */
function hmaxU32(f: FunctionBuilder, vec: Local, shiftRight: number): void {
  const swapHalves = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];
  const swapPairs = [4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11];
  f.get(vec).get(vec).shuffle(swapHalves).get(vec).op('i32x4.max_u').set(vec);
  f.get(vec).get(vec).shuffle(swapPairs).get(vec).op('i32x4.max_u');
  if (shiftRight > 0) f.i32(shiftRight).op('i32x4.shr_u');
  f.extractLane('i32x4.extract_lane', 0).op('f64.convert_i32_u');
}

/** ptr = base + index * size. */
function elementPtr(f: FunctionBuilder, base: Local, index: Local, log2Size: number, into: Local): void {
  f.get(base).get(index).i32(log2Size).op('i32.shl').op('i32.add').set(into);
}

/** be = min(be + blockElems, end). */
function advanceBlock(f: FunctionBuilder, bs: Local, be: Local, end: Local, tmp: Local, blockElems: number): void {
  f.get(be).set(bs);
  f.get(be).i32(blockElems).op('i32.add').tee(tmp).get(end).get(tmp).get(end).op('i32.lt_u').op('select').set(be);
}

// ---- census functions: (ptr, endPtr) -> writes nan, posInf, negInf, negZero, subnormal deltas --

function census32(): FunctionBuilder {
  const f = new FunctionBuilder('census32', ['i32', 'i32'], []);
  const [ptr, endPtr] = f.params as [Local, Local];
  const v = f.local('v128');
  const abs = f.local('v128');
  const counters = [f.local('v128'), f.local('v128'), f.local('v128'), f.local('v128'), f.local('v128')] as const;
  const tmp = f.local('v128');
  const [nan, pinf, ninf, nzero, sub] = counters;
  for (const c of counters) f.v128i32(0).set(c);
  f.loop((top) => {
    f.get(ptr).mem('v128.load').tee(v).v128i32(0x7fffffff).op('v128.and').set(abs);
    f.get(nan).get(abs).v128i32(0x7f800000).op('i32x4.gt_u').op('i32x4.sub').set(nan);
    f.get(pinf).get(v).v128i32(0x7f800000).op('i32x4.eq').op('i32x4.sub').set(pinf);
    f.get(ninf)
      .get(v)
      .v128i32(0xff800000 | 0)
      .op('i32x4.eq')
      .op('i32x4.sub')
      .set(ninf);
    f.get(nzero)
      .get(v)
      .v128i32(0x80000000 | 0)
      .op('i32x4.eq')
      .op('i32x4.sub')
      .set(nzero);
    f.get(sub).get(abs).v128i32(1).op('i32x4.sub').v128i32(0x007fffff).op('i32x4.lt_u').op('i32x4.sub').set(sub);
    f.get(ptr).i32(16).op('i32.add').tee(ptr).get(endPtr).op('i32.lt_u').brIf(top);
  });
  counters.forEach((c, k) => {
    f.i32(0);
    hsumI32(f, c, tmp);
    f.mem('f64.store', slotOffset(SLOT.scratch + k));
  });
  return f;
}

function census16(kind: 'bf16' | 'f16'): FunctionBuilder {
  const m = MASKS16[kind];
  const f = new FunctionBuilder(`census16_${kind}`, ['i32', 'i32'], []);
  const [ptr, endPtr] = f.params as [Local, Local];
  const v = f.local('v128');
  const abs = f.local('v128');
  const counters = [f.local('v128'), f.local('v128'), f.local('v128'), f.local('v128'), f.local('v128')] as const;
  const tmp = f.local('v128');
  const [nan, pinf, ninf, nzero, sub] = counters;
  for (const c of counters) f.v128i32(0).set(c);
  // 16-bit lane counters: a block holds at most 4096 halves, 512 per lane, far below 65535.
  f.loop((top) => {
    f.get(ptr).mem('v128.load').tee(v).v128i16(0x7fff).op('v128.and').set(abs);
    f.get(nan).get(abs).v128i16(m.exp).op('i16x8.gt_u').op('i16x8.sub').set(nan);
    f.get(pinf).get(v).v128i16(m.exp).op('i16x8.eq').op('i16x8.sub').set(pinf);
    f.get(ninf)
      .get(v)
      .v128i16(0x8000 | m.exp)
      .op('i16x8.eq')
      .op('i16x8.sub')
      .set(ninf);
    f.get(nzero).get(v).v128i16(0x8000).op('i16x8.eq').op('i16x8.sub').set(nzero);
    f.get(sub).get(abs).v128i16(1).op('i16x8.sub').v128i16(m.mant).op('i16x8.lt_u').op('i16x8.sub').set(sub);
    f.get(ptr).i32(16).op('i32.add').tee(ptr).get(endPtr).op('i32.lt_u').brIf(top);
  });
  counters.forEach((c, k) => {
    f.get(c).op('i32x4.extadd_pairwise_i16x8_u').set(c);
    f.i32(0);
    hsumI32(f, c, tmp);
    f.mem('f64.store', slotOffset(SLOT.scratch + k));
  });
  return f;
}

// ---- exact kernels ---------------------------------------------------------------------------

interface FamilySpec {
  readonly log2Size: number; // bytes per lane element: 4 or 2
  readonly group: number; // elements per v128
  readonly blockElems: number;
  /** Pushes the screen value of the v128 in `v`: 0 = NaN/inf, `low` = zero/subnormal, larger = normal. */
  readonly screen: (f: FunctionBuilder, v: Local) => void;
  readonly screenInit: (f: FunctionBuilder) => void;
  readonly screenMin: (f: FunctionBuilder) => void; // (a, b) -> min
  /** Pushes an i32 that is nonzero when some lane of `smin` is <= low (any special value). */
  readonly anySpecial: (f: FunctionBuilder, smin: Local) => void;
  /** Pushes an i32 that is nonzero when some lane of `smin` is 0 (a NaN or an infinity). */
  readonly anyNonFinite: (f: FunctionBuilder, smin: Local) => void;
  readonly censusIndex: number;
}

function spec32(censusIndex: number): FamilySpec {
  return {
    log2Size: 2,
    group: 4,
    blockElems: BLOCK_BYTES / 4,
    screen: (f, v) => void f.get(v).v128i32(0x00800000).op('i32x4.add').v128i32(0x7f800000).op('v128.and'),
    screenInit: (f) => void f.v128i32(0x7f800000),
    screenMin: (f) => void f.op('i32x4.min_u'),
    anySpecial: (f, smin) => void f.get(smin).v128i32(0x00800000).op('i32x4.le_u').op('v128.any_true'),
    anyNonFinite: (f, smin) => void f.get(smin).v128i32(0).op('i32x4.eq').op('v128.any_true'),
    censusIndex,
  };
}

function spec16(kind: 'bf16' | 'f16', censusIndex: number): FamilySpec {
  const m = MASKS16[kind];
  return {
    log2Size: 1,
    group: 8,
    blockElems: BLOCK_BYTES / 2,
    screen: (f, v) => void f.get(v).v128i16(m.lsb).op('i16x8.add').v128i16(m.exp).op('v128.and'),
    screenInit: (f) => void f.v128i16(m.exp),
    screenMin: (f) => void f.op('i16x8.min_u'),
    anySpecial: (f, smin) => void f.get(smin).v128i16(m.lsb).op('i16x8.le_u').op('v128.any_true'),
    anyNonFinite: (f, smin) => void f.get(smin).v128i16(0).op('i16x8.eq').op('v128.any_true'),
    censusIndex,
  };
}

interface BlockLocals {
  readonly nPtr: Local;
  readonly rPtr: Local;
  readonly start: Local;
  readonly end: Local;
  readonly firstEnd: Local;
  readonly bs: Local;
  readonly be: Local;
  readonly len: Local;
  readonly p: Local;
  readonly q: Local;
  readonly pe: Local;
  readonly tmp: Local;
}

function blockLocals(f: FunctionBuilder): BlockLocals {
  const [nPtr, rPtr, start, end, firstEnd] = f.params as [Local, Local, Local, Local, Local];
  return {
    nPtr,
    rPtr,
    start,
    end,
    firstEnd,
    bs: f.local('i32'),
    be: f.local('i32'),
    len: f.local('i32'),
    p: f.local('i32'),
    q: f.local('i32'),
    pe: f.local('i32'),
    tmp: f.local('i32'),
  };
}

/**
 * The block loop shared by every kernel: exits with `end` when done, returns a block's start
 * when it is partial; `body` handles one full-length block (pointers set) and may return early.
 */
function blockLoop(f: FunctionBuilder, spec: FamilySpec, l: BlockLocals, body: () => void): void {
  f.get(l.start).set(l.bs).get(l.firstEnd).set(l.be);
  f.block((done) => {
    f.loop((top) => {
      f.get(l.bs).get(l.end).op('i32.ge_u').brIf(done);
      f.get(l.be)
        .get(l.bs)
        .op('i32.sub')
        .tee(l.len)
        .i32(spec.group - 1)
        .op('i32.and')
        .if(() => void f.get(l.bs).op('return'));
      elementPtr(f, l.nPtr, l.bs, spec.log2Size, l.p);
      elementPtr(f, l.rPtr, l.bs, spec.log2Size, l.q);
      elementPtr(f, l.nPtr, l.be, spec.log2Size, l.pe);
      body();
      advanceBlock(f, l.bs, l.be, l.end, l.tmp, spec.blockElems);
      f.br(top);
    });
  });
  f.get(l.end);
}

/**
 * Commits a block whose two sides are bit-identical: the census of the native side counts for
 * both, finite pairs += len - non-finite. Uses the screen minimum to skip the census loop.
 */
function commitIdentical(f: FunctionBuilder, spec: FamilySpec, l: BlockLocals, smin: Local): void {
  spec.anySpecial(f, smin);
  f.if(
    () => {
      f.get(l.p).get(l.pe).call(spec.censusIndex);
      addCensusDeltas(f, SLOT.censusNative, l.len);
      addCensusDeltas(f, SLOT.censusReference, l.len);
      addToSlot(f, SLOT.pairs, () => {
        f.get(l.len).op('f64.convert_i32_u');
        for (let k = 0; k < 3; k++)
          f.i32(0)
            .mem('f64.load', slotOffset(SLOT.scratch + k))
            .op('f64.sub');
      });
    },
    () => {
      addToSlot(f, SLOT.censusNative + 5, () => f.get(l.len).op('f64.convert_i32_u'));
      addToSlot(f, SLOT.censusReference + 5, () => f.get(l.len).op('f64.convert_i32_u'));
      addToSlot(f, SLOT.pairs, () => f.get(l.len).op('f64.convert_i32_u'));
    },
  );
}

function exactKernel(name: string, spec: FamilySpec): FunctionBuilder {
  const f = new FunctionBuilder(name, ['i32', 'i32', 'i32', 'i32', 'i32'], ['i32']);
  const l = blockLocals(f);
  const x = f.local('v128');
  const smin = f.local('v128');
  const a = f.local('v128');
  const pp = f.local('i32');
  const qq = f.local('i32');
  blockLoop(f, spec, l, () => {
    f.v128i32(0).set(x);
    spec.screenInit(f);
    f.set(smin).get(l.p).set(pp).get(l.q).set(qq);
    f.loop((v) => {
      f.get(pp).mem('v128.load').tee(a).get(qq).mem('v128.load').op('v128.xor').get(x).op('v128.or').set(x);
      f.get(smin);
      spec.screen(f, a);
      spec.screenMin(f);
      f.set(smin);
      f.get(qq).i32(16).op('i32.add').set(qq);
      f.get(pp).i32(16).op('i32.add').tee(pp).get(l.pe).op('i32.lt_u').brIf(v);
    });
    f.get(x)
      .op('v128.any_true')
      .if(() => void f.get(l.bs).op('return'));
    commitIdentical(f, spec, l, smin);
  });
  return f;
}

// ---- faithful kernels (f32 lanes; bf16 widened to f32 bit patterns) --------------------------

interface FaithfulVariant {
  readonly ulp: boolean;
  readonly signedZero: boolean;
}

function faithfulKernel(name: string, family: 'f32' | 'bf16', spec: FamilySpec, variant: FaithfulVariant): FunctionBuilder {
  const f = new FunctionBuilder(name, ['i32', 'i32', 'i32', 'i32', 'i32'], ['i32']);
  const l = blockLocals(f);
  const v = (): Local => f.local('v128');
  const absV = v(),
    relV = v(),
    reqRelV = v(),
    ulpV = v();
  const thrD = f.local('f64');
  const a = v(),
    b = v(),
    sminN = v(),
    sminR = v();
  const a16 = v(),
    b16 = v();
  const ka = v(),
    kb = v(),
    u = v(),
    umax = v(),
    ok = v();
  const acc0 = v(),
    acc1 = v(),
    mD = v(),
    mRel = v();
  const rl = v(),
    dl = v(),
    arl = v(),
    cl = v(),
    okl = v(),
    okh = v();
  const pp = f.local('i32');
  const qq = f.local('i32');

  f.i32(0).mem('f64.load', slotOffset(SLOT.abs)).op('f64x2.splat').set(absV);
  f.i32(0).mem('f64.load', slotOffset(SLOT.rel)).op('f64x2.splat').set(relV);
  f.i32(0).mem('f64.load', slotOffset(SLOT.requiredRel)).op('f64x2.splat').set(reqRelV);
  f.i32(0).mem('f64.load', slotOffset(SLOT.thrD)).set(thrD);
  f.i32(0).mem('i32.load', MAX_ULP_BYTE).op('i32x4.splat').set(ulpV);

  const key = (w: Local, into: Local): void => {
    // k = (w ^ (s >>> 1)) - s with s = w >> 31: a monotonic integer key, -0 and +0 both 0.
    f.get(w).get(w).i32(31).op('i32x4.shr_s').i32(1).op('i32x4.shr_u').op('v128.xor');
    f.get(w).i32(31).op('i32x4.shr_s').op('i32x4.sub').set(into);
  };

  /** One f64x2 half: lanes of `a`/`b` already promoted by the caller's shuffle choice. */
  const half = (nLanes: () => void, rLanes: () => void, acc: Local, okOut: Local): void => {
    rLanes();
    f.op('f64x2.promote_low_f32x4').set(rl);
    nLanes();
    f.op('f64x2.promote_low_f32x4').get(rl).op('f64x2.sub').op('f64x2.abs').set(dl);
    f.get(rl).op('f64x2.abs').set(arl);
    f.get(relV).get(arl).op('f64x2.mul').set(cl);
    f.get(dl).get(absV).get(cl).op('f64x2.add').op('f64x2.le').set(okOut);
    f.get(acc).get(dl).get(dl).op('f64x2.mul').op('f64x2.add').set(acc);
    f.get(mD).get(dl).op('f64x2.pmax').set(mD);
    // d - fl(requiredRel * |r|) > 0 exactly when the pair needs a larger rel (a NaN from
    // Infinity * 0 is ignored by pmax, as JS ignores it).
    f.get(mRel).get(dl).get(reqRelV).get(arl).op('f64x2.mul').op('f64x2.sub').op('f64x2.pmax').set(mRel);
  };
  const high = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];

  /** The per-vector work on four f32 bit patterns in `a` and `b`. */
  const lanes4 = (): void => {
    key(a, ka);
    key(b, kb);
    f.get(ka).get(kb).op('i32x4.sub').get(kb).get(ka).op('i32x4.sub').get(ka).get(kb).op('i32x4.gt_s').op('v128.bitselect').set(u);
    f.get(umax).get(u).op('i32x4.max_u').set(umax);
    half(
      () => void f.get(a),
      () => void f.get(b),
      acc0,
      okl,
    );
    half(
      () => void f.get(a).get(a).shuffle(high),
      () => void f.get(b).get(b).shuffle(high),
      acc1,
      okh,
    );
    f.get(okl).get(okh).shuffle([0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]);
    if (variant.ulp) f.get(u).get(ulpV).op('i32x4.le_u').op('v128.or');
    if (variant.signedZero) {
      // both zero with different signs: (a ^ b) == sign bit and (a & 0x7fffffff) == 0
      f.get(a)
        .get(b)
        .op('v128.xor')
        .v128i32(0x80000000 | 0)
        .op('i32x4.eq');
      f.get(a).v128i32(0x7fffffff).op('v128.and').v128i32(0).op('i32x4.eq').op('v128.and');
      f.op('v128.andnot');
    }
    f.get(ok).op('v128.and').set(ok);
  };

  blockLoop(f, spec, l, () => {
    f.block((committed: Label) => {
      // Pass 1: stop at the first differing vector; a fully identical block commits like exact.
      f.block((differs: Label) => {
        spec.screenInit(f);
        f.set(sminN).get(l.p).set(pp).get(l.q).set(qq);
        f.loop((top) => {
          f.get(pp).mem('v128.load').tee(a).get(qq).mem('v128.load').op('v128.xor').op('v128.any_true').brIf(differs);
          f.get(sminN);
          spec.screen(f, a);
          spec.screenMin(f);
          f.set(sminN);
          f.get(qq).i32(16).op('i32.add').set(qq);
          f.get(pp).i32(16).op('i32.add').tee(pp).get(l.pe).op('i32.lt_u').brIf(top);
        });
        commitIdentical(f, spec, l, sminN);
        f.br(committed);
      });

      // Pass 2: the arithmetic, with block-local accumulators committed only if the block is clean.
      spec.screenInit(f);
      f.set(sminN);
      spec.screenInit(f);
      f.set(sminR);
      f.v128i32(0).set(acc0).v128i32(0).set(acc1).v128i32(0).set(mD).v128i32(0).set(umax).v128i32(-1).set(ok);
      f.f64(-Infinity).op('f64x2.splat').set(mRel);
      f.get(l.p).set(pp).get(l.q).set(qq);
      f.loop((top) => {
        if (family === 'f32') {
          f.get(pp).mem('v128.load').set(a).get(qq).mem('v128.load').set(b);
          f.get(sminN);
          spec.screen(f, a);
          spec.screenMin(f);
          f.set(sminN).get(sminR);
          spec.screen(f, b);
          spec.screenMin(f);
          f.set(sminR);
          lanes4();
        } else {
          f.get(pp).mem('v128.load').set(a16).get(qq).mem('v128.load').set(b16);
          f.get(sminN);
          spec.screen(f, a16);
          spec.screenMin(f);
          f.set(sminN).get(sminR);
          spec.screen(f, b16);
          spec.screenMin(f);
          f.set(sminR);
          f.get(a16).op('i32x4.extend_low_i16x8_u').i32(16).op('i32x4.shl').set(a);
          f.get(b16).op('i32x4.extend_low_i16x8_u').i32(16).op('i32x4.shl').set(b);
          lanes4();
          f.get(a16).op('i32x4.extend_high_i16x8_u').i32(16).op('i32x4.shl').set(a);
          f.get(b16).op('i32x4.extend_high_i16x8_u').i32(16).op('i32x4.shl').set(b);
          lanes4();
        }
        f.get(qq).i32(16).op('i32.add').set(qq);
        f.get(pp).i32(16).op('i32.add').tee(pp).get(l.pe).op('i32.lt_u').brIf(top);
      });

      // Dirty: hand the block to JS.
      const dirty = (): void => void f.if(() => void f.get(l.bs).op('return'));
      spec.anyNonFinite(f, sminN);
      dirty();
      spec.anyNonFinite(f, sminR);
      dirty();
      f.get(ok).op('i32x4.all_true').op('i32.eqz');
      dirty();
      hmaxF64(f, mD);
      f.get(thrD).op('f64.gt');
      dirty();
      hmaxF64(f, mRel);
      f.f64(0).op('f64.gt');
      dirty();

      // Clean: commit.
      addToSlot(f, SLOT.sumSq, () => {
        f.get(acc0).get(acc1).op('f64x2.add').set(acc0);
        f.get(acc0).extractLane('f64x2.extract_lane', 0).get(acc0).extractLane('f64x2.extract_lane', 1).op('f64.add');
      });
      addToSlot(f, SLOT.pairs, () => void f.get(l.len).op('f64.convert_i32_u'));
      maxToSlot(f, SLOT.maxAbs, () => hmaxF64(f, mD));
      maxToSlot(f, SLOT.maxUlp, () => hmaxU32(f, umax, family === 'bf16' ? 16 : 0));
      const censusSide = (smin: Local, start: Local, group: number): void => {
        spec.anySpecial(f, smin);
        f.if(
          () => {
            f.get(start).get(start).get(l.len).i32(spec.log2Size).op('i32.shl').op('i32.add').call(spec.censusIndex);
            addCensusDeltas(f, group, l.len);
          },
          () => addToSlot(f, group + 5, () => void f.get(l.len).op('f64.convert_i32_u')),
        );
      };
      censusSide(sminN, l.p, SLOT.censusNative);
      censusSide(sminR, l.q, SLOT.censusReference);
    });
  });
  return f;
}

// ---- module ----------------------------------------------------------------------------------

let compiled: WasmModule | null | undefined;

function buildModule(api: WasmApi): WasmModule {
  // Function indices: the order of this list.
  const census = [census32(), census16('bf16'), census16('f16')];
  const s32 = spec32(0);
  const sbf = spec16('bf16', 1);
  const sh = spec16('f16', 2);
  const variants: Array<['plain' | 'u' | 'z' | 'uz', FaithfulVariant]> = [
    ['plain', { ulp: false, signedZero: false }],
    ['u', { ulp: true, signedZero: false }],
    ['z', { ulp: false, signedZero: true }],
    ['uz', { ulp: true, signedZero: true }],
  ];
  const functions = [
    ...census,
    exactKernel('exact32', s32),
    exactKernel('exact16bf', sbf),
    exactKernel('exact16h', sh),
    ...variants.map(([key, variant]) => faithfulKernel(`faithful32_${key}`, 'f32', s32, variant)),
    ...variants.map(([key, variant]) => faithfulKernel(`faithfulBf16_${key}`, 'bf16', sbf, variant)),
  ];
  return new api.Module(assembleModule(functions, 1));
}

/** The compiled module, or null when this runtime cannot compile it (no wasm SIMD). */
export function kernelModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = wasmApi === undefined ? null : buildModule(wasmApi);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** A fresh instance over a fresh memory of at least `bytes` bytes (null without wasm SIMD). */
export function instantiateKernels(bytes: number): WasmKernels | null {
  const module = kernelModule();
  if (module === null || wasmApi === undefined) return null;
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  const memory = new wasmApi.Memory({ initial: pages });
  const instance = new wasmApi.Instance(module, { env: { memory } });
  const fn = (name: string): RangeKernel => {
    const value = instance.exports[name];
    if (typeof value !== 'function') throw new Error(`internal: kernel ${name} missing`);
    return value as RangeKernel;
  };
  return {
    memory,
    exact32: fn('exact32'),
    exact16bf: fn('exact16bf'),
    exact16h: fn('exact16h'),
    faithful32: { plain: fn('faithful32_plain'), u: fn('faithful32_u'), z: fn('faithful32_z'), uz: fn('faithful32_uz') },
    faithfulBf16: { plain: fn('faithfulBf16_plain'), u: fn('faithfulBf16_u'), z: fn('faithfulBf16_z'), uz: fn('faithfulBf16_uz') },
  };
}

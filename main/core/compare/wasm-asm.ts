// A minimal WebAssembly binary encoder: just enough to emit the comparator's SIMD kernels
// (compare-kernels-wasm.ts) at load time, with no toolchain and no dependency. One module,
// one imported memory, functions with typed params/locals, structured control flow with named
// labels, and the scalar and 128-bit SIMD instructions the kernels use.
// Opcodes: WebAssembly core spec 2.0, sections 5.4 (instructions) and 5.4.8 (vector, prefix 0xFD).

export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128';

const VALTYPE: Readonly<Record<ValType, number>> = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c, v128: 0x7b };

/** Opcodes without immediates: one byte, or 0xFD + LEB128 sub-opcode for SIMD. */
const PLAIN: Readonly<Record<string, number>> = {
  unreachable: 0x00,
  nop: 0x01,
  return: 0x0f,
  drop: 0x1a,
  select: 0x1b,
  'i32.eqz': 0x45,
  'i32.eq': 0x46,
  'i32.ne': 0x47,
  'i32.lt_s': 0x48,
  'i32.lt_u': 0x49,
  'i32.gt_s': 0x4a,
  'i32.gt_u': 0x4b,
  'i32.le_s': 0x4c,
  'i32.le_u': 0x4d,
  'i32.ge_s': 0x4e,
  'i32.ge_u': 0x4f,
  'f64.eq': 0x61,
  'f64.ne': 0x62,
  'f64.lt': 0x63,
  'f64.gt': 0x64,
  'f64.le': 0x65,
  'f64.ge': 0x66,
  'i32.add': 0x6a,
  'i32.sub': 0x6b,
  'i32.mul': 0x6c,
  'i32.and': 0x71,
  'i32.or': 0x72,
  'i32.xor': 0x73,
  'i32.shl': 0x74,
  'i32.shr_s': 0x75,
  'i32.shr_u': 0x76,
  'f64.abs': 0x99,
  'f64.add': 0xa0,
  'f64.sub': 0xa1,
  'f64.mul': 0xa2,
  'f64.max': 0xa5,
  'f64.convert_i32_s': 0xb7,
  'f64.convert_i32_u': 0xb8,
};

const SIMD: Readonly<Record<string, number>> = {
  'i8x16.shuffle': 0x0d, // + 16 lane bytes
  'i16x8.splat': 0x10,
  'i32x4.splat': 0x11,
  'f64x2.splat': 0x14,
  'i32x4.extract_lane': 0x1b, // + lane byte
  'f64x2.extract_lane': 0x21, // + lane byte
  'i16x8.eq': 0x2d,
  'i16x8.lt_u': 0x30,
  'i16x8.gt_u': 0x32,
  'i16x8.le_u': 0x34,
  'i32x4.eq': 0x37,
  'i32x4.lt_u': 0x3a,
  'i32x4.gt_s': 0x3b,
  'i32x4.gt_u': 0x3c,
  'i32x4.le_u': 0x3e,
  'f64x2.le': 0x4b,
  'v128.not': 0x4d,
  'v128.and': 0x4e,
  'v128.andnot': 0x4f,
  'v128.or': 0x50,
  'v128.xor': 0x51,
  'v128.bitselect': 0x52,
  'v128.any_true': 0x53,
  'f64x2.promote_low_f32x4': 0x5f,
  'i32x4.extadd_pairwise_i16x8_u': 0x7f,
  'i16x8.add': 0x8e,
  'i16x8.sub': 0x91,
  'i16x8.min_u': 0x97,
  'i32x4.all_true': 0xa3,
  'i32x4.extend_low_i16x8_u': 0xa9,
  'i32x4.extend_high_i16x8_u': 0xaa,
  'i32x4.shl': 0xab,
  'i32x4.shr_s': 0xac,
  'i32x4.shr_u': 0xad,
  'i32x4.add': 0xae,
  'i32x4.sub': 0xb1,
  'i32x4.min_u': 0xb7,
  'i32x4.max_u': 0xb9,
  'f64x2.abs': 0xec,
  'f64x2.add': 0xf0,
  'f64x2.sub': 0xf1,
  'f64x2.mul': 0xf2,
  'f64x2.pmax': 0xf7,
};

/** Memory instructions: opcode bytes and natural alignment (log2 bytes). */
const MEMORY: Readonly<Record<string, { readonly bytes: readonly number[]; readonly align: number }>> = {
  'i32.load': { bytes: [0x28], align: 2 },
  'f64.load': { bytes: [0x2b], align: 3 },
  'i32.load16_u': { bytes: [0x2f], align: 1 },
  'i32.store': { bytes: [0x36], align: 2 },
  'f64.store': { bytes: [0x39], align: 3 },
  'v128.load': { bytes: [0xfd, 0x00], align: 4 },
  'v128.load64_zero': { bytes: [0xfd, 0x5d], align: 3 },
  'v128.store': { bytes: [0xfd, 0x0b], align: 4 },
};

export type PlainOp = keyof typeof PLAIN;

function unsignedLeb(value: number, out: number[]): void {
  let rest = value >>> 0;
  do {
    const byte = rest & 0x7f;
    rest >>>= 7;
    out.push(rest !== 0 ? byte | 0x80 : byte);
  } while (rest !== 0);
}

function signedLeb(value: number, out: number[]): void {
  let rest = value | 0;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    const done = (rest === 0 && (byte & 0x40) === 0) || (rest === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return;
  }
}

function encodeString(text: string, out: number[]): void {
  const bytes = new TextEncoder().encode(text);
  unsignedLeb(bytes.length, out);
  for (const byte of bytes) out.push(byte);
}

/** A local (or parameter) of a function being built. */
export interface Local {
  readonly index: number;
  readonly type: ValType;
}

/** A label of an enclosing block or loop, for br / br_if. */
export interface Label {
  readonly depth: number;
}

export class FunctionBuilder {
  readonly params: readonly Local[];
  private readonly extraLocals: ValType[] = [];
  private readonly body: number[] = [];
  private depth = 0;

  constructor(
    readonly name: string,
    paramTypes: readonly ValType[],
    readonly results: readonly ValType[],
  ) {
    this.params = paramTypes.map((type, index) => ({ index, type }));
  }

  local(type: ValType): Local {
    this.extraLocals.push(type);
    return { index: this.params.length + this.extraLocals.length - 1, type };
  }

  get(local: Local): this {
    return this.raw(0x20).uleb(local.index);
  }

  set(local: Local): this {
    return this.raw(0x21).uleb(local.index);
  }

  tee(local: Local): this {
    return this.raw(0x22).uleb(local.index);
  }

  i32(value: number): this {
    this.raw(0x41);
    signedLeb(value, this.body);
    return this;
  }

  f64(value: number): this {
    this.raw(0x44);
    const bytes = new Uint8Array(new Float64Array([value]).buffer);
    for (const byte of bytes) this.body.push(byte);
    return this;
  }

  /** v128.const from four 32-bit lanes. */
  v128i32(a: number, b = a, c = a, d = a): this {
    this.raw(0xfd).uleb(0x0c);
    const bytes = new Uint8Array(new Int32Array([a, b, c, d]).buffer);
    for (const byte of bytes) this.body.push(byte);
    return this;
  }

  /** v128.const from eight 16-bit lanes (all equal). */
  v128i16(value: number): this {
    this.raw(0xfd).uleb(0x0c);
    const bytes = new Uint8Array(new Uint16Array(8).fill(value & 0xffff).buffer);
    for (const byte of bytes) this.body.push(byte);
    return this;
  }

  op(name: PlainOp | keyof typeof SIMD): this {
    const plain = PLAIN[name];
    if (plain !== undefined) return this.raw(plain);
    const simd = SIMD[name];
    if (simd === undefined) throw new Error(`wasm-asm: unknown op ${name}`);
    if (name === 'i8x16.shuffle' || name.endsWith('extract_lane')) throw new Error(`wasm-asm: ${name} takes an immediate`);
    return this.raw(0xfd).uleb(simd);
  }

  shuffle(lanes: readonly number[]): this {
    if (lanes.length !== 16 || lanes.some((lane) => lane < 0 || lane > 31)) throw new Error('wasm-asm: a shuffle takes 16 lanes in 0..31');
    this.raw(0xfd).uleb(SIMD['i8x16.shuffle'] as number);
    for (const lane of lanes) this.body.push(lane);
    return this;
  }

  extractLane(name: 'i32x4.extract_lane' | 'f64x2.extract_lane', lane: number): this {
    this.raw(0xfd).uleb(SIMD[name] as number);
    this.body.push(lane);
    return this;
  }

  /** A load or store with a constant byte offset added to the address on the stack. */
  mem(name: keyof typeof MEMORY, offset = 0): this {
    const spec = MEMORY[name];
    if (spec === undefined) throw new Error(`wasm-asm: unknown memory op ${name}`);
    for (const byte of spec.bytes) this.body.push(byte);
    unsignedLeb(spec.align, this.body);
    unsignedLeb(offset, this.body);
    return this;
  }

  /** block ... end; `inner` receives the label to branch out of the block. */
  block(inner: (exit: Label) => void): this {
    this.raw(0x02, 0x40);
    this.depth += 1;
    inner({ depth: this.depth });
    this.depth -= 1;
    return this.raw(0x0b);
  }

  /** loop ... end; `inner` receives the label to branch back to the top. */
  loop(inner: (top: Label) => void): this {
    this.raw(0x03, 0x40);
    this.depth += 1;
    inner({ depth: this.depth });
    this.depth -= 1;
    return this.raw(0x0b);
  }

  /** if ... (else ...) end, consuming an i32 condition. */
  if(then: () => void, otherwise?: () => void): this {
    this.raw(0x04, 0x40);
    this.depth += 1;
    then();
    if (otherwise !== undefined) {
      this.raw(0x05);
      otherwise();
    }
    this.depth -= 1;
    return this.raw(0x0b);
  }

  call(functionIndex: number): this {
    return this.raw(0x10).uleb(functionIndex);
  }

  br(label: Label): this {
    return this.raw(0x0c).uleb(this.depth - label.depth);
  }

  brIf(label: Label): this {
    return this.raw(0x0d).uleb(this.depth - label.depth);
  }

  /** The function's code entry (locals + body + end). */
  encode(): number[] {
    const out: number[] = [];
    // Locals: run-length groups of equal types.
    const groups: Array<{ type: ValType; count: number }> = [];
    for (const type of this.extraLocals) {
      const last = groups[groups.length - 1];
      if (last !== undefined && last.type === type) last.count += 1;
      else groups.push({ type, count: 1 });
    }
    unsignedLeb(groups.length, out);
    for (const group of groups) {
      unsignedLeb(group.count, out);
      out.push(VALTYPE[group.type]);
    }
    out.push(...this.body, 0x0b);
    const sized: number[] = [];
    unsignedLeb(out.length, sized);
    return sized.concat(out);
  }

  private raw(...bytes: number[]): this {
    for (const byte of bytes) this.body.push(byte);
    return this;
  }

  private uleb(value: number): this {
    unsignedLeb(value, this.body);
    return this;
  }
}

function section(id: number, content: number[], out: number[]): void {
  out.push(id);
  unsignedLeb(content.length, out);
  for (const byte of content) out.push(byte);
}

/** A module importing one memory as env.memory and exporting every function by name. */
export function assembleModule(functions: readonly FunctionBuilder[], minimumPages: number): Uint8Array {
  const out: number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

  const types: number[] = [];
  unsignedLeb(functions.length, types);
  for (const fn of functions) {
    types.push(0x60);
    unsignedLeb(fn.params.length, types);
    for (const param of fn.params) types.push(VALTYPE[param.type]);
    unsignedLeb(fn.results.length, types);
    for (const result of fn.results) types.push(VALTYPE[result]);
  }
  section(1, types, out);

  const imports: number[] = [];
  unsignedLeb(1, imports);
  encodeString('env', imports);
  encodeString('memory', imports);
  imports.push(0x02, 0x00); // memory, limits without a maximum
  unsignedLeb(minimumPages, imports);
  section(2, imports, out);

  const funcs: number[] = [];
  unsignedLeb(functions.length, funcs);
  functions.forEach((_, index) => unsignedLeb(index, funcs));
  section(3, funcs, out);

  const exports: number[] = [];
  unsignedLeb(functions.length, exports);
  functions.forEach((fn, index) => {
    encodeString(fn.name, exports);
    exports.push(0x00);
    unsignedLeb(index, exports);
  });
  section(7, exports, out);

  const code: number[] = [];
  unsignedLeb(functions.length, code);
  for (const fn of functions) code.push(...fn.encode());
  section(10, code, out);

  return Uint8Array.from(out);
}

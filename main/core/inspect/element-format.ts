// One element as the bit inspector and the special-values list show it, from its raw
// little-endian bytes: the decimal text (floats: the shortest text that reads back to the same
// value in the element's OWN format, so 0.1f is "0.1", not the double "0.10000000149011612";
// integers exactly, 64-bit ones through BigInt), the raw bits in hex, the IEEE fields and the
// class.
//
// C64 (decided here): an element is one re/im pair of float32; its text is "re+imj" (the
// comparator's complexText form, each component shortest), its hex and each field string list
// both components "re,im" (the comparator's witness form for bits), and its class is the most
// special of the two (nan, then inf, then normal, subnormal, zero), so a NaN imaginary part is
// never hidden behind a finite real part.
import { DTYPE_SIZE, type DType } from '../bundle/dtype.ts';
import type { ElementBits } from './view-values.ts';
import { halfTable } from '../compare/compare-kernels.ts';

type FloatClass = 'zero' | 'subnormal' | 'normal' | 'inf' | 'nan';

interface NarrowFormat {
  readonly width: 16 | 32;
  readonly exponentBits: number;
  readonly mantissaBits: number;
  readonly bias: number;
  /** Value of a non-negative bit pattern. */
  readonly value: (bits: number) => number;
}

const f32Scratch = new Float32Array(1);
const u32OfF32 = new Uint32Array(f32Scratch.buffer);

function f32Value(bits: number): number {
  u32OfF32[0] = bits;
  return f32Scratch[0] as number;
}

const NARROW: Readonly<Partial<Record<DType, NarrowFormat>>> = {
  F32: { width: 32, exponentBits: 8, mantissaBits: 23, bias: 127, value: f32Value },
  BF16: { width: 16, exponentBits: 8, mantissaBits: 7, bias: 127, value: (bits) => halfTable('bf16')[bits] as number },
  F16: { width: 16, exponentBits: 5, mantissaBits: 10, bias: 15, value: (bits) => halfTable('f16')[bits] as number },
};

/** Raw bits of bytes [offset, offset + size) as "0x..." (most significant byte first). */
export function hexOf(bytes: Uint8Array, offset: number, size: number): string {
  let text = '';
  for (let b = size - 1; b >= 0; b--) text += (bytes[offset + b] as number).toString(16).padStart(2, '0');
  return `0x${text}`;
}

const bin = (value: number, width: number): string => (value >>> 0).toString(2).padStart(width, '0');

function classOf(exponent: number, exponentMax: number, mantissaZero: boolean): FloatClass {
  if (exponent === exponentMax) return mantissaZero ? 'inf' : 'nan';
  if (exponent === 0) return mantissaZero ? 'zero' : 'subnormal';
  return 'normal';
}

/**
 * The shortest decimal that rounds (to nearest, ties to even) back to this pattern of a 16- or
 * 32-bit format: the candidates toPrecision(1..17) are tested against the pattern's rounding
 * interval, whose ends are exact in double (the neighbours have at most 24 significant bits).
 */
function shortestNarrow(format: NarrowFormat, bits: number): string {
  const signMask = format.width === 32 ? 0x80000000 : 0x8000;
  const negative = (bits & signMask) !== 0;
  const magnitude = (bits & (signMask - 1)) >>> 0;
  const sign = negative ? '-' : '';
  const x = format.value(magnitude);
  if (x !== x) return 'NaN';
  if (x === Infinity) return `${sign}Infinity`;
  if (x === 0) return `${sign}0`;
  const previous = format.value(magnitude - 1);
  const next = format.value(magnitude + 1);
  const low = (previous + x) / 2;
  // Above the largest finite value the rounding boundary is half a gap further (then infinity).
  const high = next === Infinity ? x + (x - previous) / 2 : (x + next) / 2;
  const even = (magnitude & 1) === 0;
  for (let digits = 1; digits <= 17; digits++) {
    const candidate = Number(x.toPrecision(digits));
    if ((candidate > low && candidate < high) || (even && (candidate === low || candidate === high))) return `${sign}${String(candidate)}`;
  }
  return `${sign}${String(x)}`;
}

function f64Text(value: number): string {
  return Object.is(value, -0) ? '-0' : String(value);
}

interface Described {
  readonly decimal: string;
  readonly fields: { sign: string; exponent: string; mantissa: string; exponentBias: number };
  readonly class: FloatClass;
}

function describeNarrow(format: NarrowFormat, bits: number): Described {
  const exponentMax = (1 << format.exponentBits) - 1;
  const exponent = (bits >>> format.mantissaBits) & exponentMax;
  const mantissa = bits & ((1 << format.mantissaBits) - 1);
  return {
    decimal: shortestNarrow(format, bits),
    fields: {
      sign: String(bits >>> (format.width - 1)),
      exponent: bin(exponent, format.exponentBits),
      mantissa: bin(mantissa, format.mantissaBits),
      exponentBias: format.bias,
    },
    class: classOf(exponent, exponentMax, mantissa === 0),
  };
}

function describeF64(view: DataView, offset: number): Described {
  const lo = view.getUint32(offset, true);
  const hi = view.getUint32(offset + 4, true);
  const exponent = (hi >>> 20) & 0x7ff;
  const mantissaHi = hi & 0xfffff;
  return {
    decimal: f64Text(view.getFloat64(offset, true)),
    fields: { sign: String(hi >>> 31), exponent: bin(exponent, 11), mantissa: bin(mantissaHi, 20) + bin(lo, 32), exponentBias: 1023 },
    class: classOf(exponent, 0x7ff, mantissaHi === 0 && lo === 0),
  };
}

const CLASS_PRIORITY: readonly FloatClass[] = ['nan', 'inf', 'normal', 'subnormal', 'zero'];

function integerText(dtype: DType, view: DataView, offset: number): string {
  switch (dtype) {
    case 'I8':
      return String(view.getInt8(offset));
    case 'I16':
      return String(view.getInt16(offset, true));
    case 'U16':
      return String(view.getUint16(offset, true));
    case 'I32':
      return String(view.getInt32(offset, true));
    case 'U32':
      return String(view.getUint32(offset, true));
    case 'I64':
      return view.getBigInt64(offset, true).toString();
    case 'U64':
      return view.getBigUint64(offset, true).toString();
    default:
      return String(view.getUint8(offset)); // U8, BOOL
  }
}

/** The element at byte `offset` of `bytes` (little-endian), for the bit inspector. */
export function elementBits(dtype: DType, bytes: Uint8Array, offset: number): ElementBits {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hex = hexOf(bytes, offset, DTYPE_SIZE[dtype]);
  const narrow = NARROW[dtype];
  if (narrow !== undefined) {
    const bits = narrow.width === 32 ? view.getUint32(offset, true) : view.getUint16(offset, true);
    const described = describeNarrow(narrow, bits);
    return { decimal: described.decimal, hex, fields: described.fields, class: described.class };
  }
  if (dtype === 'F64') {
    const described = describeF64(view, offset);
    return { decimal: described.decimal, hex, fields: described.fields, class: described.class };
  }
  if (dtype === 'C64') {
    const format = NARROW.F32 as NarrowFormat;
    const re = describeNarrow(format, view.getUint32(offset, true));
    const imBits = view.getUint32(offset + 4, true);
    const im = describeNarrow(format, imBits);
    const imNegative = imBits >>> 31 === 1 && im.decimal !== 'NaN';
    const imText = imNegative ? im.decimal.slice(1) : im.decimal;
    const pair = (a: string, b: string): string => `${a},${b}`;
    return {
      decimal: `${re.decimal}${imNegative ? '-' : '+'}${imText}j`,
      hex: pair(hexOf(bytes, offset, 4), hexOf(bytes, offset + 4, 4)),
      fields: {
        sign: pair(re.fields.sign, im.fields.sign),
        exponent: pair(re.fields.exponent, im.fields.exponent),
        mantissa: pair(re.fields.mantissa, im.fields.mantissa),
        exponentBias: 127,
      },
      class: CLASS_PRIORITY.find((name) => name === re.class || name === im.class) ?? 'zero',
    };
  }
  return { decimal: integerText(dtype, view, offset), hex, fields: null, class: 'integer' };
}

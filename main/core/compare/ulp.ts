// ULP distance between floating-point values of one format, counted on that format's bits.
// Each float maps to an integer that is monotonic in the float's value (negative floats are
// mirrored), so the distance is the number of representable values between the two.

const f32Scratch = new Float32Array(1);
const f32Bits = new Int32Array(f32Scratch.buffer);
const f64Scratch = new Float64Array(1);
const f64Bits = new BigInt64Array(f64Scratch.buffer);

/** Monotonic integer key of a float32 bit pattern (as a signed 32-bit int). */
export function orderedF32Bits(bits: number): number {
  // -0 and +0 both map to 0 so they are 0 ULP apart; sign handled separately by the caller.
  return bits < 0 ? -(bits & 0x7fffffff) : bits;
}

export function ulpDistanceF32(a: number, b: number): number {
  f32Scratch[0] = a;
  const ka = orderedF32Bits(f32Bits[0] as number);
  f32Scratch[0] = b;
  const kb = orderedF32Bits(f32Bits[0] as number);
  return Math.abs(ka - kb);
}

/** ULP distance of two bf16/f16 bit patterns (16-bit): same construction on 16 bits. */
export function ulpDistance16(bitsA: number, bitsB: number): number {
  const key = (bits: number): number => (bits & 0x8000 ? -(bits & 0x7fff) : bits & 0x7fff);
  return Math.abs(key(bitsA) - key(bitsB));
}

export function ulpDistanceF64(a: number, b: number): number {
  f64Scratch[0] = a;
  const ba = f64Bits[0] as bigint;
  f64Scratch[0] = b;
  const bb = f64Bits[0] as bigint;
  const key = (bits: bigint): bigint => (bits < 0n ? -(bits & 0x7fffffffffffffffn) : bits);
  const distance = key(ba) - key(bb);
  const magnitude = distance < 0n ? -distance : distance;
  // Beyond 2^53 the exact count no longer matters to anyone reading a report.
  return magnitude > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(magnitude);
}

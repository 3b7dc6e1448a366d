// Shortest round-trip text for float32, checked over many random bit patterns: the text reads
// back to the same float32, and one significant digit less never does.
import { describe, expect, it } from 'vitest';
import { elementBits, hexOf } from '../../main/core/inspect/element-format.ts';

function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '');
  return mantissa.replace(/0+$/, '').length || 1;
}

describe('element text', () => {
  it('is the shortest text that reads back to the same float32', () => {
    const bytes = new Uint8Array(4);
    const words = new Uint32Array(bytes.buffer);
    const floats = new Float32Array(bytes.buffer);
    let state = 0x9e3779b9;
    for (let k = 0; k < 5000; k++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      words[0] = state >>> 0;
      const value = floats[0] as number;
      if (!Number.isFinite(value)) continue;
      const text = elementBits('F32', bytes, 0).decimal;
      expect(Math.fround(Number(text)), `${words[0]?.toString(16)} -> ${text}`).toBe(value);
      const digits = significantDigits(text);
      if (digits > 1) {
        const shorter = Math.fround(Number(Math.abs(value).toPrecision(digits - 1)));
        expect(shorter, `${text} is not the shortest`).not.toBe(Math.abs(value));
      }
    }
  });

  it('writes raw bits most significant byte first', () => {
    expect(hexOf(Uint8Array.from([0x00, 0x00, 0x80, 0x3f]), 0, 4)).toBe('0x3f800000');
    expect(elementBits('I8', Uint8Array.from([0xff]), 0)).toEqual({ decimal: '-1', hex: '0xff', fields: null, class: 'integer' });
    expect(elementBits('U64', new Uint8Array(new BigUint64Array([2n ** 64n - 1n]).buffer), 0).decimal).toBe('18446744073709551615');
  });
});

// The radix-2 FFT against a direct O(N²) DFT, X[k] = Σ x[t]·e^{-2πi·k·t/N}.
import { describe, expect, it } from 'vitest';
import { fft } from '../../main/core/audio/fft.ts';
import { seededRandom } from './signals.ts';

function directDft(re: Float64Array, im: Float64Array): { re: Float64Array; im: Float64Array } {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sr = 0;
    let si = 0;
    for (let t = 0; t < n; t++) {
      const angle = (-2 * Math.PI * ((k * t) % n)) / n;
      sr += re[t]! * Math.cos(angle) - im[t]! * Math.sin(angle);
      si += re[t]! * Math.sin(angle) + im[t]! * Math.cos(angle);
    }
    outRe[k] = sr;
    outIm[k] = si;
  }
  return { re: outRe, im: outIm };
}

describe('fft', () => {
  for (const n of [1, 2, 4, 8, 16, 64, 256, 1024]) {
    it(`matches a direct DFT for N = ${n} (complex input)`, () => {
      const random = seededRandom(n);
      const re = Float64Array.from({ length: n }, () => random() * 2 - 1);
      const im = Float64Array.from({ length: n }, () => random() * 2 - 1);
      const expected = directDft(re, im);
      fft(re, im);
      let worst = 0;
      for (let k = 0; k < n; k++) worst = Math.max(worst, Math.abs(re[k]! - expected.re[k]!), Math.abs(im[k]! - expected.im[k]!));
      expect(worst).toBeLessThan(1e-10 * Math.max(1, n));
    });
  }

  it('puts a unit impulse flat and a pure cosine in its two bins', () => {
    const re = new Float64Array(16);
    const im = new Float64Array(16);
    re[0] = 1;
    fft(re, im);
    expect([...re]).toEqual(new Array(16).fill(1));
    const cos = Float64Array.from({ length: 16 }, (_, t) => Math.cos((2 * Math.PI * 3 * t) / 16));
    const zero = new Float64Array(16);
    fft(cos, zero);
    for (let k = 0; k < 16; k++) expect(Math.abs(cos[k]!)).toBeCloseTo(k === 3 || k === 13 ? 8 : 0, 10);
  });

  it('rejects a length that is not a power of two, and mismatched re/im', () => {
    expect(() => fft(new Float64Array(12), new Float64Array(12))).toThrow(/not a power of two/);
    expect(() => fft(new Float64Array(8), new Float64Array(4))).toThrow(RangeError);
  });
});

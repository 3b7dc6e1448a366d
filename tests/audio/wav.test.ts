// The float WAV writer: every header field at its byte offset, samples bit-exact, and a file
// that already exists is never overwritten.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WAV_HEADER_BYTES, WavError, decodeWav, encodeWav, writeWavFile } from '../../main/core/audio/wav.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { testSignal } from './signals.ts';

const work = freshTempDir('wav');

describe('WAV (32-bit float, mono, 24 kHz)', () => {
  const samples = Float32Array.from([0, -0, 1, -1, 0.5, 1e-40, 3.4028234663852886e38, -Infinity, Infinity, 0.1]);

  it('writes every header field at its offset', () => {
    const bytes = encodeWav(samples);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const tag = (at: number): string => Buffer.from(bytes.subarray(at, at + 4)).toString('latin1');
    expect(bytes.length).toBe(WAV_HEADER_BYTES + 4 * samples.length);
    expect(tag(0)).toBe('RIFF');
    expect(view.getUint32(4, true)).toBe(bytes.length - 8);
    expect(tag(8)).toBe('WAVE');
    expect(tag(12)).toBe('fmt ');
    expect(view.getUint32(16, true)).toBe(18);
    expect(view.getUint16(20, true)).toBe(3); // WAVE_FORMAT_IEEE_FLOAT
    expect(view.getUint16(22, true)).toBe(1); // mono
    expect(view.getUint32(24, true)).toBe(24000);
    expect(view.getUint32(28, true)).toBe(96000);
    expect(view.getUint16(32, true)).toBe(4);
    expect(view.getUint16(34, true)).toBe(32);
    expect(view.getUint16(36, true)).toBe(0);
    expect(tag(38)).toBe('fact');
    expect(view.getUint32(42, true)).toBe(4);
    expect(view.getUint32(46, true)).toBe(samples.length);
    expect(tag(50)).toBe('data');
    expect(view.getUint32(54, true)).toBe(4 * samples.length);
    // The samples are the float32 bytes, little-endian, unchanged.
    expect(Buffer.from(bytes.subarray(58)).equals(Buffer.from(samples.buffer))).toBe(true);
  });

  it('round-trips through a file bit-exactly (signed zero, subnormals, infinities)', async () => {
    const path = join(work, 'round-trip.wav');
    await writeWavFile(path, samples);
    const decoded = decodeWav(readFileSync(path), path);
    expect(decoded).toMatchObject({
      format: 3,
      channels: 1,
      sampleRate: 24000,
      byteRate: 96000,
      blockAlign: 4,
      bitsPerSample: 32,
      factSampleLength: samples.length,
    });
    expect(Buffer.from(decoded.samples.buffer).equals(Buffer.from(samples.buffer))).toBe(true);
    expect(Object.is(decoded.samples[1], -0)).toBe(true);
    const long = testSignal(24000);
    expect(decodeWav(encodeWav(long)).samples).toEqual(long);
    expect(decodeWav(encodeWav(new Float32Array(0))).samples.length).toBe(0);
  });

  it('refuses to overwrite an existing file and leaves it untouched', async () => {
    const path = join(work, 'occupied.wav');
    writeFileSync(path, 'precious');
    const attempt = writeWavFile(path, samples);
    await expect(attempt).rejects.toBeInstanceOf(WavError);
    await expect(writeWavFile(path, samples)).rejects.toThrow(/occupied\.wav: already exists/);
    expect(readFileSync(path, 'utf8')).toBe('precious');
  });

  it('the reader rejects a file that is not a float WAV', () => {
    expect(() => decodeWav(new Uint8Array(20))).toThrow(/not a RIFF\/WAVE file/);
    const pcm16 = encodeWav(samples);
    new DataView(pcm16.buffer).setUint16(20, 1, true);
    expect(() => decodeWav(pcm16)).toThrow(/only 32-bit float/);
    const truncated = encodeWav(samples).subarray(0, 70);
    expect(() => decodeWav(truncated)).toThrow(/runs past the end/);
  });
});

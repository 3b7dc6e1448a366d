// 32-bit float mono WAV (RIFF/WAVE, WAVE_FORMAT_IEEE_FLOAT), 24 kHz by default.
//
//   offset size  field
//        0    4  "RIFF"
//        4    4  RIFF size = 50 + 4·samples (file size − 8)
//        8    4  "WAVE"
//       12    4  "fmt "        16  4  18 (chunk size)
//       20    2  3 (IEEE float)   22  2  1 channel
//       24    4  sample rate      28  4  byte rate = rate·4
//       32    2  block align 4    34  2  32 bits per sample
//       36    2  cbSize 0
//       38    4  "fact"        42  4  4    46  4  sample frames
//       50    4  "data"        54  4  4·samples
//       58       little-endian float32 samples
import { open } from 'node:fs/promises';
import { PCM_SAMPLE_RATE } from './pcm-stream.ts';

export const WAVE_FORMAT_IEEE_FLOAT = 3;
export const WAV_HEADER_BYTES = 58;

export class WavError extends Error {
  override name = 'WavError';
  constructor(
    readonly code: 'E_WAV_EXISTS' | 'E_WAV_FORMAT',
    readonly file: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${detail}`, options);
  }
}

export function encodeWav(samples: Float32Array, sampleRate: number = PCM_SAMPLE_RATE): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new RangeError(`sample rate must be a positive integer, got ${sampleRate}`);
  const dataBytes = samples.length * 4;
  const bytes = new Uint8Array(WAV_HEADER_BYTES + dataBytes);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i++) bytes[offset + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, WAV_HEADER_BYTES - 8 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 18, true);
  view.setUint16(20, WAVE_FORMAT_IEEE_FLOAT, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 4, true);
  view.setUint16(32, 4, true);
  view.setUint16(34, 32, true);
  view.setUint16(36, 0, true);
  ascii(38, 'fact');
  view.setUint32(42, 4, true);
  view.setUint32(46, samples.length, true);
  ascii(50, 'data');
  view.setUint32(54, dataBytes, true);
  for (let i = 0; i < samples.length; i++) view.setFloat32(WAV_HEADER_BYTES + i * 4, samples[i] as number, true);
  return bytes;
}

/** Writes a new WAV file; refuses (E_WAV_EXISTS) when `path` already exists. */
export async function writeWavFile(path: string, samples: Float32Array, sampleRate: number = PCM_SAMPLE_RATE): Promise<number> {
  const bytes = encodeWav(samples, sampleRate);
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST')
      throw new WavError('E_WAV_EXISTS', path, 'already exists; export-wav never overwrites a file', { cause });
    throw cause;
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
  return bytes.length;
}

export interface DecodedWav {
  readonly format: number;
  readonly channels: number;
  readonly sampleRate: number;
  readonly byteRate: number;
  readonly blockAlign: number;
  readonly bitsPerSample: number;
  /** From the fact chunk, null when absent. */
  readonly factSampleLength: number | null;
  readonly samples: Float32Array;
}

/** Reads a mono or multi-channel 32-bit float WAV (interleaved samples are returned as stored). */
export function decodeWav(bytes: Uint8Array, file = '(buffer)'): DecodedWav {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number): string => String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new WavError('E_WAV_FORMAT', file, 'not a RIFF/WAVE file');
  const riffEnd = Math.min(bytes.length, 8 + view.getUint32(4, true));
  let fmt: Omit<DecodedWav, 'samples' | 'factSampleLength'> | null = null;
  let fact: number | null = null;
  let samples: Float32Array | null = null;
  for (let at = 12; at + 8 <= riffEnd;) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (body + size > riffEnd) throw new WavError('E_WAV_FORMAT', file, `chunk "${id}" at byte ${at} runs past the end of the file`);
    if (id === 'fmt ') {
      if (size < 16) throw new WavError('E_WAV_FORMAT', file, `fmt chunk of ${size} bytes is too short`);
      fmt = {
        format: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        byteRate: view.getUint32(body + 8, true),
        blockAlign: view.getUint16(body + 12, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    } else if (id === 'fact' && size >= 4) {
      fact = view.getUint32(body, true);
    } else if (id === 'data') {
      if (fmt === null) throw new WavError('E_WAV_FORMAT', file, 'data chunk before the fmt chunk');
      if (fmt.format !== WAVE_FORMAT_IEEE_FLOAT || fmt.bitsPerSample !== 32) {
        throw new WavError('E_WAV_FORMAT', file, `only 32-bit float WAV is supported (format ${fmt.format}, ${fmt.bitsPerSample} bits)`);
      }
      samples = new Float32Array(Math.floor(size / 4));
      for (let i = 0; i < samples.length; i++) samples[i] = view.getFloat32(body + i * 4, true);
    }
    at = body + size + (size & 1);
  }
  if (fmt === null || samples === null) throw new WavError('E_WAV_FORMAT', file, `missing ${fmt === null ? 'fmt' : 'data'} chunk`);
  return { ...fmt, factSampleLength: fact, samples };
}

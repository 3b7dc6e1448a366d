// The frame log of a capture (capture-frame.ts): frames read back exactly as they were laid out,
// and the pass header is byte for byte the one the safetensors writer encodes.
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodePassHeader, FrameEncoder, scanSpill, SpillReader, type SpillFrame } from '../../main/core/bundle/capture-frame.ts';
import type { DType } from '../../main/core/bundle/dtype.ts';
import { encodeSafetensorsHeader } from '../../main/core/bundle/safetensors-header.ts';
import { bytes, removeTempDirs, tempDir } from './bundle-fixtures.ts';

afterAll(removeTempDirs);

interface Spec {
  name: string;
  stage: string;
  dtype: DType;
  shape: number[];
  strides: number[];
  size: number;
}

function writeSpill(specs: readonly Spec[], pass: number): { path: string; fd: number; size: number; data: Uint8Array[] } {
  const path = join(tempDir('frames'), 'pass.spill');
  const fd = openSync(path, 'w+');
  const encoder = new FrameEncoder(64); // grows as frames need
  let size = 0;
  const data = specs.map((spec, seq) => {
    const payload = bytes(spec.size, seq + 3);
    encoder.open(pass, seq, spec.dtype, spec.shape, spec.strides, spec.name, spec.stage, spec.size).set(payload);
    const length = encoder.close();
    writeSync(fd, encoder.bytes, 0, length, size);
    size += length;
    return payload;
  });
  return { path, fd, size, data };
}

describe('capture frames', () => {
  it('read back with every field as laid out: rank 0, empty tensors, negative and large strides, non-ASCII names', () => {
    const specs: Spec[] = [
      { name: 'scalar', stage: 's', dtype: 'F64', shape: [], strides: [], size: 8 },
      { name: 'empty', stage: 's', dtype: 'F32', shape: [0, 3], strides: [3, 1], size: 0 },
      { name: 'strided.négatif', stage: 'étage', dtype: 'I16', shape: [2, 3], strides: [-3, 2 ** 40], size: 12 },
      { name: 'big.extent', stage: 's', dtype: 'U8', shape: [1, 70_000], strides: [70_000, 1], size: 70_000 },
    ];
    const { path, fd, size, data } = writeSpill(specs, 7);
    try {
      const scan = scanSpill(new SpillReader(fd, size, path), 7, true);
      expect(scan.torn).toBeNull();
      expect(scan.end).toBe(size);
      expect(scan.frames.map((frame) => [frame.seq, frame.name, frame.stage, frame.dtype, frame.shape, frame.strides, frame.byteLength])).toEqual(
        specs.map((spec, seq) => [seq, spec.name, spec.stage, spec.dtype, spec.shape, spec.strides, spec.size]),
      );
      const reader = new SpillReader(fd, size, path);
      scan.frames.forEach((frame, i) => {
        const chunks: Buffer[] = [];
        reader.chunks(frame.dataOffset, frame.byteLength, (chunk) => chunks.push(Buffer.from(chunk)));
        expect(Buffer.concat(chunks).equals(Buffer.from(data[i] ?? []))).toBe(true);
      });
      // Frames of another pass are not this pass's.
      expect(scanSpill(new SpillReader(fd, size, path), 8, true).frames).toEqual([]);
    } finally {
      closeSync(fd);
    }
  });

  it('encode the pass header byte for byte as the safetensors writer does, whatever the names', () => {
    const names = ['b.z', 'a"quote', 'a\\slash', 'é.accent', 'Z.upper', '𝛼.astral', 'a.b', 'a.b.c', 'tab\tname', '00', '10', '9'];
    const frames = names.map((name, i): SpillFrame => ({
      seq: i,
      name,
      stage: 'x',
      dtype: i % 2 === 0 ? 'F32' : 'BF16',
      shape: [i + 1, 2],
      strides: [2, 1],
      dataOffset: 0,
      byteLength: (i + 1) * 2 * (i % 2 === 0 ? 4 : 2),
      crc: 0,
      headerCrc: 0,
      inPlace: null,
    }));
    const layouts = (list: readonly SpillFrame[]) =>
      list.map((frame) => ({ key: frame.name, dtype: frame.dtype, shape: frame.shape, byteLength: frame.byteLength }));
    // With array-index names ('10', '9', '00' is not one) and without.
    for (const list of [frames, frames.filter((frame) => !/^(0|[1-9]\d*)$/.test(frame.name))]) {
      const ours = encodePassHeader(list);
      const theirs = encodeSafetensorsHeader(layouts(list), null, 'given');
      expect(ours.prefix.equals(theirs.prefix)).toBe(true);
      expect(ours.dataBytes).toBe(theirs.dataBytes);
    }
  });
});

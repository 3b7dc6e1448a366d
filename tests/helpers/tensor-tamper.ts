// Changing one byte of evidence in place (same size: only the bytes and the file's times change),
// as an attacker or a failing disk would: the tests that prove a reader still catches it share this.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';

/** XORs the byte at offset `at` of `file` with `mask`. */
export function flipFileByte(file: string, at: number, mask = 0xff): void {
  const fd = openSync(file, 'r+');
  try {
    const byte = new Uint8Array(1);
    if (readSync(fd, byte, 0, 1, at) !== 1) throw new Error(`test: ${file} has no byte at ${at}`);
    byte[0] = (byte[0] ?? 0) ^ mask;
    writeSync(fd, byte, 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

/** Flips every bit of the first byte of tensor `name` of pass `pass`; returns the file changed. */
export async function flipTensorByte(bundle: TraceBundle, pass: number, name: string): Promise<string> {
  const entry = bundle.boundary(pass, name);
  const file = join(bundle.dir, bundle.passes[pass]?.file ?? '');
  if (entry === undefined) throw new Error(`test: no ${name} in pass ${pass}`);
  const tensors = await SafetensorsFile.open(file);
  const at = tensors.dataStart + (tensors.tensor(entry.key)?.begin ?? 0);
  await tensors.close();
  flipFileByte(file, at);
  return file;
}

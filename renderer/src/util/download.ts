// Bytes the core sent: decoding base64 (PCM, WAV files), and saving as a browser download — a
// Blob URL clicked through an anchor works in Electron and in serve mode without file-system access.
import { base64ToBytes } from '../../../protocol/base64-bytes.ts';

export function downloadBlob(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  anchor.rel = 'noopener';
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  // Revoke later: revoking synchronously can cancel the download in some engines.
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The bytes of a base64 field (the core sends canonical padded base64, as Buffer writes it). */
export function wireBytes(base64: string, field: string): Uint8Array<ArrayBuffer> {
  const bytes = base64ToBytes(base64);
  if (bytes === null) throw new Error(`${field} is not canonical base64`);
  // base64ToBytes always allocates a fresh ArrayBuffer (never a shared one).
  return bytes as Uint8Array<ArrayBuffer>;
}

/** float32 little-endian PCM from base64 (the wire format of getAudio). */
export function base64ToFloat32(base64: string, field: string): Float32Array<ArrayBuffer> {
  const bytes = wireBytes(base64, field);
  const samples = new Float32Array(Math.floor(bytes.length / 4));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < samples.length; i += 1) samples[i] = view.getFloat32(i * 4, true);
  return samples;
}

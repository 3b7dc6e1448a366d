// Bytes the core sent: decoding base64 (PCM, WAV files), and saving as a browser download — a
// Blob URL clicked through an anchor works in Electron and in serve mode without file-system access.
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

export function base64ToBytes(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** float32 little-endian PCM from base64 (the wire format of getAudio). */
export function base64ToFloat32(base64: string): Float32Array<ArrayBuffer> {
  const bytes = base64ToBytes(base64);
  const samples = new Float32Array(Math.floor(bytes.length / 4));
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i += 1) samples[i] = view.getFloat32(i * 4, true);
  return samples;
}

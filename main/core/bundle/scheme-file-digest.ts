// A file's digest in a bundle's scheme, hashed on the calling thread: plain sha256, or the tree
// (tree-digest.ts) over the segments its safetensors header defines. For tools that rewrite one
// file of a bundle (the self-test's record perturbations) and must state its new digest; opening
// and verifying bundles hashes on the worker pool instead (verify-bundle-files.ts).
import { openRegularFile } from '../io/guarded-read.ts';
import { sha256File } from './digest.ts';
import { BundleError } from './errors.ts';
import { SafetensorsFile } from './safetensors-reader.ts';
import { fileSegments, FileTreeHasher, type DigestScheme } from './tree-digest.ts';

const READ_BYTES = 4 * 1024 * 1024;

export async function fileDigestInScheme(path: string, scheme: DigestScheme): Promise<string> {
  if (scheme.kind === 'sha256') return (await sha256File(path)).sha256;
  let layout: { dataStart: number; tensors: readonly { begin: number; end: number }[] } | null = null;
  try {
    const file = await SafetensorsFile.open(path);
    await file.close();
    layout = { dataStart: file.dataStart, tensors: file.tensors };
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
  }
  const { handle, size } = await openRegularFile(path);
  try {
    const segments = fileSegments(size, layout?.dataStart ?? null, layout?.tensors ?? []);
    const hasher = new FileTreeHasher(
      scheme.chunkBytes,
      segments.map((segment) => segment.end),
    );
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    for (let at = 0; at < size;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(READ_BYTES, size - at), at);
      if (bytesRead === 0) throw new Error(`${path} shrank while it was hashed`);
      hasher.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
    return hasher.digest();
  } finally {
    await handle.close();
  }
}

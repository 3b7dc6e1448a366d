// A bundle usable for what its validated manifest says (its passes, boundaries and inputs) while
// the rest of its opening — its files' confined paths, sizes and safetensors headers
// (openBundleFromManifest) — is still going on. Every read waits for the opening and fails with
// its error (naming the file and the field), and `opened` rejects with it: the app opening a
// 50-pass run starts verifying and judging its first pass as soon as the manifest is in, instead
// of after every pass file's header has been read on the thread that serves it, and fails the
// open (withdrawing what it showed) when `opened` rejects, as it does for a digest that fails.
import { resolve } from 'node:path';
import { BoundaryIndex } from './boundary-index.ts';
import type { TensorData, TraceBundle } from './bundle-reader.ts';
import type { BoundaryEntry, BundleManifest, InputEntry, PassEntry } from './manifest-schema.ts';

export interface BundleOpenedLater {
  readonly bundle: TraceBundle;
  /** Resolves once the bundle is opened; rejects with the opening's error. */
  readonly opened: Promise<void>;
}

class OpeningBundle implements TraceBundle {
  readonly dir: string;
  readonly passes: readonly PassEntry[];
  private readonly boundaryIndex: BoundaryIndex;

  constructor(
    readonly manifest: BundleManifest,
    dir: string,
    readonly manifestPath: string,
    private readonly inner: Promise<TraceBundle>,
  ) {
    // As the opened bundle gives them (BundleReader).
    this.dir = resolve(dir);
    this.passes = manifest.passes;
    this.boundaryIndex = new BoundaryIndex(manifest);
  }

  boundary(passIndex: number, name: string): BoundaryEntry | undefined {
    return this.boundaryIndex.get(passIndex, name);
  }

  input(name: string): InputEntry | undefined {
    return this.manifest.inputs.find((input) => input.name === name);
  }

  async readBoundary(passIndex: number, name: string): Promise<TensorData> {
    return (await this.inner).readBoundary(passIndex, name);
  }

  async *readBoundaryChunks(passIndex: number, name: string, chunkBytes?: number): AsyncGenerator<Uint8Array, void, undefined> {
    yield* (await this.inner).readBoundaryChunks(passIndex, name, chunkBytes);
  }

  async readBoundaryRange(passIndex: number, name: string, begin: number, end: number): Promise<Uint8Array> {
    return (await this.inner).readBoundaryRange(passIndex, name, begin, end);
  }

  async readInput(name: string): Promise<TensorData> {
    return (await this.inner).readInput(name);
  }

  async close(): Promise<void> {
    const opened = await this.inner.catch(() => null);
    await opened?.close();
  }
}

/** `manifest` (validated) as a bundle now, opened by `open` (started by the caller) for its reads. */
export function bundleOpenedLater(dir: string, manifest: BundleManifest, manifestPath: string, open: Promise<TraceBundle>): BundleOpenedLater {
  const opened = open.then(() => undefined);
  // The caller takes the failure from `opened` (or a read): never an unhandled rejection here.
  opened.catch(() => undefined);
  return { bundle: new OpeningBundle(manifest, dir, manifestPath, open), opened };
}

// A bundle usable for what its validated manifest says (its passes, boundaries and inputs) while
// the rest of its opening — its files' confined paths, sizes and safetensors headers
// (openBundleFromManifest) — is still going on. Every read waits for its own file's checks, and
// fails with the opening's error (naming the file and the field) once it failed; `opened` rejects with it: the app opening a
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

  /** The opening's error, once it failed: every read from then on fails with it. */
  private failure: { error: unknown } | null = null;

  constructor(
    readonly manifest: BundleManifest,
    dir: string,
    readonly manifestPath: string,
    private readonly opening: Promise<TraceBundle>,
    opened: Promise<void>,
  ) {
    // As the opened bundle gives them (BundleReader).
    this.dir = resolve(dir);
    this.passes = manifest.passes;
    this.boundaryIndex = new BoundaryIndex(manifest);
    opened.catch((error: unknown) => {
      this.failure = { error };
    });
  }

  /** The bundle to read from: nothing is read from a bundle whose opening failed, even a file that passed its own checks. */
  private get inner(): Promise<TraceBundle> {
    return this.opening.then((bundle) => {
      if (this.failure !== null) throw this.failure.error;
      return bundle;
    });
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
    const opened = await this.opening.catch(() => null);
    await opened?.close();
  }
}

/**
 * `manifest` (validated) as a bundle now, opened by `open` (started by the caller) for its reads.
 * A bundle opened with headers 'lazy' has every file's header checked for `opened` (one file at a
 * time, in pass order) once `checksAfter` settles, and each read waits only for its own file's
 * check: the app starts them once a run's first rows are in, so that they do not compete with
 * the verifying and judging of its first pass for the thread and the cores.
 */
export function bundleOpenedLater(
  dir: string,
  manifest: BundleManifest,
  manifestPath: string,
  open: Promise<TraceBundle>,
  checksAfter: Promise<unknown> = Promise.resolve(),
): BundleOpenedLater {
  const settled = checksAfter.then(
    () => undefined,
    () => undefined,
  );
  const opened = Promise.all([open, settled]).then(([bundle]) => bundle.checkHeaders?.());
  // The caller takes the failure from `opened` (or a read): never an unhandled rejection here.
  opened.catch(() => undefined);
  return { bundle: new OpeningBundle(manifest, dir, manifestPath, open, opened), opened };
}

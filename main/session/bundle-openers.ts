// How the session opens bundles. Opening reads and validates the manifest — for a run of 50k
// boundaries tens of MB of JSON, a second and more of parsing — which the thread serving the app
// must not do: the session's openers have a judging worker read it (judge-pool.ts manifest) and
// open the bundle from the manifest they receive, with the same checks openBundle makes
// (openBundleFromManifest: confined paths, sizes, digests, safetensors headers).
//
// A capture in progress is the exception: its view is opened again after every pass, each time
// from the last (CaptureInProgressReader), reading only the journal's new lines and the new pass
// files' headers — a pass's worth of JSON, which the serving thread reads in a few milliseconds,
// where the whole journal and every header, read again each step, grew with the run. Its last
// view, the finished capture, is the whole manifest again: a judging worker reads it (judge-pool.ts
// finishedCapture) and the serving thread receives the head and the entries its view lacks.
import { join } from 'node:path';
import { openBundle, openBundleFromManifest, readManifest, type OpenBundleOptions, type TraceBundle } from '../core/bundle/bundle-reader.ts';
import { bundleOpenedLater, type BundleOpenedLater } from '../core/bundle/bundle-opened-later.ts';
import { CaptureInProgressReader, type FinishedManifestSource } from '../core/bundle/capture-in-progress.ts';
import { MANIFEST_FILE_NAME, type BundleManifest } from '../core/bundle/manifest-schema.ts';
import type { JudgePool } from './judge-pool.ts';

export type BundleOpener = (dir: string, options?: OpenBundleOptions) => Promise<TraceBundle>;

export interface BundleOpeners {
  /** A finished bundle (openBundle). */
  bundle: BundleOpener;
  /**
   * The sealed passes of a capture in progress (capture-in-progress.ts: its journal, files not
   * re-hashed), opened from the view of the same folder opened last, if any; once the capture is
   * finished, the finished bundle (its manifest.json), grown from that view the same way.
   */
  capture(dir: string): Promise<TraceBundle>;
  /**
   * A finished bundle, its files not hashed (verify 'none'), usable once its manifest is read and
   * validated while its paths, sizes and headers are still checked (bundle-opened-later.ts): each
   * file's header before its first read, every file's once `checksAfter` settles.
   */
  bundleLater(dir: string, checksAfter?: Promise<unknown>): Promise<BundleOpenedLater>;
}

/**
 * The views of the capture in progress opened last: each open reads what was sealed since the one
 * before; the finished manifest is read by `finishedElsewhere` where it is given.
 */
function captureViews(finishedElsewhere: ((dir: string) => FinishedManifestSource) | null = null): (dir: string) => Promise<TraceBundle> {
  let reader: CaptureInProgressReader | null = null;
  return (dir) => {
    if (reader?.dir !== dir) reader = new CaptureInProgressReader(dir, { verify: 'none' }, finishedElsewhere?.(dir) ?? null);
    return reader.open();
  };
}

/** Everything on the calling thread. */
export const openersHere: BundleOpeners = {
  bundle: openBundle,
  capture: captureViews(),
  bundleLater: async (dir, checksAfter) => {
    const manifestPath = join(dir, MANIFEST_FILE_NAME);
    return openedLaterFrom(dir, await readManifest(dir, manifestPath), manifestPath, checksAfter);
  },
};

/** A bundle usable from its manifest at once: its headers checked as it is read, its digests by `checksAfter`. */
function openedLaterFrom(dir: string, manifest: BundleManifest, manifestPath: string, checksAfter: Promise<unknown> | undefined): BundleOpenedLater {
  return bundleOpenedLater(dir, manifest, manifestPath, openBundleFromManifest(dir, manifest, manifestPath, { verify: 'none', headers: 'lazy' }), checksAfter);
}

/** The manifests read on `pool`'s workers. */
export function openersOffThread(pool: JudgePool): BundleOpeners {
  return {
    bundle: async (dir, options = {}) => openBundleFromManifest(dir, await pool.manifest({ kind: 'bundle', dir }), join(dir, MANIFEST_FILE_NAME), options),
    capture: captureViews((dir) => (knownPasses) => pool.finishedCapture(dir, knownPasses)),
    bundleLater: async (dir, checksAfter) => openedLaterFrom(dir, await pool.manifest({ kind: 'bundle', dir }), join(dir, MANIFEST_FILE_NAME), checksAfter),
  };
}

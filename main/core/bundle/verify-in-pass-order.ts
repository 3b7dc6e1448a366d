// Verifying an opened bundle's files in the order its passes are wanted, so a reader can start on
// a pass as soon as the files it reads are verified instead of after the whole bundle: the app
// opening a run of gigabytes judges its first passes while the later ones are still hashed.
//
// Fail-closed: nothing is verified until its own file is (the same checks as openBundle's:
// the file's sha256, every tensor's, their chunk digests), and a file that fails rejects every
// wait, current and future, with the E_DIGEST (or changed-file) error naming the file and field,
// so the caller withdraws whatever it showed from the passes before it.
import { join } from 'node:path';
import { formatFieldPath } from './errors.ts';
import type { TraceBundle } from './bundle-reader.ts';
import { resolveInsideBundle } from './path-confinement.ts';
import { verifyBundleFilesInOrder } from './verify-bundle-files.ts';

export interface PassOrderVerification {
  /**
   * Resolves once every file the given passes read is verified — their pass files and the
   * bundle's input files; rejects with the verification's error once any file has failed.
   */
  whenVerified(passes: readonly number[]): Promise<void>;
  /**
   * Resolves once every file the given passes read is verified, even when another file has failed
   * since (that failure is `done`'s); rejects when one of them can no longer be verified (a failure
   * came first). What a judged slice waits for before it is shown.
   */
  whenFilesVerified(passes: readonly number[]): Promise<void>;
  /** Whether every file the given passes read is verified now (false once any file failed). */
  isVerified(passes: readonly number[]): boolean;
  /** Settles when every file the manifest lists is verified (or the first one failed). */
  readonly done: Promise<void>;
  /** Files verified so far, of `total`. */
  readonly verified: number;
  readonly total: number;
  /** Stops handing out files (the caller gave up on the bundle); `done` then resolves as it stands. */
  stop(): void;
}

/** The real path of every file `bundle` lists (or those `keep` selects), confined inside its folder (openBundle's rule). */
export async function bundleRealPaths(bundle: TraceBundle, keep: (path: string) => boolean = () => true): Promise<Map<string, string>> {
  const realPaths = new Map<string, string>();
  for (const [f, entry] of bundle.manifest.files.entries()) {
    if (!keep(entry.path)) continue;
    realPaths.set(entry.path, await resolveInsideBundle(bundle.dir, entry.path, { file: bundle.manifestPath, field: `${formatFieldPath(['files', f])}.path` }));
  }
  return realPaths;
}

/**
 * Starts verifying `bundle` (opened with verify 'none') in `passOrder`: its input files first,
 * then each pass's file, then every other file it lists. Several files are hashed at once on
 * worker threads (parallel-verify.ts); each is pinned as it is verified (file-pins.ts).
 */
export function verifyInPassOrder(bundle: TraceBundle, passOrder: readonly number[] = bundle.passes.map((pass) => pass.index)): PassOrderVerification {
  const { manifest } = bundle;
  const fileIndex = new Map(manifest.files.map((entry, f) => [entry.path, f]));
  const inputFiles = [...new Set(manifest.inputs.flatMap((input) => fileIndex.get(input.file) ?? []))];
  const passFile = new Map(bundle.passes.map((pass) => [pass.index, fileIndex.get(pass.file)]));
  const order: number[] = [];
  const planned = new Set<number>();
  const plan = (f: number | undefined): void => {
    if (f === undefined || planned.has(f)) return;
    planned.add(f);
    order.push(f);
  };
  inputFiles.forEach(plan);
  for (const pass of passOrder) plan(passFile.get(pass));
  manifest.files.forEach((_, f) => plan(f));

  const verified = new Set<number>();
  const waiters: { needs: Set<number>; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let failure: { error: unknown } | null = null;
  let stopped = false;

  const onVerified = (f: number): void => {
    verified.add(f);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i];
      if (waiter === undefined) continue;
      waiter.needs.delete(f);
      if (waiter.needs.size > 0) continue;
      waiters.splice(i, 1);
      waiter.resolve();
    }
  };
  const fail = (error: unknown): void => {
    failure ??= { error };
    for (const waiter of waiters.splice(0)) waiter.reject(failure.error);
  };

  const done = (async () => {
    const realPaths = await bundleRealPaths(bundle);
    await verifyBundleFilesInOrder(
      manifest,
      realPaths,
      (relPath) => join(bundle.dir, relPath),
      order,
      onVerified,
      () => stopped,
    );
    // Stopped before every file was verified: whoever still waits is told so, never left hanging.
    if (waiters.length > 0) fail(new Error(`verifying ${bundle.dir} was stopped before every file was verified`));
  })();
  done.catch(fail);

  /** The files `passes` read that are not verified yet. */
  const unverified = (passes: readonly number[]): Set<number> => {
    const needs = new Set(inputFiles);
    for (const pass of passes) {
      const f = passFile.get(pass);
      if (f !== undefined) needs.add(f);
    }
    for (const f of verified) needs.delete(f);
    return needs;
  };
  const wait = (needs: Set<number>): Promise<void> => new Promise<void>((resolve, reject) => waiters.push({ needs, resolve, reject }));

  return {
    whenVerified(passes) {
      if (failure !== null) return Promise.reject(failure.error);
      const needs = unverified(passes);
      return needs.size === 0 ? Promise.resolve() : wait(needs);
    },
    whenFilesVerified(passes) {
      const needs = unverified(passes);
      if (needs.size === 0) return Promise.resolve();
      // Verification stops at its first failure: files not verified by then never will be.
      return failure !== null ? Promise.reject(failure.error) : wait(needs);
    },
    isVerified(passes) {
      return failure === null && unverified(passes).size === 0;
    },
    done,
    get verified() {
      return verified.size;
    },
    total: manifest.files.length,
    stop() {
      stopped = true;
    },
  };
}

/**
 * `verification`, which also fails (every wait, current and future, and `done`) when `check`
 * rejects — the rest of the bundle's opening, going on while its first passes are verified and
 * judged (bundle-opened-later.ts) — and is done only once `check` resolves too.
 */
export function alsoAwaiting(verification: PassOrderVerification, check: Promise<void>): PassOrderVerification {
  // Never resolves: a wait raced against it ends with the check's failure or not at all.
  const failed = check.then(() => new Promise<never>(() => undefined));
  failed.catch(() => undefined);
  const done = Promise.all([verification.done, check]).then(() => undefined);
  // Whoever waits on `done` gets the failure; a caller that gave up first leaves none unhandled.
  done.catch(() => undefined);
  return {
    whenVerified: (passes) => Promise.race([verification.whenVerified(passes), failed]),
    whenFilesVerified: (passes) => Promise.race([verification.whenFilesVerified(passes), failed]),
    isVerified: (passes) => verification.isVerified(passes),
    done,
    get verified() {
      return verification.verified;
    },
    total: verification.total,
    stop: () => verification.stop(),
  };
}

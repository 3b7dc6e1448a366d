// Hostile files for the security tests: a FIFO, a character device, a folder, a file outside
// the root a bundle may use, a sparse file larger than a cap, and bundles whose untrusted fields
// (case.id, weights_file, files) point at them. Every CLI run is bounded: a guard that fails
// shows as a timeout, never as a test run that hangs.
import { execFileSync } from 'node:child_process';
import { closeSync, cpSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceBundle, tempDirTracker } from '../helpers/paths.ts';
import type { BoundedRun } from '../helpers/run-cli.ts';

export const { tempDir, removeTempDirs } = tempDirTracker('hostile');

/** The smallest committed case: one prefill pass. */
export const SMALL_CASE = 'prefill_1tok';
/** Longest any refusal may take; a guard that is missing shows as a run killed at this bound. */
export const REFUSAL_BOUND_MS = 30_000;

export { runCliBounded, type BoundedRun } from '../helpers/run-cli.ts';

/** What a named error looks like: exit 2, the path named, no internal error, no stack frame. */
export function describeRefusal(run: BoundedRun): string {
  return `exit ${run.status}${run.timedOut ? ' (killed: no answer within the bound)' : ''}\n${run.stderr}${run.stdout}`;
}

export function hasStackTrace(text: string): boolean {
  return /internal error/i.test(text) || /^\s+at .+:\d+:\d+\)?$/m.test(text);
}

export interface HostileTargets {
  /** A character device that never ends. */
  devZero: string;
  /** A FIFO nobody writes to: opening or reading it blocks for ever. */
  fifo: string;
  /** A folder. */
  folder: string;
  /** A regular file outside every root a bundle may reach. */
  outsideFile: string;
  /** Its sha256, which no refusal may print. */
  outsideSha256: string;
}

export function mkfifo(path: string): string {
  execFileSync('mkfifo', [path]);
  return path;
}

/** A sparse file of `bytes` bytes (no disk used), to cross a size cap. */
export function sparseFile(path: string, bytes: number): string {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, bytes);
  closeSync(fd);
  return path;
}

export function hostileTargets(dir: string): HostileTargets {
  mkdirSync(dir, { recursive: true });
  const outsideFile = join(dir, 'secret.txt');
  writeFileSync(outsideFile, 'a file of the machine no bundle may name\n');
  const outsideSha256 = execFileSync('sha256sum', [outsideFile]).toString().split(' ')[0] ?? '';
  const folder = join(dir, 'a-folder');
  mkdirSync(folder);
  return { devZero: '/dev/zero', fifo: mkfifo(join(dir, 'fifo')), folder, outsideFile, outsideSha256 };
}

/**
 * A copy of a committed reference bundle at `dest`, its manifest edited by `edit`. The weights
 * stay named by absolute path inside fixtures/weights (the embedded weights root) unless the
 * edit changes them. case.id and provenance are covered by no digest, so the copy still opens.
 */
export function copyBundle(dest: string, edit: (manifest: ManifestJson) => void = () => undefined, caseId = SMALL_CASE): string {
  cpSync(referenceBundle(caseId), dest, { recursive: true });
  const manifestPath = join(dest, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ManifestJson;
  manifest.provenance.model.weights_file = join(referenceBundle(caseId), manifest.provenance.model.weights_file);
  edit(manifest);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return dest;
}

export interface ManifestJson {
  case: { id: string; description: string };
  provenance: { model: { weights_file: string; weights_sha256: string } };
  files: { path: string; sha256: string; bytes: number }[];
  [key: string]: unknown;
}

/** The kinds of special file every file-naming entry point is fed. */
export const VARIANTS = ['dev-zero', 'fifo', 'folder', 'symlink', 'oversized'] as const;
export type Variant = (typeof VARIANTS)[number];

/**
 * A path the user names directly: the target itself, or a symlink to the device; for
 * 'oversized', a sparse file one byte over `capBytes` (null: the entry point has no cap).
 */
export function userNamedVariant(targets: HostileTargets, variant: Variant, scratch: string, capBytes: number | null): string | null {
  switch (variant) {
    case 'dev-zero':
      return targets.devZero;
    case 'fifo':
      return targets.fifo;
    case 'folder':
      return targets.folder;
    case 'symlink': {
      const link = join(scratch, 'link-to-device');
      symlinkSync(targets.devZero, link);
      return link;
    }
    case 'oversized':
      return capBytes === null ? null : sparseFile(join(scratch, 'oversized'), capBytes + 1);
  }
}

/**
 * Puts the variant at `name` inside a bundle folder (replacing what is there); a symlink points
 * out of the bundle. False when the variant means nothing there (oversized without a cap).
 */
export function variantInsideBundle(targets: HostileTargets, variant: Variant, bundleDir: string, name: string, capBytes: number | null): boolean {
  const at = join(bundleDir, name);
  rmSync(at, { force: true, recursive: true });
  switch (variant) {
    case 'dev-zero':
      symlinkSync(targets.devZero, at);
      return true;
    case 'fifo':
      mkfifo(at);
      return true;
    case 'folder':
      mkdirSync(at);
      return true;
    case 'symlink':
      symlinkSync(targets.outsideFile, at);
      return true;
    case 'oversized':
      if (capBytes === null) return false;
      sparseFile(at, capBytes + 1);
      return true;
  }
}

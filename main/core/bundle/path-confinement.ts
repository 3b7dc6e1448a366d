// Every path built from bundle content goes through this module:
//   - manifest paths (files[], pass and input `file`) are confined to the bundle folder, lexically
//     (absolute paths, `..`) and through symlinks (resolveInsideBundle);
//   - names that become folder or file names of ours (case.id in runs/<case>-<time>, serve's
//     work folder, the gate's per-case folder, an exported WAV's name) are reduced to one safe
//     path component (safePathComponent) and joined under their root (confinedChild), so no
//     bundle can make a capture write outside the folder the user chose.
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep, win32 } from 'node:path';
import { BundleError, type BundleErrorCode } from './errors.ts';

export interface PathProblem {
  readonly code: BundleErrorCode;
  readonly message: string;
}

/**
 * Lexical check of a bundle-relative path: forward slashes, no absolute or drive-rooted path,
 * no `..`, no empty or `.` segment (one spelling per file, so `files[]` entries and the `file`
 * fields that use them compare as plain strings). Returns null when the path is acceptable.
 */
export function checkBundlePath(path: string): PathProblem | null {
  if (path.length === 0) return { code: 'E_PATH_INVALID', message: 'empty path' };
  if (path.includes('\0')) return { code: 'E_PATH_INVALID', message: 'path contains a NUL character' };
  if (isAbsolute(path) || win32.isAbsolute(path) || /^[A-Za-z]:/.test(path)) {
    return { code: 'E_PATH_ABSOLUTE', message: `"${path}" is absolute; bundle paths are relative to the bundle folder` };
  }
  const segments = path.split(/[\\/]/);
  if (segments.includes('..')) {
    return { code: 'E_PATH_ESCAPE', message: `"${path}" uses ".." and could leave the bundle folder` };
  }
  if (path.includes('\\')) {
    return { code: 'E_PATH_INVALID', message: `"${path}" uses a backslash; bundle paths use forward slashes` };
  }
  if (segments.some((segment) => segment === '' || segment === '.')) {
    return { code: 'E_PATH_INVALID', message: `"${path}" has an empty or "." segment; write it as a/b.safetensors` };
  }
  return null;
}

/** Where a path came from, for the error message. */
export interface PathBlame {
  /** The manifest (or other file) naming the path. */
  readonly file: string;
  /** The field holding it, e.g. `passes[2].file`. */
  readonly field: string;
}

/**
 * Resolves `relPath` inside `bundleDir` and returns its real absolute path, after the lexical
 * check and a realpath check that the target (symlinks followed) is inside the bundle's real
 * folder. A path that does not exist is E_FILE_MISSING.
 */
export async function resolveInsideBundle(bundleDir: string, relPath: string, blame: PathBlame): Promise<string> {
  const problem = checkBundlePath(relPath);
  if (problem !== null) throw new BundleError(problem.code, blame.file, blame.field, problem.message);
  let realDir: string;
  try {
    realDir = await realpath(bundleDir);
  } catch (cause) {
    throw new BundleError('E_FILE_MISSING', blame.file, blame.field, `the bundle folder ${bundleDir} does not exist`, { cause });
  }
  let realTarget: string;
  try {
    realTarget = await realpath(join(realDir, relPath));
  } catch (cause) {
    throw new BundleError('E_FILE_MISSING', blame.file, blame.field, `"${relPath}" does not exist in the bundle folder ${bundleDir}`, { cause });
  }
  if (!isWithin(realDir, realTarget)) {
    throw new BundleError(
      'E_PATH_ESCAPE',
      blame.file,
      blame.field,
      `"${relPath}" resolves to ${realTarget}, outside the bundle folder ${realDir} (a symlink leaves the bundle)`,
    );
  }
  return realTarget;
}

/** True when `target` is strictly inside `dir` (both absolute, already resolved). */
export function isWithin(dir: string, target: string): boolean {
  const rel = relative(dir, target);
  return rel !== '' && !isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`);
}

/** Longest safe component kept from an untrusted name (room left for a timestamp suffix). */
export const MAX_COMPONENT_CHARS = 64;
const SAFE_COMPONENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * An untrusted name (a manifest's case.id, a boundary name) as one path component that cannot
 * leave its folder or break a file system call: letters, digits, `.`, `_` and `-` only, starting
 * with a letter or digit (so never `.`, `..` or a hidden name), at most MAX_COMPONENT_CHARS long.
 * Separators, NUL and every other character become `_`; a name with nothing usable left is
 * `fallback`. A name that is already safe is kept as it is.
 */
export function safePathComponent(untrusted: string, fallback = 'case'): string {
  if (SAFE_COMPONENT.test(untrusted) && untrusted.length <= MAX_COMPONENT_CHARS) return untrusted;
  const cleaned = untrusted
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, MAX_COMPONENT_CHARS);
  return cleaned === '' ? fallback : cleaned;
}

/**
 * `root/component` for a folder or file we are about to create from an untrusted name, checked
 * to stay under the root: `component` must be one safe component (safePathComponent), and if
 * the name is already taken by a symlink, it must not lead outside the root's real folder.
 * `root` must exist. Throws PathConfinementError otherwise.
 */
export async function confinedChild(root: string, component: string): Promise<string> {
  if (!SAFE_COMPONENT.test(component) || component.length > MAX_COMPONENT_CHARS + 64) {
    throw new PathConfinementError(root, component, 'is not one safe path component');
  }
  const realRoot = await realpath(root);
  const child = join(realRoot, component);
  let taken = false;
  try {
    taken = (await lstat(child)).isSymbolicLink();
  } catch {
    taken = false;
  }
  if (taken) {
    let target: string;
    try {
      target = await realpath(child);
    } catch {
      throw new PathConfinementError(root, component, 'is a dangling symlink');
    }
    if (!isWithin(realRoot, target)) throw new PathConfinementError(root, component, `is a symlink to ${target}, outside ${realRoot}`);
  }
  if (!isWithin(realRoot, child)) throw new PathConfinementError(root, component, `would lie outside ${realRoot}`);
  return child;
}

export class PathConfinementError extends Error {
  override name = 'PathConfinementError';
  constructor(
    readonly root: string,
    readonly component: string,
    reason: string,
  ) {
    super(`${JSON.stringify(component)} under ${root} ${reason}`);
  }
}

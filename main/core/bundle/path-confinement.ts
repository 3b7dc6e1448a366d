// Confinement of manifest paths to the bundle folder: a manifest names files relative to its
// own folder and may never reach outside it, lexically (absolute paths, `..`) or through a
// symlink whose target lies elsewhere.
import { realpath } from 'node:fs/promises';
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

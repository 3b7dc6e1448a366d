// Creates the folder a command writes into (capture --out, --work, report parents), one level at
// a time, so every refusal is immediate and named. Node's recursive mkdir retries for ever when
// a file system answers ENOENT for a folder whose parent exists (/proc, /sys do): `--out
// /proc/x` hung instead of failing.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export class OutputFolderError extends Error {
  override name = 'OutputFolderError';
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? 'EUNKNOWN';
}

function why(code: string, at: string): string {
  switch (code) {
    case 'ENOENT':
      return `${dirname(at)} refuses new folders (a special file system such as /proc or /sys?)`;
    case 'EACCES':
    case 'EPERM':
      return `no permission to create ${at}`;
    case 'EROFS':
      return `${at} is on a read-only file system`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `no space left to create ${at}`;
    case 'ENAMETOOLONG':
      return `the name ${at} is too long`;
    default:
      return `cannot create ${at} (${code})`;
  }
}

/**
 * Makes sure `dir` exists as a folder, creating missing levels one by one. `what` names the
 * option or role in errors (e.g. "--out"). Throws OutputFolderError, never hangs. (Metadata
 * calls only, each one system call: synchronous, so the app's settings writer can use it too.)
 */
export async function createOutputFolder(dir: string, what: string, mode?: number): Promise<void> {
  createOutputFolderSync(dir, what, mode);
}

/** createOutputFolder for synchronous callers; `mode` applies to the levels it creates. */
export function createOutputFolderSync(dir: string, what: string, mode?: number): void {
  const target = resolve(dir);
  const missing: string[] = [];
  let at = target;
  for (;;) {
    try {
      const info = statSync(at);
      if (!info.isDirectory()) {
        const kind = info.isFile() ? 'is a file, not a folder' : 'exists and is not a folder';
        throw new OutputFolderError(
          at === target ? `${what} ${target} ${kind}` : `${what} ${target} lies below a file: ${at} ${kind}; nothing can be created below it`,
        );
      }
      break;
    } catch (error) {
      if (error instanceof OutputFolderError) throw error;
      const code = codeOf(error);
      // ENOTDIR: some level above is not a folder; walk up to it so the error names it.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new OutputFolderError(`${what} ${target}: ${why(code, at)}`);
      const parent = dirname(at);
      if (parent === at) throw new OutputFolderError(`${what} ${target}: no existing folder above it`);
      missing.unshift(at);
      at = parent;
    }
  }
  for (const level of missing) {
    try {
      mkdirSync(level, mode);
    } catch (error) {
      const code = codeOf(error);
      if (code === 'EEXIST' && isFolder(level)) continue; // made meanwhile
      throw new OutputFolderError(`${what} ${target}: ${why(code, level)}`);
    }
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

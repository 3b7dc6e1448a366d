// Freshness of the fixtures index: a sha256sum-style list ("<sha256>  <path>", paths relative
// to the index's folder). Fresh means every listed file exists with that digest and every file
// under the listed top folders is listed: no stale, missing or unrecorded evidence.
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { sha256File } from './digest.ts';
import { BundleError } from './errors.ts';
import { checkBundlePath } from './path-confinement.ts';

export interface FreshnessMismatch {
  readonly path: string;
  readonly expected: string;
  readonly actual: string;
}

export interface FreshnessReport {
  readonly indexFile: string;
  /** The folder listed paths are relative to. */
  readonly root: string;
  /** Files listed in the index. */
  readonly listed: number;
  readonly mismatches: readonly FreshnessMismatch[];
  /** Listed but absent. */
  readonly missing: readonly string[];
  /** Present under a listed top folder but not listed. */
  readonly unlisted: readonly string[];
  /** True when nothing is mismatched, missing or unlisted. */
  readonly fresh: boolean;
}

export interface IndexEntry {
  readonly sha256: string;
  readonly path: string;
}

const INDEX_LINE = /^([0-9a-f]{64}) [ *](.+)$/;

/** Parses index text: blank lines and `#` comments are skipped; anything else malformed throws. */
export function parseFixturesIndex(text: string, indexFile: string): IndexEntry[] {
  const entries: IndexEntry[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((rawLine, i) => {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '' || line.startsWith('#')) return;
    const field = `line ${i + 1}`;
    const match = INDEX_LINE.exec(line);
    if (match === null) {
      throw new BundleError(
        'E_INDEX_FORMAT',
        indexFile,
        field,
        `expected "<64 lowercase hex sha256>  <relative path>", found ${JSON.stringify(line.slice(0, 120))}`,
      );
    }
    const [, sha256, path] = match as unknown as [string, string, string];
    const problem = checkBundlePath(path);
    if (problem !== null) throw new BundleError('E_INDEX_FORMAT', indexFile, field, problem.message);
    if (seen.has(path)) throw new BundleError('E_INDEX_FORMAT', indexFile, field, `"${path}" is listed twice`);
    seen.add(path);
    entries.push({ sha256, path });
  });
  return entries;
}

/** Checks the index against the disk. A mismatch is reported, never thrown. */
export async function verifyFreshness(indexFile: string): Promise<FreshnessReport> {
  let text: string;
  try {
    text = await readFile(indexFile, 'utf8');
  } catch (cause) {
    throw new BundleError('E_INDEX_FORMAT', indexFile, '(file)', 'cannot be read', { cause });
  }
  const entries = parseFixturesIndex(text, indexFile);
  const root = dirname(indexFile);
  const mismatches: FreshnessMismatch[] = [];
  const missing: string[] = [];
  for (const entry of entries) {
    let actual: string;
    try {
      actual = (await sha256File(join(root, entry.path))).sha256;
    } catch {
      missing.push(entry.path);
      continue;
    }
    if (actual !== entry.sha256) mismatches.push({ path: entry.path, expected: entry.sha256, actual });
  }

  const listed = new Set(entries.map((entry) => entry.path));
  const indexRelative = relative(root, indexFile).split(sep).join('/');
  const topFolders = new Set<string>();
  for (const entry of entries) {
    const slash = entry.path.indexOf('/');
    if (slash > 0) topFolders.add(entry.path.slice(0, slash));
  }
  const unlisted: string[] = [];
  for (const folder of [...topFolders].sort()) {
    for (const file of await filesUnder(root, folder)) {
      if (!listed.has(file) && file !== indexRelative) unlisted.push(file);
    }
  }
  return {
    indexFile,
    root,
    listed: entries.length,
    mismatches,
    missing,
    unlisted,
    fresh: mismatches.length === 0 && missing.length === 0 && unlisted.length === 0,
  };
}

/** Every non-folder entry under `root/folder` (symlinks not followed), as `/`-joined relative paths. */
async function filesUnder(root: string, folder: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (relativeDir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(root, relativeDir), { withFileTypes: true });
    } catch {
      return; // the folder itself is gone: its listed files are reported missing
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else out.push(path);
    }
  };
  await walk(folder);
  return out;
}

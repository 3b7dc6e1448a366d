// Writes a report file (--json, --junit) that must not exist yet, all or nothing: the text goes
// to a temporary file in the same folder, which is linked into place only once complete. A full
// disk or a crash halfway leaves no file under the report's name (a 0-byte or cut-short report
// would both mislead and block the next run, which refuses to overwrite it); the temporary file
// is removed whatever happens.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import { createOutputFolder } from '../io/output-folder.ts';
import { basename, dirname, join } from 'node:path';

export class NewFileExistsError extends Error {
  override name = 'NewFileExistsError';
}

export async function writeNewFileAtomically(path: string, text: string): Promise<void> {
  await createOutputFolder(dirname(path), `the folder of ${path}`);
  if (existsSync(path)) throw new NewFileExistsError(`${path} already exists`);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temp, path); // atomic, and never replaces: EEXIST if the name was taken meanwhile
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new NewFileExistsError(`${path} already exists`);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
      // A file system without hard links: check, then rename (a narrow race, never a torn file).
      if (existsSync(path)) throw new NewFileExistsError(`${path} already exists`);
      await rename(temp, path);
    }
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

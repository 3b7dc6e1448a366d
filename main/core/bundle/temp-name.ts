// The name a bundle writer gives a file until it is complete and linked (renamed) into place:
// hidden, beside the file, unique to this process. TEMP_FILE_PATTERN matches every such name, so
// recovery and a finished bundle's clean-up remove what a death left half written.
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

export const TEMP_FILE_PATTERN = /^\..+\.tmp-\d+-[0-9a-f]+$/;

/** A fresh temporary path beside `path`, for writing it before it is renamed into place. */
export function tempPathBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

// The engine library as a file: present, readable and a regular file. Checked where the library
// is loaded, and by the gate before it hashes any evidence, so that a mistyped --engine is
// refused at once instead of after the reference bundles (gigabytes, at scale) are verified.
import { readFileSync, statSync } from 'node:fs';
import { EngineLoadError } from './engine-errors.ts';

function unreadable(library: string, error: unknown): EngineLoadError {
  const code = (error as NodeJS.ErrnoException).code;
  return new EngineLoadError({
    library,
    failure: 'missing_file',
    detail: code === 'ENOENT' ? 'no such file (build the engine, or check the path)' : `cannot read the library (${String(code ?? error)})`,
  });
}

/** Throws EngineLoadError naming `library` unless it is a regular file this process can stat. */
export function assertEngineFile(library: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(library).isFile();
  } catch (error) {
    throw unreadable(library, error);
  }
  if (!isFile) throw new EngineLoadError({ library, failure: 'not_regular_file', detail: 'not a regular file (an engine is a shared library)' });
}

/** The library's bytes (for its sha256), after assertEngineFile; EngineLoadError naming it if unreadable. */
export function readEngineFile(library: string): Buffer {
  assertEngineFile(library);
  try {
    return readFileSync(library);
  } catch (error) {
    throw unreadable(library, error);
  }
}

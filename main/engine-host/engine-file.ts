// The engine library as a file: present, readable and a regular file. Checked where the library
// is loaded, and by the gate before it hashes any evidence, so that a mistyped --engine is
// refused at once instead of after the reference bundles (gigabytes, at scale) are verified.
import { statSync } from 'node:fs';
import { EngineLoadError } from './engine-errors.ts';

/** Throws EngineLoadError naming `library` unless it is a regular file this process can stat. */
export function assertEngineFile(library: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(library).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngineLoadError({
      library,
      failure: 'missing_file',
      detail: code === 'ENOENT' ? 'no such file (build the engine, or check the path)' : `cannot read the library (${String(code ?? error)})`,
    });
  }
  if (!isFile) throw new EngineLoadError({ library, failure: 'not_regular_file', detail: 'not a regular file (an engine is a shared library)' });
}

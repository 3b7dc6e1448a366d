// Where the files a receipt's subjects name live on this machine, so that verifying a receipt
// text (which carries names and digests, never paths) can re-hash them. Two sources:
//   - the receipts this process exported: the gate knew each subject's file (the engine
//     library, each manifest, the weights), recorded here by name;
//   - the embedded default's folders (engine/build, fixtures/bundles, fixtures/weights), where
//     the subjects of a receipt over the reference engine and the committed cases live.
// The latest export wins for a name: a subject file changed since then must fail, not be
// passed over because its new digest matches nothing.
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { embeddedDefaults, packageRoot } from '../core/tool/tool-info.ts';

const exported = new Map<string, string>();

/** Records the file behind each subject name of a receipt this process wrote. */
export function rememberSubjectFiles(files: Iterable<readonly [name: string, path: string]>): void {
  for (const [name, path] of files) exported.set(name, path);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The file holding subject `name`, or null when none is known here. */
export function locateSubjectFile(name: string): string | null {
  const remembered = exported.get(name);
  if (remembered !== undefined && isFile(remembered)) return remembered;
  const defaults = embeddedDefaults();
  const folders = [dirname(defaults.engineLibrary), defaults.bundlesDir, join(packageRoot(), 'fixtures', 'weights')];
  for (const folder of folders) {
    const candidate = join(folder, name);
    if (isFile(candidate)) return candidate;
  }
  return null;
}

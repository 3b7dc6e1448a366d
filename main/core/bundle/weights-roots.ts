// Where a bundle's provenance.model.weights_file may point. The weights live outside the bundle
// by design (one weights file serves many cases), but a bundle is untrusted: left unconfined, a
// weights_file of /dev/zero or a FIFO hung capture, and any file on the machine could be hashed
// and its sha256 printed. A bundle-named weights file must therefore resolve, symlinks
// followed, inside one of these roots:
//   - the bundle folder itself;
//   - the embedded weights root, <package>/fixtures/weights (the committed cases' weights);
//   - every folder listed in $TRACE_INSPECTOR_WEIGHTS_ROOTS (path-delimiter separated), for
//     your own model's bundles.
// A weights file the user names directly (capture --weights) is the user's own choice and is
// not confined; it is still read only if it is a regular file.
import { realpath } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { packageRoot } from '../tool/tool-info.ts';
import { isWithin } from './path-confinement.ts';

export const WEIGHTS_ROOTS_ENV = 'TRACE_INSPECTOR_WEIGHTS_ROOTS';

/** The committed fixtures' weights folder. */
export function embeddedWeightsRoot(): string {
  return join(packageRoot(), 'fixtures', 'weights');
}

/** The roots a bundle in `bundleDir` may take its weights from, as given (not yet resolved). */
export function weightsRoots(bundleDir: string, env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const listed = (env[WEIGHTS_ROOTS_ENV] ?? '').split(delimiter).filter((entry) => entry !== '' && isAbsolute(entry));
  return [resolve(bundleDir), embeddedWeightsRoot(), ...listed];
}

/** The real path of `target` when it lies inside one of `roots` (each resolved), else null. */
export async function insideSomeRoot(target: string, roots: readonly string[]): Promise<boolean> {
  for (const root of roots) {
    let realRoot: string;
    try {
      realRoot = await realpath(root);
    } catch {
      continue; // a root that does not exist holds nothing
    }
    if (isWithin(realRoot, target)) return true;
  }
  return false;
}

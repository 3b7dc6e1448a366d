// Test bundles name weights beside their case folders, outside the bundle: the tests list that
// folder as a weights root, exactly as a user lists theirs (main/core/bundle/weights-roots.ts).
import { delimiter } from 'node:path';
import { WEIGHTS_ROOTS_ENV } from '../../main/core/bundle/weights-roots.ts';

/** Adds `dir` to $TRACE_INSPECTOR_WEIGHTS_ROOTS of this test process (and the processes it starts). */
export function allowWeightsRoot(dir: string): void {
  const listed = (process.env[WEIGHTS_ROOTS_ENV] ?? '').split(delimiter).filter((entry) => entry !== '');
  if (!listed.includes(dir)) process.env[WEIGHTS_ROOTS_ENV] = [...listed, dir].join(delimiter);
}

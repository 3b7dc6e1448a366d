// `trace-inspector check`: every problem of a bundle at once — the manifest's schema and rules,
// each listed file (confined, regular, size, sha256 and its tensors' sha256 in the same read),
// each safetensors header against the manifest, a reference's declared padding — and, given its reference, whether an oracle or a second
// reference stores every boundary as the reference does. Writers (the Python kit) run it when
// they close a bundle; users run it before they hand a bundle to someone else.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BundleError, formatFieldPath, type BundleErrorCode } from './errors.ts';
import { MANIFEST_FILE_NAME, type BundleManifest } from './manifest-schema.ts';
import { openBundleFromManifest, readManifest } from './bundle-reader.ts';
import { bundleFileProblems } from './verify-bundle-files.ts';
import { GuardedReadError } from '../io/guarded-read.ts';
import { checkDeclaredPadding } from './padding-check.ts';
import { resolveInsideBundle } from './path-confinement.ts';

export interface BundleProblem {
  readonly code: BundleErrorCode | 'E_REFERENCE_MISMATCH';
  readonly file: string;
  readonly field: string;
  readonly message: string;
}

export interface BundleCheckReport {
  readonly dir: string;
  readonly kind: string | null;
  readonly caseId: string | null;
  readonly passes: number;
  readonly boundaries: number;
  /** Bytes of the listed files, every one hashed. */
  readonly fileBytes: number;
  readonly problems: readonly BundleProblem[];
}

function problemsOf(error: BundleError): BundleProblem[] {
  return error.issues.map((issue) => ({ code: issue.code, file: error.file, field: issue.field, message: issue.message }));
}

/** Runs `work`; a BundleError becomes problems, anything else (an I/O error) one problem too. */
async function collect(problems: BundleProblem[], file: string, field: string, work: () => Promise<void>): Promise<boolean> {
  try {
    await work();
    return true;
  } catch (error) {
    if (error instanceof BundleError) problems.push(...problemsOf(error));
    else problems.push({ code: 'E_FILE_MISSING', file, field, message: (error as Error).message });
    return false;
  }
}

/**
 * Each listed file: confined, regular, its size; then every file that passed those hashed (on
 * the same worker pool and with the same rules as opening a bundle: verify-bundle-files.ts),
 * each file's first digest problem reported (its own, its tensors', their chunks').
 */
async function checkFiles(dir: string, manifest: BundleManifest, manifestPath: string, problems: BundleProblem[]): Promise<void> {
  const realPaths = new Map<string, string>();
  for (const [f, entry] of manifest.files.entries()) {
    const field = formatFieldPath(['files', f]);
    const shown = join(dir, entry.path);
    await collect(problems, shown, `${field}.path`, async () => {
      const real = await resolveInsideBundle(dir, entry.path, { file: manifestPath, field: `${field}.path` });
      const info = await stat(real);
      if (!info.isFile()) throw new BundleError('E_FILE_NOT_REGULAR', shown, `${field}.path`, 'is not a regular file');
      if (info.size !== entry.bytes) {
        throw new BundleError('E_FILE_SIZE', shown, `${field}.bytes`, `${MANIFEST_FILE_NAME} lists ${entry.bytes} bytes, the file holds ${info.size}`);
      }
      realPaths.set(entry.path, real);
    });
  }
  for (const error of await bundleFileProblems(manifest, realPaths, (path) => join(dir, path))) {
    if (error instanceof BundleError) problems.push(...problemsOf(error));
    else problems.push({ code: 'E_FILE_NOT_REGULAR', file: error instanceof GuardedReadError ? error.path : dir, field: '(file)', message: error.message });
  }
}

/** Boundaries a reference declares that `manifest` (an oracle or another reference of the case) stores differently or lacks. */
export function referenceMismatches(manifest: BundleManifest, manifestPath: string, reference: BundleManifest, referencePath: string): BundleProblem[] {
  const problems: BundleProblem[] = [];
  const add = (field: string, message: string): void => {
    problems.push({ code: 'E_REFERENCE_MISMATCH', file: manifestPath, field, message });
  };
  if (manifest.case.id !== reference.case.id) add('case.id', `"${manifest.case.id}" but the reference ${referencePath} is case "${reference.case.id}"`);
  if (manifest.passes.length !== reference.passes.length) add('passes', `${manifest.passes.length} passes, the reference has ${reference.passes.length}`);
  for (const [p, refPass] of reference.passes.entries()) {
    const pass = manifest.passes[p];
    if (pass === undefined) continue;
    const byName = new Map(pass.boundaries.map((boundary, b) => [boundary.name, { boundary, b }]));
    for (const refBoundary of refPass.boundaries) {
      const found = byName.get(refBoundary.name);
      if (found === undefined) {
        add(formatFieldPath(['passes', p, 'boundaries']), `lacks "${refBoundary.name}", which the reference records in pass ${p}`);
        continue;
      }
      const { boundary, b } = found;
      const at = (name: string): string => formatFieldPath(['passes', p, 'boundaries', b, name]);
      if (boundary.dtype !== refBoundary.dtype) {
        const hint =
          manifest.kind === 'oracle-f64' && boundary.dtype === 'F64'
            ? ': an oracle stores each boundary in the dtype the reference (and the engine) declares, rounded to nearest from float64, so the comparison judges the same values (the Python kit does this when given reference=)'
            : '';
        add(at('dtype'), `"${boundary.name}" is ${boundary.dtype}, the reference stores ${refBoundary.dtype}${hint}`);
      }
      if (boundary.shape.join(',') !== refBoundary.shape.join(',')) {
        add(at('shape'), `"${boundary.name}" is [${boundary.shape.join(', ')}], the reference's is [${refBoundary.shape.join(', ')}]`);
      }
    }
  }
  return problems;
}

export interface CheckBundleOptions {
  /** The reference this bundle (an oracle) belongs to. */
  readonly reference?: string;
}

export async function checkBundle(dir: string, options: CheckBundleOptions = {}): Promise<BundleCheckReport> {
  const manifestPath = join(dir, MANIFEST_FILE_NAME);
  const problems: BundleProblem[] = [];
  let manifest: BundleManifest | null = null;
  await collect(problems, manifestPath, '(file)', async () => {
    manifest = await readManifest(dir, manifestPath);
  });
  const parsed = manifest as BundleManifest | null;
  if (parsed === null) return { dir, kind: null, caseId: null, passes: 0, boundaries: 0, fileBytes: 0, problems };

  const fileBytes = parsed.files.reduce((sum, file) => sum + file.bytes, 0);
  const boundaries = parsed.passes.reduce((sum, pass) => sum + pass.boundaries.length, 0);
  const fileProblems = problems.length;
  await checkFiles(dir, parsed, manifestPath, problems);
  if (problems.length === fileProblems) {
    // Headers against the manifest, then (references and oracles) their declared padding.
    await collect(problems, manifestPath, '(headers)', async () => {
      const bundle = await openBundleFromManifest(dir, parsed, manifestPath, { verify: 'none' });
      try {
        if (parsed.kind !== 'native') await checkDeclaredPadding(bundle, (relPath) => join(dir, relPath));
      } finally {
        await bundle.close();
      }
    });
  }
  if (options.reference !== undefined) {
    const referencePath = join(options.reference, MANIFEST_FILE_NAME);
    await collect(problems, referencePath, '(file)', async () => {
      const reference = await readManifest(options.reference as string, referencePath);
      problems.push(...referenceMismatches(parsed, manifestPath, reference, referencePath));
    });
  }
  return { dir, kind: parsed.kind, caseId: parsed.case.id, passes: parsed.passes.length, boundaries, fileBytes, problems };
}

// Locations the tests share: the checkout, the built engines and the committed fixtures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REFERENCE_ENGINE = join(REPO_ROOT, 'engine', 'build', 'libti_reference.so');
export const TESTLIB_DIR = join(REPO_ROOT, 'engine', 'build', 'testlibs');
export const MINIMAL_ENGINE = join(REPO_ROOT, 'engine', 'build', 'examples', 'libminimal_engine.so');
/** The same engine written with the helper header (engine/helpers/ti_helper.h). */
export const HELPER_MINIMAL_ENGINE = join(REPO_ROOT, 'engine', 'build', 'examples', 'libhelper_minimal_engine.so');
export const ASAN_DRIVER = join(REPO_ROOT, 'engine', 'build', 'asan', 'ti_driver');
export const FIXTURES_DIR = join(REPO_ROOT, 'fixtures');
export const BUNDLES_DIR = join(FIXTURES_DIR, 'bundles');
export const WEIGHTS_FILE = join(FIXTURES_DIR, 'weights', 'tiny-lfm2.5-audio.safetensors');
export const CLI = join(REPO_ROOT, 'bin', 'trace-inspector.js');

/** Every committed case; a case that disappears must fail the suite, so this list is explicit. */
export const CASES = [
  'interleaved',
  'topk_ties',
  'eoa_countdown',
  'im_end',
  'text_end',
  'prefill_1tok',
  'nan_inf',
  'greedy',
  'speech',
  'silence',
  'tail',
  'clipped',
] as const;
/** The cases that run the whole pipeline, PCM in to PCM out. */
export const AUDIO_CASES = ['speech', 'silence', 'tail', 'clipped'] as const;

export function referenceBundle(caseId: string): string {
  return join(BUNDLES_DIR, caseId, 'reference');
}

export function oracleBundle(caseId: string): string {
  return join(BUNDLES_DIR, caseId, 'oracle-f64');
}

export function freshTempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `ti-${prefix}-`));
}

/**
 * Temp folders that one test file removes together: `tempDir(label)` makes
 * ti-<area>-<label>-XXXXXX and remembers it, `removeTempDirs()` (in afterAll/afterEach) removes
 * every folder made so far.
 */
export function tempDirTracker(area: string): { tempDir(label: string): string; removeTempDirs(): void } {
  const made: string[] = [];
  return {
    tempDir(label: string): string {
      const dir = freshTempDir(`${area}-${label}`);
      made.push(dir);
      return dir;
    },
    removeTempDirs(): void {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

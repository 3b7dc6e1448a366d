// Layer isolation for the app: a fresh capture of the case with `isolate` (capture-run.ts), so
// a normal run and an isolated run (every injectable boundary fed the reference value) land in a
// new folder under the session's work folder, then local vs accumulated error per (pass,
// boundary) from local-vs-accumulated.ts. Engine failures (a crash, a hang, an error, an
// option or input the engine refuses) come back as status 'error' with the specific message:
// they are findings about the engine, not failures of the app.
import { mkdtemp } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { toWire, type LayerIsolation } from '../../protocol/inspector-api.ts';
import { openBundle } from '../core/bundle/bundle-reader.ts';
import { isFloatDType } from '../core/bundle/dtype.ts';
import { BundleError } from '../core/bundle/errors.ts';
import type { RunOutcome } from '../core/bundle/manifest-schema.ts';
import { captureRun, type CaptureResult } from '../core/capture/capture-run.ts';
import { compareLocalVsAccumulated, type ErrorStats, type LocalVsAccumulatedRow } from '../core/capture/local-vs-accumulated.ts';
import { CALL_CODES, codeOf } from './session-errors.ts';
import { createOutputFolder } from '../core/io/output-folder.ts';

export interface LayerIsolationInput {
  library: string;
  referenceDir: string;
  engineOptions: Record<string, string>;
  isolation: 'process' | 'thread';
  /** The session's work folder; the runs go to a new `isolation-*` folder inside it. */
  workDir: string;
  teacherForce: boolean;
}

/**
 * Errors that report what the engine (or the evidence it left) did, not a bug of ours: the
 * engine's failures as session-errors.ts codes them, and a bundle that fails validation.
 */
function isRunFailure(error: unknown): error is Error {
  return (codeOf(error) === CALL_CODES.engine && error instanceof Error) || error instanceof BundleError;
}

function describeOutcome(which: string, run: RunOutcome): string {
  const where = run.last_pass === null ? '' : ` in pass ${run.last_pass}${run.last_boundary === null ? '' : ` after boundary ${run.last_boundary}`}`;
  return `the ${which} run ended with status ${run.status}${where}${run.message ? `: ${run.message}` : ''}`;
}

/** The isolated bundle's folder when both runs completed, else why the capture cannot be compared. */
function isolatedDirOf(result: CaptureResult): { dir: string } | { problem: string } {
  if (result.run.status !== 'completed' || result.manifestPath === null) return { problem: describeOutcome('normal', result.run) };
  const isolated = result.isolated;
  if (isolated === undefined) return { problem: 'the capture did not make an isolated run' };
  if (isolated.skipped !== null) return { problem: isolated.skipped };
  if (isolated.run === null || isolated.manifestPath === null) return { problem: `the isolated run in ${isolated.dir} left no readable bundle` };
  if (isolated.run.status !== 'completed') return { problem: describeOutcome('isolated', isolated.run) };
  return { dir: isolated.dir };
}

/** A side the comparator could not judge (missing, dtype or shape mismatch) travels as NaN. */
function pair(stats: ErrorStats | null): LayerIsolation['rows'][number]['local'] {
  return stats === null ? { maxAbs: 'NaN', rmse: 'NaN' } : { maxAbs: toWire(stats.maxAbs), rmse: toWire(stats.rmse) };
}

function summarize(rows: readonly LocalVsAccumulatedRow[], dir: string): string {
  const addsError = rows.filter((row) => row.local?.passed === false).length;
  const unjudged = rows.filter((row) => row.local === null || row.accumulated === null);
  const parts = [`${rows.length} float boundaries compared (runs in ${dir})`, `${addsError} where the local error alone is outside the contract`];
  if (unjudged.length > 0) {
    const first = unjudged[0] as LocalVsAccumulatedRow;
    parts.push(`${unjudged.length} not comparable on one side, shown as NaN (first: pass ${first.pass} ${first.boundary}: ${first.note})`);
  }
  return parts.join('; ');
}

export async function runLayerIsolation(input: LayerIsolationInput): Promise<LayerIsolation> {
  await createOutputFolder(input.workDir, 'the work folder');
  const dir = await mkdtemp(join(resolve(input.workDir), 'isolation-'));
  const outDir = join(dir, 'native');
  let result: CaptureResult;
  try {
    result = await captureRun({
      library: input.library,
      referenceDir: input.referenceDir,
      outDir,
      isolatedOutDir: join(dir, 'native-isolated'),
      isolate: true,
      teacherForce: input.teacherForce,
      isolation: input.isolation,
      options: input.engineOptions,
      command: 'trace-inspector app: layer isolation',
    });
  } catch (error) {
    if (isRunFailure(error)) return { status: 'error', message: error.message, rows: [] };
    throw error;
  }
  try {
    const isolatedRun = isolatedDirOf(result);
    if ('problem' in isolatedRun) return { status: 'error', message: isolatedRun.problem, rows: [] };
    const [native, isolated] = await Promise.all([openBundle(outDir), openBundle(isolatedRun.dir)]);
    try {
      // Integer boundaries (tokens, ids, states) have no magnitude of error: the rows are the float ones.
      const rows = (await compareLocalVsAccumulated(native, isolated, result.reference)).filter((row) => isFloatDType(row.dtype));
      return {
        status: 'ok',
        message: summarize(rows, dir),
        rows: rows.map((row) => ({ pass: row.pass, boundary: row.boundary, stage: row.stage, local: pair(row.local), accumulated: pair(row.accumulated) })),
      };
    } finally {
      await Promise.all([native.close(), isolated.close()]);
    }
  } catch (error) {
    if (isRunFailure(error)) return { status: 'error', message: error.message, rows: [] };
    throw error;
  } finally {
    await result.reference.close();
  }
}

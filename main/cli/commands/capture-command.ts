// `trace-inspector capture`: run an engine over a reference case, write the native bundle,
// print the per-boundary table.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { EngineLoadError } from '../../engine-host/engine-errors.ts';
import { assertEngineFile } from '../../engine-host/engine-file.ts';
import { BundleError } from '../../core/bundle/errors.ts';
import { openBundle } from '../../core/bundle/bundle-reader.ts';
import { admitReference, contractSourceOf } from '../../core/compare/reference-contracts.ts';
import { confinedChild, PathConfinementError, safePathComponent } from '../../core/bundle/path-confinement.ts';
import { assertRegularFile, GuardedReadError } from '../../core/io/guarded-read.ts';
import { createOutputFolder, OutputFolderError } from '../../core/io/output-folder.ts';
import { diffCapture, summarizeCaptureDiff } from '../../core/capture/capture-diff.ts';
import { CaptureAbortedError, CaptureWriteError, captureRun } from '../../core/capture/capture-run.ts';
import { formatCaptureTable } from '../../core/capture/capture-table.ts';
import { compareLocalVsAccumulated, formatLocalVsAccumulated } from '../../core/capture/local-vs-accumulated.ts';
import { embeddedDefaults } from '../../core/tool/tool-info.ts';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliIO } from '../cli-io.ts';
import { engineOptionsArg, isolationArg, jsonOutputArg, parseCommandArgs, timeoutArg } from '../command-args.ts';
import { humanChannel, outputPath, STDOUT } from '../run-outputs.ts';
import { serializeReport } from '../../core/report/json-report.ts';
import { writeNewFileAtomically } from '../../core/report/new-file.ts';
import { toolInfo } from '../../core/tool/tool-info.ts';
import type { BoundaryDiffRow, CaptureDiffSummary } from '../../core/capture/capture-diff.ts';
import type { CaptureResult } from '../../core/capture/capture-run.ts';
import { stopOnSignals } from '../stop-signals.ts';
import { InputError } from '../../core/io/input-error.ts';

export const CAPTURE_USAGE = `usage: trace-inspector capture [--engine <lib>] [--bundle <reference bundle>] [--out <dir>]
                              [--weights <file>] [--isolation process|thread] [--timeout <seconds>]
                              [--option key=value ...] [--per-pass] [--teacher-force] [--isolate]
                              [--contracts <file> | --contract bit_exact] [--json <file|->]

Runs the engine on the reference bundle's inputs and passes, writes the native bundle to --out
and prints a per-boundary table. Defaults: the built reference engine, the "interleaved" case,
--out runs/<case>-<time>, --isolation process, --timeout 60. --teacher-force injects the
reference's tokens and codes on every pass (the records keep the engine's own choices);
--isolate also captures <out>-isolated with every injectable boundary fed the reference value and
prints where error enters (local) vs where it is inherited (accumulated). See docs/self-test.md.
--contracts FILE / --contract bit_exact supply contracts (docs/compare.md): with them --bundle may
be a native bundle (another engine's capture) standing as the reference. --json writes how the
run ended, its passes and every compared row as JSON (- for stdout; the table then goes to stderr).
Ctrl+C (SIGINT) or SIGTERM stops the engine and finishes the bundle as "aborted" with every
sealed pass (exit 130 / 143; a second signal quits at once, leaving it for \`recover\`).
`;

const CaptureArgsSchema = z.object({
  engine: z.string().min(1).optional(),
  bundle: z.string().min(1).optional(),
  out: z.string().min(1).optional(),
  weights: z.string().min(1).optional(),
  isolation: isolationArg,
  timeout: timeoutArg,
  option: engineOptionsArg,
  'per-pass': z.boolean().default(false),
  'teacher-force': z.boolean().default(false),
  isolate: z.boolean().default(false),
  contracts: z.string().min(1, { error: '--contracts: expected a file' }).optional(),
  contract: z.enum(['bit_exact'], { error: '--contract: expected "bit_exact" (other contracts go in a --contracts file)' }).optional(),
  json: jsonOutputArg,
});

function parseCaptureArgs(argv: readonly string[]): z.infer<typeof CaptureArgsSchema> {
  return parseCommandArgs('capture', argv, CaptureArgsSchema);
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/**
 * The folder the capture writes: --out as given, else runs/<case>-<time> where <case> is the
 * reference's case.id made one safe path component (a bundle's case id is untrusted and
 * covered by no digest: "../../x" must not leave runs/). Created here, one level at a time, so
 * an impossible location (/proc, below a file, no permission) fails at once with its name.
 */
async function captureFolder(cwd: string, out: string | undefined, caseId: string): Promise<string> {
  try {
    if (out !== undefined) {
      const outDir = resolve(cwd, out);
      await createOutputFolder(outDir, '--out');
      return outDir;
    }
    const runsDir = resolve(cwd, 'runs');
    await createOutputFolder(runsDir, 'the runs folder');
    const outDir = await confinedChild(runsDir, `${safePathComponent(caseId)}-${timestamp()}`);
    await createOutputFolder(outDir, 'the capture folder');
    return outDir;
  } catch (error) {
    if (error instanceof OutputFolderError || error instanceof PathConfinementError) throw new InputError(error.message);
    throw error;
  }
}

export async function runCaptureCommand(argv: readonly string[], io: CliIO, commandLine: string): Promise<number> {
  const args = parseCaptureArgs(argv);
  const defaults = embeddedDefaults();
  const library = resolve(io.cwd, args.engine ?? defaults.engineLibrary);
  const referenceDir = resolve(io.cwd, args.bundle ?? join(defaults.bundlesDir, defaults.defaultCase, 'reference'));
  const options = Object.fromEntries(
    args.option.map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );

  if (args.contracts !== undefined && args.contract !== undefined) throw new InputError('capture: give --contracts FILE or --contract bit_exact, not both');
  let caseId: string;
  let referenceContracts;
  try {
    // The library file first: a mistyped --engine is refused before the reference is hashed.
    assertEngineFile(library);
    referenceContracts = await contractSourceOf({
      contractsFile: args.contracts === undefined ? null : resolve(io.cwd, args.contracts),
      contract: args.contract ?? null,
    });
    // Verified in full here (every file and tensor digest, its padding), once: the capture then
    // opens it without hashing every file again.
    const opened = await openBundle(referenceDir, { checkPadding: true });
    try {
      const reference = await admitReference(opened, referenceContracts);
      caseId = reference.manifest.case.id;
    } finally {
      await opened.close();
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    if (error instanceof BundleError || error instanceof EngineLoadError) throw new InputError(error.message);
    throw error;
  }
  const weightsPath = args.weights === undefined ? undefined : resolve(io.cwd, args.weights);
  if (weightsPath !== undefined) {
    try {
      await assertRegularFile(weightsPath);
    } catch (error) {
      if (error instanceof GuardedReadError) throw new InputError(`--weights ${error.message}`);
      throw error;
    }
  }
  const json = args.json === undefined ? undefined : outputPath(io.cwd, args.json);
  if (json !== undefined && json !== STDOUT && existsSync(json)) throw new InputError(`capture: --json ${json} already exists; reports are never overwritten`);
  const outDir = await captureFolder(io.cwd, args.out, caseId);

  io.stderr(`capture: engine ${library}\ncapture: reference ${referenceDir}\ncapture: writing ${outDir}\n`);
  const stop = stopOnSignals(io);
  let result;
  try {
    result = await captureRun({
      signal: stop.signal,
      library,
      referenceDir,
      referenceVerified: true,
      referenceContracts,
      outDir,
      ...(weightsPath !== undefined ? { weightsPath } : {}),
      isolation: args.isolation,
      passTimeoutMs: args.timeout * 1000,
      options,
      command: commandLine,
      teacherForce: args['teacher-force'],
      isolate: args.isolate,
      onPass: (pass) => {
        const detail =
          pass.status === 'ok'
            ? `${pass.mode}, ${pass.recordCount} records, ${(pass.bytes / 1024).toFixed(1)} KiB, ${pass.durationMs.toFixed(1)} ms`
            : `${pass.status}: ${pass.message}`;
        io.stderr(`capture: pass ${pass.index} ${pass.kind}: ${detail}\n`);
      },
    });
  } catch (error) {
    if (error instanceof CaptureAbortedError) {
      io.stderr(`capture: ${error.message}\n`);
      return stop.exitCode();
    }
    if (error instanceof CaptureWriteError) {
      io.stderr(`capture: ${error.message}\n`);
      return EXIT_FAILURE;
    }
    if (error instanceof InputError) throw error;
    if (error instanceof BundleError || error instanceof EngineLoadError) {
      throw new InputError(error.message);
    }
    throw error;
  } finally {
    stop.dispose();
  }

  const human = humanChannel(io, json);
  // The --json document: written on every way a capture that ran can end, so a script always
  // learns how the run ended; a report that cannot be written fails the command (exit 1).
  const emit = async (comparison: { rows: BoundaryDiffRow[]; summary: CaptureDiffSummary } | null, code: number): Promise<number> => {
    if (json === undefined) return code;
    const text = serializeReport(captureReport(result, { library, referenceDir, outDir, comparison }));
    if (json === STDOUT) {
      io.stdout(text);
      return code;
    }
    try {
      await writeNewFileAtomically(json, text);
      return code;
    } catch (error) {
      io.stderr(`capture: cannot write the json ${json}: ${(error as Error).message}\n`);
      return code === EXIT_OK ? EXIT_FAILURE : code;
    }
  };
  if (result.run.status === 'aborted' && stop.signal.aborted) {
    const sealed = result.passes.filter((pass) => pass.status === 'ok').length;
    io.stderr(
      result.manifestPath === null
        ? `capture: aborted (${String(stop.signal.reason)}); the bundle in ${outDir} could not be finished: run \`trace-inspector recover ${outDir}\`\n`
        : `capture: aborted (${String(stop.signal.reason)}); ${outDir} is finished as an aborted bundle with ${sealed} complete pass${sealed === 1 ? '' : 'es'} (and the whole records of the pass in flight)\n`,
    );
    await result.reference.close();
    return emit(null, stop.exitCode());
  }
  if (result.manifestPath === null) {
    io.stderr(`capture: the engine ${result.run.status} and no bundle could be recovered\n`);
    return emit(null, EXIT_FAILURE);
  }
  const native = await openBundle(outDir);
  let comparison: { rows: BoundaryDiffRow[]; summary: CaptureDiffSummary };
  try {
    const rows = await diffCapture(native, result.reference);
    human(`${formatCaptureTable(rows, { perPass: args['per-pass'] })}\n`);
    const summary = summarizeCaptureDiff(rows);
    comparison = { rows, summary };
    human(
      `\n${summary.compared} comparisons: ${summary.identical} identical, ${summary.within} within bound, ` +
        `${summary.failing} failing, ${summary.missing} missing, ${summary.extra} not in reference\n`,
    );
    if (summary.firstFailure) {
      const first = summary.firstFailure;
      human(`first divergence: pass ${first.pass} ${first.boundary} (${first.status})\n`);
    }
    const forcing = result.teacherForcing;
    if (forcing) {
      human(
        `teacher forced: ${forcing.injections} injections; the engine chose otherwise in ` +
          `${forcing.differences.length === 0 ? 'no pass' : `passes ${forcing.differingPasses.join(', ')}`}\n`,
      );
    }
    human(`native bundle: ${outDir}\n`);
    const isolated = result.isolated;
    if (isolated?.manifestPath) {
      const isolatedBundle = await openBundle(isolated.dir);
      try {
        const rows = await compareLocalVsAccumulated(native, isolatedBundle, result.reference);
        const outside = rows.filter((row) => row.local?.passed === false || row.accumulated?.passed === false);
        human(
          outside.length === 0
            ? '\nlocal vs accumulated error: every boundary within contract on both runs\n'
            : `\nlocal vs accumulated error at the injection points (outside contract on either run):\n${formatLocalVsAccumulated(rows, { onlyOutside: true, injectedOnly: true })}\n`,
        );
      } finally {
        await isolatedBundle.close();
      }
      human(
        `isolated bundle: ${isolated.dir}${isolated.run?.status === 'completed' ? '' : ` (${isolated.run?.status ?? 'not run'}: ${isolated.run?.message ?? ''})`}\n`,
      );
    } else if (isolated) {
      human(`isolated bundle: not captured: ${isolated.skipped ?? isolated.run?.message ?? 'unknown reason'}\n`);
    }
  } finally {
    await native.close();
    await result.reference.close();
  }
  if (result.run.status !== 'completed') {
    human(`run ${result.run.status} in pass ${result.run.last_pass ?? '?'} after boundary ${result.run.last_boundary ?? '(none)'}: ${result.run.message}\n`);
    return emit(comparison, EXIT_FAILURE);
  }
  return emit(comparison, EXIT_OK);
}

/** What `capture --json` writes: how the run ended, its passes, and its comparison with the reference. */
function captureReport(
  result: CaptureResult,
  where: { library: string; referenceDir: string; outDir: string; comparison: { rows: BoundaryDiffRow[]; summary: CaptureDiffSummary } | null },
): Record<string, unknown> {
  const { comparison } = where;
  return {
    schema: 'trace-inspector.capture-result',
    schema_version: 1,
    tool: toolInfo(),
    engine: where.library,
    reference: where.referenceDir,
    case: result.reference.manifest.case.id,
    bundle: result.manifestPath === null ? null : where.outDir,
    run: result.run,
    passes: result.passes,
    comparison: comparison === null ? null : { summary: comparison.summary, rows: comparison.rows },
    teacher_forcing: result.teacherForcing ?? null,
    isolated:
      result.isolated === undefined
        ? null
        : {
            dir: result.isolated.dir,
            bundle: result.isolated.manifestPath === null ? null : result.isolated.dir,
            run: result.isolated.run,
            skipped: result.isolated.skipped,
          },
  };
}

export { EXIT_USAGE };

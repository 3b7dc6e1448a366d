// `trace-inspector --gate --self-test`: the command-line face of the perturbation self-test
// (main/core/gate/self-test.ts): flags, progress lines, the report and the exit code.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { EngineLoadError } from '../../engine-host/engine-errors.ts';
import { formatSelfTestReport, runSelfTest, seconds, type SelfTestResult } from '../../core/gate/self-test.ts';
import { loadPerturbationTable, PerturbationTableError, type PerturbationTable } from '../../core/gate/perturbation-table.ts';
import { embeddedDefaults } from '../../core/tool/tool-info.ts';
import { EXIT_FAILURE, EXIT_OK, type CliIO } from '../cli-io.ts';
import { isolationArg, parseCommandArgs, timeoutArg } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const SELF_TEST_USAGE = `usage: trace-inspector --gate --self-test [--engine <lib>] [--perturbations <table.json>]
                                        [--weights <file>] [--work <dir>] [--isolation process|thread]
                                        [--timeout <seconds>]

Runs the gate with the reference engine once clean over every committed case (must pass) and
once per deliberate perturbation the engine lists (each must fail exactly where it first shows),
then perturbs single records of copies of the clean native bundles (each must be flagged exactly
there, with the right kind). Exits 0 only when every check holds, 1 otherwise, 2 on bad usage.
--perturbations runs another engine's table instead (its cases folder, where each of its
perturb.* options must first show, optional record perturbations), e.g.
examples/nam/perturbations.json with --engine the NAM example engine. --weights names the
weights for every run, as for --gate.
--work keeps every run's bundles (default: a temporary folder, removed when the self-test
passes). See docs/self-test.md.
`;

const SelfTestArgsSchema = z.object({
  engine: z.string().min(1, { error: '--engine: expected a library path' }).optional(),
  work: z.string().min(1, { error: '--work: expected a folder' }).optional(),
  perturbations: z.string().min(1, { error: '--perturbations: expected a table file (JSON)' }).optional(),
  weights: z.string().min(1, { error: '--weights: expected a weights file' }).optional(),
  isolation: isolationArg,
  timeout: timeoutArg,
});

function parseSelfTestArgs(argv: readonly string[]): z.infer<typeof SelfTestArgsSchema> {
  // `--gate --self-test` may hand its whole argv over: those two flags are the command itself.
  return parseCommandArgs(
    '--self-test',
    argv.filter((arg) => arg !== '--gate' && arg !== '--self-test'),
    SelfTestArgsSchema,
    { hint: ' (the self-test takes --engine, --perturbations, --weights, --work, --isolation and --timeout)' },
  );
}

/**
 * `trace-inspector --gate --self-test`: prints one line per check as it completes (stderr), the
 * table and `SELF-TEST: PASSED | FAILED` (stdout, last). Returns 0 when the self-test passes, 1
 * when it fails; throws InputError (exit 2) for bad flags or an unusable engine / work folder.
 */
export async function runSelfTestCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseSelfTestArgs(argv);
  const library = resolve(io.cwd, args.engine ?? embeddedDefaults().engineLibrary);
  let table: PerturbationTable | null = null;
  if (args.perturbations !== undefined) {
    try {
      table = await loadPerturbationTable(resolve(io.cwd, args.perturbations));
    } catch (error) {
      if (error instanceof PerturbationTableError) throw new InputError(`--perturbations: ${error.message}`);
      throw error;
    }
  }
  const keep = args.work !== undefined;
  const workDir = keep ? resolve(io.cwd, args.work as string) : await mkdtemp(join(tmpdir(), 'ti-self-test-'));
  let result: SelfTestResult;
  try {
    result = await runSelfTest({
      library,
      workDir,
      ...(table === null
        ? {}
        : { bundlesDir: table.bundlesDir, enginePerturbations: table.enginePerturbations, recordPerturbations: table.recordPerturbations }),
      isolation: args.isolation,
      passTimeoutMs: args.timeout * 1000,
      ...(args.weights !== undefined ? { weightsPath: resolve(io.cwd, args.weights) } : {}),
      progress: (event) => {
        if (event.kind === 'start') io.stderr(`self-test: ${event.checks} checks, work folder ${workDir}\n`);
        else
          io.stderr(
            `self-test: [${event.done}/${event.total}] ${event.check.passed ? 'ok    ' : 'FAILED'} ${event.check.name} (${seconds(event.check.durationMs)})\n`,
          );
      },
    });
  } catch (error) {
    if (!keep) await rm(workDir, { recursive: true, force: true });
    if (error instanceof InputError) throw error.within('--self-test');
    if (error instanceof EngineLoadError) throw new InputError(`--self-test: ${error.message}`);
    throw error;
  }
  io.stdout(`${formatSelfTestReport(result)}\n`);
  if (result.passed && !keep) await rm(workDir, { recursive: true, force: true });
  else io.stdout(`evidence kept in ${workDir}\n`);
  return result.passed ? EXIT_OK : EXIT_FAILURE;
}

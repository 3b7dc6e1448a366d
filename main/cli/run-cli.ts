// Dispatches a trace-inspector command line. Shared by the terminal entry (main/cli/index.ts)
// and the Electron main process, which hands it its argv when asked for a headless command.
import { toolInfo } from '../core/tool/tool-info.ts';
import { CAPTURE_USAGE, runCaptureCommand } from './commands/capture-command.ts';
import { CHECK_USAGE, runCheckCommand } from './commands/check-command.ts';
import { COMPARE_USAGE, runCompareCommand } from './commands/compare-command.ts';
import { EXPORT_WAV_USAGE, runExportWavCommand } from './commands/export-wav-command.ts';
import { GATE_USAGE, runGateCommand } from './commands/gate-command.ts';
import { KEYGEN_USAGE, runKeygenCommand } from './commands/keygen-command.ts';
import { RECOVER_USAGE, runRecoverCommand } from './commands/recover-command.ts';
import { SELF_TEST_USAGE, runSelfTestCommand } from './commands/self-test-command.ts';
import { SERVE_USAGE, runServeCommand } from './commands/serve-command.ts';
import { VERIFY_USAGE, runVerifyCommand } from './commands/verify-command.ts';
import { MERGE_USAGE, runMergeCommand } from './commands/merge-command.ts';
import { EXIT_OK, EXIT_USAGE, type CliIO } from './cli-io.ts';
import { InputError } from '../core/io/input-error.ts';

export const USAGE = `usage: trace-inspector <command> [options]

commands:
  gate        run the gate: every case, every boundary, seals, signed receipt (exit 0/1/2);
              --gate is the same command
  self-test   prove the gate catches every deliberate perturbation (also: --gate --self-test)
  capture     run an engine over a reference case and capture every boundary into a bundle
  compare     judge one bundle against another (engine vs engine, build vs build, no engine runs)
  merge       combine the results of a sharded gate (--gate --shard K/N) into one report and receipt
  verify      check a gate receipt's signature and the files it names
  check       validate bundles (manifest, files, headers, every digest); every problem at once
  keygen      create an Ed25519 key pair for signing receipts
  recover     seal an interrupted capture (killed, crashed, disk full) into an aborted bundle
  export-wav  write a bundle's PCM stream (detok.pcm) as a 24 kHz float WAV
  serve       serve the app to a browser on 127.0.0.1 (URL with a per-run token)
  help        show this help (trace-inspector help <command>, or <command> --help, for one command)
  --version   print the version and commit

${CAPTURE_USAGE}`;

const COMMAND_USAGE: Readonly<Record<string, string>> = {
  capture: CAPTURE_USAGE,
  compare: COMPARE_USAGE,
  gate: GATE_USAGE,
  '--gate': GATE_USAGE,
  'self-test': SELF_TEST_USAGE,
  verify: VERIFY_USAGE,
  merge: MERGE_USAGE,
  check: CHECK_USAGE,
  keygen: KEYGEN_USAGE,
  recover: RECOVER_USAGE,
  'export-wav': EXPORT_WAV_USAGE,
  serve: SERVE_USAGE,
};

type CommandRunner = (rest: readonly string[], io: CliIO, commandLine: string) => Promise<number>;

function printVersion(_rest: readonly string[], io: CliIO): Promise<number> {
  const tool = toolInfo();
  io.stdout(`trace-inspector ${tool.version} (${tool.commit}${tool.dirty ? ', modified' : ''})\n`);
  return Promise.resolve(EXIT_OK);
}

function printHelp(rest: readonly string[], io: CliIO): Promise<number> {
  io.stdout((rest[0] !== undefined ? COMMAND_USAGE[rest[0]] : undefined) ?? USAGE);
  return Promise.resolve(EXIT_OK);
}

/** Every first argument the tool answers to; the Electron main process runs these without a window. */
const COMMANDS: Readonly<Record<string, CommandRunner>> = {
  capture: runCaptureCommand,
  compare: (rest, io) => runCompareCommand(rest, io),
  '--gate': runGateCommand,
  gate: runGateCommand,
  'self-test': (rest, io) => runSelfTestCommand(rest, io),
  verify: (rest, io) => runVerifyCommand(rest, io),
  merge: (rest, io) => runMergeCommand(rest, io),
  check: (rest, io) => runCheckCommand(rest, io),
  keygen: (rest, io) => runKeygenCommand(rest, io),
  recover: (rest, io) => runRecoverCommand(rest, io),
  'export-wav': (rest, io) => runExportWavCommand(rest, io),
  serve: (rest, io) => runServeCommand(rest, io),
  '--version': printVersion,
  help: printHelp,
  '--help': printHelp,
  '-h': printHelp,
};

/** First arguments that make `electron .` run a CLI command instead of opening a window. */
export const HEADLESS_COMMANDS: ReadonlySet<string> = new Set(Object.keys(COMMANDS));

export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  const commandLine = ['trace-inspector', ...argv].join(' ');
  try {
    if (command === undefined) {
      // Usage on a usage error goes to stderr, so a script's stdout holds only results.
      io.stderr(USAGE);
      return EXIT_USAGE;
    }
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (run === undefined) throw new InputError(`unknown command "${command}"; see trace-inspector help`);
    // `<command> --help` / `-h`: that command's usage on stdout, exit 0 (`--gate --self-test --help`: the self-test's).
    const usage = Object.hasOwn(COMMAND_USAGE, command) ? COMMAND_USAGE[command] : undefined;
    if (usage !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
      io.stdout(rest.includes('--self-test') ? SELF_TEST_USAGE : usage);
      return EXIT_OK;
    }
    return await run(rest, io, commandLine);
  } catch (error) {
    if (error instanceof InputError) {
      io.stderr(`trace-inspector: ${error.message}\n`);
      return EXIT_USAGE;
    }
    // A file-system refusal (ENOTDIR, EACCES, ENOSPC...) on a path the user named is bad input,
    // whichever command met it: named with its path, exit 2, never an internal error.
    if (isFileSystemError(error)) {
      io.stderr(`trace-inspector: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
}

function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as NodeJS.ErrnoException;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) && typeof syscall === 'string';
}

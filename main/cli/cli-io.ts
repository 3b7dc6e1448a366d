// Where a CLI command writes. Commands never touch process.stdout/exit directly, so the
// Electron main process and the tests run them the same way the terminal does.
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal (progress bars) or a log (plain lines). */
  stderrIsTTY: boolean;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

export const EXIT_OK = 0;
/** The run failed: a FAIL verdict, or an engine that errored, crashed or hung. */
export const EXIT_FAILURE = 1;
/** Bad usage or invalid input files. */
export const EXIT_USAGE = 2;

export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
    env: process.env,
  };
}

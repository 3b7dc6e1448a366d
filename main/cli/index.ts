// Terminal entry of trace-inspector (bundled to dist/cli.js, run by bin/trace-inspector.js).
import { processIO } from './cli-io.ts';
import { runCli } from './run-cli.ts';

try {
  process.exitCode = await runCli(process.argv.slice(2), processIO());
} catch (error) {
  // An unexpected failure is a bug, not a verdict: say so plainly and exit 1.
  process.stderr.write(`trace-inspector: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
}

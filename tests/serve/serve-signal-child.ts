// Child process for the SIGINT test: runs `serve` exactly as the CLI does (real session, real
// signal handling, process.exitCode), but over the renderer folder named by argv[2], so the
// shutdown path is tested whether or not out/renderer has been built.
import { processIO } from '../../main/cli/cli-io.ts';
import { runServeCommand } from '../../main/cli/commands/serve-command.ts';

const [rendererDir, ...args] = process.argv.slice(2);
if (rendererDir === undefined) throw new Error('usage: serve-signal-child.ts <renderer dir> [serve args]');
process.exitCode = await runServeCommand(args, processIO(), { rendererDir });

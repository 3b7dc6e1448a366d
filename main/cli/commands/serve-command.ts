// `trace-inspector serve`: the renderer over HTTP and the inspector API over a WebSocket, on
// 127.0.0.1 only, for a browser (a remote engine box through an SSH tunnel, end-to-end tests
// in a real Chromium). Prints exactly one line on stdout, the URL with the per-run token, and
// runs until SIGINT / SIGTERM.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../../core/tool/tool-info.ts';
import { InspectorSession, runCall } from '../../session/inspector-session.ts';
import { startServeServer, type ServeServer } from '../../serve/serve-server.ts';
import type { DispatchOutcome } from '../../serve/api-socket.ts';
import { EXIT_OK, EXIT_USAGE, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';

export const SERVE_USAGE = `usage: trace-inspector serve [--port <n>] [--engine <lib>] [--bundle <reference bundle>] [--work <dir>]

Serves the app on http://127.0.0.1:<port>/ (loopback only; --port 0, the default, picks a free
port) and prints its URL, which carries a fresh per-run token: only a page opened from that URL
can use the API. Opens --engine and --bundle at start; a missing one is the embedded default
(the reference engine, the "interleaved" case). Native bundles of the session are written
under --work (default ./runs). Stops on Ctrl+C. See docs/app.md.
`;

const ServeArgsSchema = z.object({
  port: z.coerce
    .number({ error: '--port: expected a port number' })
    .int({ error: '--port: expected a whole port number' })
    .min(0, { error: '--port: expected 0..65535' })
    .max(65535, { error: '--port: expected 0..65535' })
    .default(0),
  engine: z.string().min(1).optional(),
  bundle: z.string().min(1).optional(),
  work: z.string().min(1).default('runs'),
});
type ServeArgs = z.infer<typeof ServeArgsSchema>;

function parseServeArgs(argv: readonly string[]): ServeArgs {
  return parseCommandArgs('serve', argv, ServeArgsSchema);
}

export interface ServeCommandHooks {
  /** Resolves when serving should stop; default: the first SIGINT or SIGTERM. */
  untilStopped?: (server: ServeServer) => Promise<void>;
  /** The built renderer; default out/renderer of the package. */
  rendererDir?: string;
}

function untilSignal(): Promise<void> {
  return new Promise((resolveStop) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveStop();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** The calls that open what the command line names; a missing side is the embedded default. */
function openingCalls(args: ServeArgs, cwd: string): Array<{ method: 'openDefault' | 'openEngine' | 'openBundle'; request: object; what: string }> {
  const calls: Array<{ method: 'openDefault' | 'openEngine' | 'openBundle'; request: object; what: string }> = [];
  if (args.engine === undefined || args.bundle === undefined) calls.push({ method: 'openDefault', request: {}, what: 'the embedded default' });
  if (args.engine !== undefined) calls.push({ method: 'openEngine', request: { library: resolve(cwd, args.engine) }, what: `--engine ${args.engine}` });
  if (args.bundle !== undefined) calls.push({ method: 'openBundle', request: { dir: resolve(cwd, args.bundle) }, what: `--bundle ${args.bundle}` });
  return calls;
}

export async function runServeCommand(argv: readonly string[], io: CliIO, hooks: ServeCommandHooks = {}): Promise<number> {
  const args = parseServeArgs(argv);
  const rendererDir = hooks.rendererDir ?? join(packageRoot(), 'out', 'renderer');
  if (!existsSync(join(rendererDir, 'index.html'))) {
    io.stderr(`trace-inspector serve: the built renderer is missing (${join(rendererDir, 'index.html')}): run \`npm run build\` first\n`);
    return EXIT_USAGE;
  }
  const workDir = resolve(io.cwd, args.work);
  const session = InspectorSession.create({ workDir, recentFile: join(workDir, 'recent.json') });
  // Each reply is validated once, where it is received: by the page's validatingTransport, which
  // treats the socket as the untrusted hop it is (as the preload does on the Electron path).
  const dispatch = (method: string, request: unknown): Promise<DispatchOutcome> => runCall(session.handlers, method, request);
  try {
    for (const call of openingCalls(args, io.cwd)) {
      const outcome = await dispatch(call.method, call.request);
      if (!outcome.ok) {
        io.stderr(`trace-inspector serve: cannot open ${call.what}: ${outcome.error.message}\n`);
        return EXIT_USAGE;
      }
    }
    let server: ServeServer;
    try {
      server = await startServeServer({
        rendererDir,
        port: args.port,
        core: { dispatch, subscribe: (listener) => session.subscribe(listener) },
        log: (line) => io.stderr(`${line}\n`),
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'EADDRINUSE' ? `port ${args.port} on 127.0.0.1 is in use (--port 0 picks a free one)` : (error as Error).message;
      io.stderr(`trace-inspector serve: cannot listen: ${why}\n`);
      return EXIT_USAGE;
    }
    io.stdout(`${server.url}\n`);
    io.stderr('trace-inspector serve: open the URL above in a browser; Ctrl+C stops\n');
    await (hooks.untilStopped ?? untilSignal)(server);
    io.stderr('trace-inspector serve: stopping\n');
    await server.close();
    return EXIT_OK;
  } finally {
    await session.close();
  }
}

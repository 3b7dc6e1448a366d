// Ctrl+C and SIGTERM during a long command (a capture, a gate run): the first one asks the run
// to stop cleanly (an AbortSignal the run listens to: the engine is stopped and the bundle is
// finished as "aborted"); a second one quits at once. The exit code is the shell's convention
// for a death by that signal, 128 + its number, so scripts see why the command ended.
import type { CliIO } from './cli-io.ts';

const STOP_SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof STOP_SIGNALS;

export interface SignalStop {
  readonly signal: AbortSignal;
  /** 130 after SIGINT, 143 after SIGTERM (only meaningful once `signal` is aborted). */
  exitCode(): number;
  /** Removes the handlers: the process's default behaviour is back. */
  dispose(): void;
}

export function stopOnSignals(io: CliIO): SignalStop {
  const controller = new AbortController();
  let received: StopSignal | null = null;
  const handlers = new Map<StopSignal, () => void>();
  for (const name of Object.keys(STOP_SIGNALS) as StopSignal[]) {
    const handler = (): void => {
      if (received !== null) {
        io.stderr(`trace-inspector: ${name} again: quitting now (what was captured stays recoverable: trace-inspector recover <dir>)\n`);
        process.exit(128 + STOP_SIGNALS[name]);
      }
      received = name;
      io.stderr(`trace-inspector: ${name} received: stopping the engine and finishing what was captured (send it again to quit at once)\n`);
      controller.abort(`${name} received`);
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  return {
    signal: controller.signal,
    exitCode: () => 128 + STOP_SIGNALS[received ?? 'SIGINT'],
    dispose() {
      for (const [name, handler] of handlers) process.off(name, handler);
      handlers.clear();
    },
  };
}

// The two ways the engine host runs its worker (engine-host.ts chooses by isolation):
//   processTransport: the worker in a forked engine-host process (its own process group), its
//     messages as JSON lines on a pipe, its crumb in a small file; a crash or a hang kills only it.
//   threadTransport: the worker as a worker_threads Worker of this process, its crumb in shared
//     memory; no crash protection, and a native spin cannot be stopped.
// Both report each message (unvalidated: the host validates) and, once, how the worker went away.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { startWorker } from '../core/tool/heap-bounds.ts';
import { EngineHostError } from './engine-errors.ts';
import { CRUMB_BYTES, HOST_PROCESS_MESSAGE_FD, type CrumbTarget, type WorkerData, type WorkerRequest } from './engine-protocol.ts';
import { engineScriptPath } from './engine-scripts.ts';

/** How the worker (or its process) went away. */
export interface Death {
  signal: string | null;
  exitCode: number | null;
  /** A fatal message the worker or the host process sent before dying, if any. */
  fatal: string | null;
}

export interface Transport {
  /** Where the worker leaves its crumb (see engine-protocol.ts). */
  readonly crumb: CrumbTarget;
  /** The crumb as last stored: [pass, boundary index, count, sequence]. */
  readCrumb(): Int32Array;
  send(request: WorkerRequest): void;
  /** Stops the worker now (SIGKILL for a process). Death is reported through onDeath. */
  kill(): void;
  /** Asks the worker to go away after close: disconnect / terminate; removes the crumb. */
  shutdown(): Promise<void>;
  /** 'thread' kills cannot be confirmed (a spinning native thread never exits). */
  readonly killIsConfirmed: boolean;
}

export interface TransportEvents {
  message(raw: unknown): void;
  death(death: Death): void;
}

export function processTransport(events: TransportEvents): Transport {
  const script = engineScriptPath('engine-host-process');
  const crumbDir = mkdtempSync(join(tmpdir(), 'ti-engine-host-'));
  const crumbPath = join(crumbDir, 'crumb');
  writeFileSync(crumbPath, new Uint8Array(CRUMB_BYTES));
  // detached: the engine host leads a process group of its own, so whatever an engine forks
  // can be killed with it (killGroup), and a Ctrl+C at the terminal reaches the caller only,
  // which then decides how the run ends (abort). Its stdout and stderr are relayed through pipes
  // this process owns and closes, so a lingering grandchild never holds the caller's stdout open.
  const child: ChildProcess = fork(script, [], {
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc', 'pipe'],
    execArgv: [],
    detached: true,
  });
  const relays = [child.stdout, child.stderr];
  child.stdout?.pipe(process.stdout, { end: false });
  child.stderr?.pipe(process.stderr, { end: false });
  /** SIGKILLs the engine host and everything left in its process group (an engine's children). */
  const killGroup = (): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already empty
    }
  };
  const lines = child.stdio[HOST_PROCESS_MESSAGE_FD] as Readable | null | undefined;
  if (!lines) throw new EngineHostError(`engine-host process has no pipe on fd ${HOST_PROCESS_MESSAGE_FD}`);
  let pending = '';
  lines.setEncoding('utf8');
  lines.on('data', (chunk: string) => {
    pending += chunk;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.length > 0) {
        events.message(parseMessageLine(line));
      }
      newline = pending.indexOf('\n');
    }
  });
  // Death is reported once the process has exited AND its message pipe is drained, so every
  // line the worker wrote before dying has been handled. (ChildProcess 'close' is not used: with
  // an IPC channel it does not fire after disconnect().)
  let exit: { code: number | null; signal: string | null } | null = null;
  let pipeClosed = false;
  let spawnError: string | null = null;
  let reported = false;
  const report = (): void => {
    if (reported || exit === null) return;
    reported = true;
    events.death({ signal: exit.signal, exitCode: exit.code, fatal: spawnError });
  };
  lines.on('end', () => lines.destroy());
  lines.on('close', () => {
    pipeClosed = true;
    report();
  });
  child.on('error', (error) => {
    spawnError = error.message;
    if (child.pid === undefined) {
      exit = { code: null, signal: null };
      report();
    }
  });
  child.on('exit', (code, signal) => {
    exit = { code, signal };
    // What the engine forked must not outlive its host (nor hold the message pipe open).
    killGroup();
    if (pipeClosed) report();
    // Something the engine spawned may hold the pipe open: do not wait for it forever.
    else setTimeout(report, 1_000).unref();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    killIsConfirmed: true,
    crumb: { path: crumbPath },
    readCrumb() {
      const bytes = readFileSync(crumbPath);
      const slots = new Int32Array(CRUMB_BYTES / 4);
      new Uint8Array(slots.buffer).set(bytes.subarray(0, CRUMB_BYTES));
      return slots;
    },
    send(request) {
      child.send(request);
    },
    kill() {
      killGroup();
    },
    async shutdown() {
      if (child.exitCode === null && child.signalCode === null) {
        if (child.connected) child.disconnect();
        const timer = setTimeout(killGroup, 5_000);
        await exited;
        clearTimeout(timer);
      }
      // The engine host is gone; anything the engine forked goes with it.
      killGroup();
      lines.destroy();
      for (const relay of relays) {
        relay?.unpipe();
        relay?.destroy();
      }
      rmSync(crumbDir, { recursive: true, force: true });
    },
  };
}

/** A message the worker sent as JSON text; malformed text becomes a message the schema refuses. */
function parseMessageLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return { type: 'malformed', line: line.slice(0, 200) };
  }
}

export function threadTransport(events: TransportEvents): Transport {
  const workerData: WorkerData = { messageFd: null };
  const worker = startWorker(engineScriptPath('engine-worker'), { workerData });
  let fatal: string | null = null;
  // Announcement batches arrive as their JSON text (engine-worker.ts), everything else as objects.
  worker.on('message', (raw: unknown) => events.message(typeof raw === 'string' ? parseMessageLine(raw) : raw));
  worker.on('error', (error) => {
    fatal = error instanceof Error ? error.message : String(error);
  });
  worker.on('exit', (code) => events.death({ signal: null, exitCode: code, fatal }));
  const shared = new SharedArrayBuffer(CRUMB_BYTES);
  const slots = new Int32Array(shared);
  return {
    killIsConfirmed: false,
    crumb: { shared },
    readCrumb() {
      return Int32Array.from({ length: CRUMB_BYTES / 4 }, (_, i) => Atomics.load(slots, i));
    },
    send(request) {
      worker.postMessage(request);
    },
    kill() {
      // Takes effect only when the thread runs JavaScript again: a native spin never does.
      void worker.terminate();
      worker.unref();
    },
    async shutdown() {
      await worker.terminate();
    },
  };
}

// The engine-host process: a child of the caller (child_process.fork of
// dist/engine-host-process.js) that runs the engine worker, so a SIGSEGV, an abort or a hang in
// the engine costs this process, never the caller.
//
// Requests arrive over the IPC channel and are relayed to the worker, which validates each one
// (engine-worker.ts: a malformed request gets an error reply naming the field). The worker's
// messages do not pass through here: it writes them itself, synchronously, to the pipe on file
// descriptor HOST_PROCESS_MESSAGE_FD, so nothing it announced is lost when the engine kills the
// process.
//
// This process imports no schema library and none of the core: it relays, and every capture
// forks one, so its start-up is a bare Node start (a zod import alone is ~0.1 s of CPU).
import { fstatSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HOST_PROCESS_MESSAGE_FD } from './engine-host-fd.ts';
import type { WorkerData, WorkerMessage } from './engine-protocol.ts';

// Only the bundle (dist/engine-host-process.js) is ever forked, and the engine worker's bundle is
// built beside it (scripts/build.mjs), so it is found next to this file.
const ENGINE_WORKER_SCRIPT = fileURLToPath(new URL('./engine-worker.js', import.meta.url));

const messageFd = HOST_PROCESS_MESSAGE_FD;

function sendLine(message: WorkerMessage): void {
  try {
    writeSync(messageFd, `${JSON.stringify(message)}\n`);
  } catch {
    // The caller is gone; nobody is left to tell.
  }
}

function fail(message: string): never {
  sendLine({ type: 'fatal', message });
  process.exit(70);
}

function main(): void {
  if (typeof process.send !== 'function') fail('engine-host-process.js runs as a child_process.fork() child with an IPC channel');
  try {
    fstatSync(messageFd);
  } catch {
    fail(`file descriptor ${messageFd} is not open: fork this script with stdio[${messageFd}] = 'pipe'`);
  }
  const workerData: WorkerData = { messageFd };
  const worker = new Worker(ENGINE_WORKER_SCRIPT, { workerData });
  worker.on('error', (error) => fail(`engine worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  worker.on('exit', (code) => process.exit(code === 0 ? 0 : 70));
  process.on('message', (raw: unknown) => worker.postMessage(raw));
  // The caller closed the channel (close(), or it died): nothing more will be asked. Everything
  // the worker wrote is already on disk or in the pipe. process.exit() would wait for the worker
  // thread, which never comes back if the engine spins in native code, so this process ends its
  // whole group (itself and whatever the engine forked) at once.
  process.on('disconnect', () => {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {
      process.kill(process.pid, 'SIGKILL');
    }
  });
}

main();

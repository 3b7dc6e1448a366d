// The engine-host process: a child of the caller (child_process.fork of
// dist/engine-host-process.js) that runs the engine worker, so a SIGSEGV, an abort or a hang in
// the engine costs this process, never the caller.
//
// Requests arrive over the IPC channel and are relayed to the worker. The worker's messages do
// not pass through here: it writes them itself, synchronously, to the pipe on file descriptor
// HOST_PROCESS_MESSAGE_FD, so nothing it announced is lost when the engine kills the process.
import { fstatSync, writeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { HOST_PROCESS_MESSAGE_FD, WorkerRequestSchema, type WorkerData, type WorkerMessage } from './engine-protocol.ts';
import { engineScriptPath } from './engine-scripts.ts';

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
  const worker = new Worker(engineScriptPath('engine-worker'), { workerData });
  worker.on('error', (error) => fail(`engine worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  worker.on('exit', (code) => process.exit(code === 0 ? 0 : 70));
  process.on('message', (raw: unknown) => {
    const parsed = WorkerRequestSchema.safeParse(raw);
    if (!parsed.success) {
      fail(`malformed request from the caller: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`);
    }
    worker.postMessage(parsed.data);
  });
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

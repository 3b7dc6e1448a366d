// An engine worker that misnumbers one pass: the real dist/engine-worker.js, whose reply to its
// first decode pass names the next pass's index instead of its own (changed on the way out, after
// the real worker sent it). The host must refuse the reply as a protocol violation
// (tests/engine-host/host-pass-index.test.ts).
import { parentPort } from 'node:worker_threads';

const port = parentPort;
const post = port.postMessage.bind(port);
let misnumbered = false;
port.postMessage = (message, transfer) => {
  const value = message?.type === 'reply' && message.ok === true ? message.value : undefined;
  if (!misnumbered && value?.kind === 'decode' && typeof value.index === 'number') {
    misnumbered = true;
    return post({ ...message, value: { ...value, index: value.index + 1 } }, transfer);
  }
  return post(message, transfer);
};

await import(new URL('../../../dist/engine-worker.js', import.meta.url).href);

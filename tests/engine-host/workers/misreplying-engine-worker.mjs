// An engine worker that answers its first decode pass wrongly: the real dist/engine-worker.js,
// whose reply is changed on the way out, after the real worker sent it. TI_TEST_MISREPLY says how:
//   index      the reply names the next pass's index instead of its own;
//   malformed  the reply's record count is a string.
// The host must refuse either as a protocol violation (tests/engine-host/host-reply-checks.test.ts).
import { parentPort } from 'node:worker_threads';

const how = process.env.TI_TEST_MISREPLY;
const port = parentPort;
const post = port.postMessage.bind(port);
let changed = false;
port.postMessage = (message, transfer) => {
  const value = message?.type === 'reply' && message.ok === true ? message.value : undefined;
  if (!changed && value?.kind === 'decode' && typeof value.index === 'number') {
    changed = true;
    const wrong = how === 'index' ? { ...value, index: value.index + 1 } : { ...value, recordCount: String(value.recordCount) };
    return post({ ...message, value: wrong }, transfer);
  }
  return post(message, transfer);
};

await import(new URL('../../../dist/engine-worker.js', import.meta.url).href);

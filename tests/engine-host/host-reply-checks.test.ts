// The host validates every reply of its engine worker (engine-host.ts): a reply that breaks its
// schema, or a pass's reply that names another pass than the one asked for (the host knows which
// pass it asked for: no message announces a pass before it runs), is a protocol violation. The
// pass is refused naming the problem, the worker is killed, and the host refuses every later call
// naming it. The worker here is the real one with its first decode reply changed on the way out
// (workers/misreplying-engine-worker.mjs), in thread isolation.
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EngineHostDeadError, EngineHostError } from '../../main/engine-host/engine-errors.ts';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const MISREPLYING_WORKER = fileURLToPath(new URL('./workers/misreplying-engine-worker.mjs', import.meta.url));

vi.mock('../../main/engine-host/engine-scripts.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../main/engine-host/engine-scripts.ts')>();
  return {
    ...real,
    engineScriptPath: (script: Parameters<typeof real.engineScriptPath>[0]) =>
      script === 'engine-worker' ? MISREPLYING_WORKER : real.engineScriptPath(script),
  };
});

beforeAll(() => requireBuiltHost());
afterEach(() => {
  delete process.env['TI_TEST_MISREPLY'];
});

/** Prefill, then the decode pass whose reply the worker changes: the refusal, and the next call's. */
async function decodeRefused(how: 'index' | 'malformed'): Promise<{ refused: EngineHostError; after: EngineHostDeadError }> {
  process.env['TI_TEST_MISREPLY'] = how; // read by the worker, which starts with this environment
  const host = await EngineHost.start({ library: testlib('toy_engine'), isolation: 'thread' });
  try {
    await host.open();
    await setInputs(host, toyInputs());
    expect((await host.runPass('prefill')).status).toBe('ok');
    const refused = await rejectionOf(host.runPass('decode'), EngineHostError);
    const after = await rejectionOf(host.runPass('decode'), EngineHostDeadError);
    return { refused, after };
  } finally {
    await host.close().catch(() => undefined);
  }
}

describe('a worker reply the host refuses', () => {
  it('names another pass than the one asked for: refused naming both, and the host is dead after it', async () => {
    const { refused, after } = await decodeRefused('index');
    expect(refused.message).toBe('the engine worker ran pass 2 (decode) where pass 1 was expected');
    expect(after.message).toContain(refused.message);
  });

  it('breaks its schema: refused naming the op and the field, and the host is dead after it', async () => {
    const { refused, after } = await decodeRefused('malformed');
    expect(refused.message).toMatch(/^malformed runPass reply from the engine worker: .*recordCount/);
    expect(after.message).toContain(refused.message);
  });
});

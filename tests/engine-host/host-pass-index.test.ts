// The host knows which pass it asked for (engine-host.ts: no message announces a pass before it
// runs): a worker reply that names another pass is a protocol violation. The pass is refused
// naming both indices, the worker is killed, and the host refuses every later call. The worker
// here is the real one with its first decode reply misnumbered on the way out
// (workers/misnumbering-engine-worker.mjs), run in thread isolation.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { EngineHostDeadError } from '../../main/engine-host/engine-errors.ts';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const MISNUMBERING_WORKER = fileURLToPath(new URL('./workers/misnumbering-engine-worker.mjs', import.meta.url));

vi.mock('../../main/engine-host/engine-scripts.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../main/engine-host/engine-scripts.ts')>();
  return {
    ...real,
    engineScriptPath: (script: Parameters<typeof real.engineScriptPath>[0]) =>
      script === 'engine-worker' ? MISNUMBERING_WORKER : real.engineScriptPath(script),
  };
});

beforeAll(() => requireBuiltHost());

describe('a reply naming another pass than the one asked for', () => {
  it('is refused naming both passes, and the host is dead after it', async () => {
    const host = await EngineHost.start({ library: testlib('toy_engine'), isolation: 'thread' });
    try {
      await host.open();
      await setInputs(host, toyInputs());
      const prefill = await host.runPass('prefill');
      expect(prefill.status).toBe('ok');
      const refused = await rejectionOf(host.runPass('decode'), Error);
      expect(refused.message).toBe('the engine worker ran pass 2 (decode) where pass 1 was expected');
      const after = await rejectionOf(host.runPass('decode'), EngineHostDeadError);
      expect(after.message).toContain('the engine worker ran pass 2 (decode) where pass 1 was expected');
    } finally {
      await host.close().catch(() => undefined);
    }
  });
});

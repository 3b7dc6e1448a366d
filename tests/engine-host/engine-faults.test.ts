// Engines that misbehave in ways the crash tests do not cover (engine/testlibs): a library whose
// load-time constructor crashes or hangs, an engine that ignores the host's stop request, a
// record whose shape product overflows 64 bits, a record emitted from the engine's own thread,
// an engine that forks a child which lingers. Each
// is a named error (or a named engine_error), never a mislabelled run or a hang.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineLoadError } from '../../main/engine-host/engine-errors.ts';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { captureHeader, requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const made: string[] = [];
beforeAll(() => requireBuiltHost());
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tempDir(label: string): string {
  const dir = freshTempDir(`faults-${label}`);
  made.push(dir);
  return dir;
}

async function startError(library: string, loadTimeoutMs?: number): Promise<unknown> {
  return EngineHost.start({ library, isolation: 'process', ...(loadTimeoutMs === undefined ? {} : { loadTimeoutMs }) }).then(
    async (host) => {
      await host.close();
      return new Error(`${library} loaded`);
    },
    (error: unknown) => error,
  );
}

/** Prefill, then decode pass 1 (where the test engines misbehave), capturing into a fresh bundle. */
async function runToPassOne(
  library: string,
): Promise<{ host: EngineHost; dir: string; prefill: Awaited<ReturnType<EngineHost['runPass']>>; decode: Awaited<ReturnType<EngineHost['runPass']>> }> {
  const host = await EngineHost.start({ library, isolation: 'process', passTimeoutMs: 20_000 });
  const inputs = toyInputs();
  await host.open();
  await setInputs(host, inputs);
  const dir = join(tempDir('run'), 'native');
  await host.beginCapture(dir, captureHeader(host, inputs));
  const prefill = await host.runPass('prefill');
  const decode = await host.runPass('decode');
  return { host, dir, prefill, decode };
}

describe('a library that fails while it is loaded', () => {
  it('a load-time constructor that crashes is an EngineLoadError naming the library (load_crashed), not a dead host', async () => {
    const library = testlib('ctor_segv_engine');
    const error = await startError(library);
    expect(error).toBeInstanceOf(EngineLoadError);
    expect(error).toMatchObject({ failure: 'load_crashed', library });
    expect((error as Error).message).toContain(library);
    expect((error as Error).message).toMatch(/SIGSEGV/);
  });

  it('a load-time constructor that hangs is stopped by the watchdog: EngineLoadError load_timeout naming the library', async () => {
    const library = testlib('ctor_hang_engine');
    const started = Date.now();
    const error = await startError(library, 3_000);
    expect(error).toBeInstanceOf(EngineLoadError);
    expect(error).toMatchObject({ failure: 'load_timeout', library });
    expect((error as Error).message).toMatch(/did not finish within 3000 ms/);
    // The watchdog, not the test timeout, ended it.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('engines that break the record contract', () => {
  it('an engine that ignores the stop request and returns TI_OK ends the pass as engine_error with the host reason', async () => {
    const { host, dir, prefill, decode } = await runToPassOne(testlib('ignore_stop_engine'));
    expect(prefill.status).toBe('ok');
    expect(decode.status).toBe('engine_error');
    if (decode.status !== 'engine_error') throw new Error('unreachable');
    expect(decode.message).toContain('toy.not_in_catalogue: not a boundary');
    expect(decode.message).toContain('the engine ignored the request to stop and returned TI_OK');
    // Nothing after the refused record was taken.
    expect(decode.recordCount).toBe(0);
    await host.finishCapture({ status: 'engine_error', message: `${decode.code}: ${decode.message}`, last_pass: 1, last_boundary: null });
    await host.close();
    const bundle = await openBundle(dir);
    expect(bundle.passes.map((pass) => pass.boundaries.length)).toEqual([3, 0]);
    await bundle.close();
  });

  it('a shape whose element count overflows 64 bits is a named engine-contract error, not a crash', async () => {
    const { host, decode } = await runToPassOne(testlib('shape_overflow_engine'));
    expect(decode.status).toBe('engine_error');
    if (decode.status !== 'engine_error') throw new Error('unreachable');
    expect(decode.message).toMatch(/toy\.embed: engine contract violated: shape \[8589934592, 2147483648\]/);
    expect(decode.message).toMatch(/overflows 64 bits/);
    expect(host.alive).toBe(true);
    await host.close();
  });
});

describe('a record emitted from a thread of the engine', () => {
  it.each(['process', 'thread'] as const)(
    'is refused and named "record from a foreign thread" (%s isolation), not a deadlock reported as a timeout',
    async (isolation) => {
      const host = await EngineHost.start({ library: testlib('foreign_thread_engine'), isolation, passTimeoutMs: 20_000 });
      const inputs = toyInputs();
      await host.open();
      await setInputs(host, inputs);
      expect((await host.runPass('prefill')).status).toBe('ok');
      const decode = await host.runPass('decode');
      expect(decode.status).toBe('engine_error');
      if (decode.status !== 'engine_error') throw new Error('unreachable');
      expect(decode.message).toMatch(/^record from a foreign thread: toy\.embed was emitted from a thread other than the one that called ti_decode/);
      expect(host.alive).toBe(true);
      await host.close();
    },
  );
});

describe('what an engine forks', () => {
  it('dies with the engine host: a child forked by the engine does not outlive close()', async () => {
    const pidFile = join(tempDir('linger'), 'child.pid');
    process.env['TOY_LINGER_PID_FILE'] = pidFile;
    let host: EngineHost;
    try {
      host = await EngineHost.start({ library: testlib('fork_linger_engine'), isolation: 'process' });
    } finally {
      delete process.env['TOY_LINGER_PID_FILE'];
    }
    const inputs = toyInputs();
    await host.open();
    await setInputs(host, inputs);
    expect((await host.runPass('prefill')).status).toBe('ok');
    expect(existsSync(pidFile)).toBe(true);
    const child = Number(readFileSync(pidFile, 'utf8').trim());
    expect(child).toBeGreaterThan(1);
    expect(isAlive(child)).toBe(true); // sleeping 180 s
    await host.close();
    await waitUntil(() => !isAlive(child), 5_000);
    expect(isAlive(child)).toBe(false);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0: count it as gone when /proc says so.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

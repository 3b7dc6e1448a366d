// The capture pool (main/engine-host/capture-pool.ts): the engine's thread copies each record
// once into a bounded ring and the writer thread does the rest. Proven here:
//   - a pool far smaller than a pass makes the engine wait (back-pressure) and the bundle is the
//     same, record for record and in order, as one written on the engine's thread;
//   - a writer that cannot write (a folder in the way of a spill; a full disk) ends the capture
//     with an error naming the file, never a hang;
//   - a death while the writer is behind loses nothing the engine's thread had copied in:
//     recovery applies the pool's entries (passes ended and begun, records), drops an entry torn
//     by the death, and a second recovery changes nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { NativeBundleWriter } from '../../main/core/bundle/native-bundle-writer.ts';
import { EngineHostError } from '../../main/engine-host/engine-errors.ts';
import { EngineHost, type PassResult } from '../../main/engine-host/engine-host.ts';
import { CapturePool, CapturePoolError, MAX_ENTRY_BYTES, MIN_POOL_BYTES } from '../../main/engine-host/capture-pool.ts';
import { nativeMemory } from '../../main/engine-host/native-memory.ts';
import { nativeHeader, smallRecords } from '../bundle/bundle-fixtures.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { bigRecord, pass1Records } from './capture-pool-crash-child.ts';
import { captureHeader, requireBuiltHost, setInputs, testlib, toyInputs } from './engine-host-fixtures.ts';

const tempDirs: string[] = [];
beforeAll(() => requireBuiltHost());
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function captureDir(label: string): string {
  const dir = freshTempDir(label);
  tempDirs.push(dir);
  rmSync(dir, { recursive: true });
  return dir;
}

/** Runs `body` with environment variables set (inherited by the engine-host process), restoring them after. */
async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((key) => [key, process.env[key]]));
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** The bulk engine (8 records of `rows` x 4 KiB per pass), prefill and 3 decodes, captured into `dir`. */
async function bulkCapture(dir: string, rows: number): Promise<PassResult[]> {
  const host = await EngineHost.start({ library: testlib('bulk_engine') });
  try {
    const inputs = toyInputs();
    await host.open();
    await setInputs(host, inputs);
    await host.setOption('bulk.rows', String(rows));
    await host.beginCapture(dir, captureHeader(host, inputs));
    const results: PassResult[] = [];
    for (const kind of ['prefill', 'decode', 'decode', 'decode'] as const) results.push(await host.runPass(kind));
    await host.finishCapture({ status: 'completed', message: '', last_pass: 3, last_boundary: null });
    return results;
  } finally {
    await host.close();
  }
}

/** Every boundary of a bundle in order, with its sha256 and the bytes it reads back. */
async function contents(dir: string): Promise<{ pass: number; name: string; sha256: string; data: Buffer }[]> {
  const bundle = await openBundle(dir);
  try {
    const out: { pass: number; name: string; sha256: string; data: Buffer }[] = [];
    for (const pass of bundle.passes) {
      for (const boundary of pass.boundaries) {
        out.push({
          pass: pass.index,
          name: boundary.name,
          sha256: boundary.sha256,
          data: Buffer.from((await bundle.readBoundary(pass.index, boundary.name)).data),
        });
      }
    }
    return out;
  } finally {
    await bundle.close();
  }
}

describe.runIf(nativeMemory() !== null)('the capture pool', () => {
  it.each([
    ['a pool of 64 KiB, far smaller than a pass (128 KiB): the engine waits', 4, 64 * 1024],
    ['a pool of 16 KiB, smaller than a record (64 KiB): the pool grows to hold one', 16, 16 * 1024],
  ])('%s, and every record lands whole and in order', async (_, rows, poolBytes) => {
    const pooledDir = captureDir('pool-tiny');
    const pooled = await withEnv({ TRACE_INSPECTOR_CAPTURE_POOL_BYTES: String(poolBytes) }, () => bulkCapture(pooledDir, rows));
    const directDir = captureDir('pool-direct');
    await withEnv({ TRACE_INSPECTOR_SPILL: 'write' }, () => bulkCapture(directDir, rows));

    for (const result of pooled) expect(result.status).toBe('ok');
    const stats = pooled.map((result) => (result.status === 'ok' ? result.capture : undefined));
    const record = rows * 4096;
    if (record < poolBytes) {
      expect(stats.every((stat) => stat?.poolBytes === poolBytes)).toBe(true);
      // Back-pressure happened: the engine's thread found the pool full and waited for the writer.
      expect(stats.reduce((sum, stat) => sum + (stat?.waits ?? 0), 0)).toBeGreaterThan(0);
    } else {
      // Grown to hold one record (and its frame), no more.
      expect(stats.every((stat) => (stat?.poolBytes ?? 0) > record && (stat?.poolBytes ?? 0) < 2 * record)).toBe(true);
    }

    const got = await contents(pooledDir);
    const want = await contents(directDir);
    expect(got.map(({ pass, name }) => `${pass}:${name}`)).toEqual(want.map(({ pass, name }) => `${pass}:${name}`));
    expect(got).toHaveLength(32);
    got.forEach((entry, i) => {
      expect(entry.sha256).toBe(want[i]?.sha256);
      expect(entry.data.equals(want[i]?.data ?? Buffer.alloc(0))).toBe(true);
    });
    expect(readdirSync(pooledDir)).not.toContain('capture.pool'); // removed once everything is applied
  });

  it('a record the pool cannot state (4 GiB and more: 32-bit lengths) is refused by its size before the ring grows, naming the way to capture it', () => {
    const memory = nativeMemory();
    if (memory === null) throw new Error('no shared mappings');
    const pool = CapturePool.open(captureDir('pool-too-large'), nativeHeader(), memory, MIN_POOL_BYTES);
    try {
      // The limit is the largest ring size (a multiple of MIN_POOL_BYTES) a 32-bit length states...
      expect(MAX_ENTRY_BYTES).toBeLessThanOrEqual(0xffffffff);
      expect(MAX_ENTRY_BYTES + MIN_POOL_BYTES).toBeGreaterThan(0xffffffff);
      // ...and one byte more is refused at once: the ring is not grown to a size its header cannot state.
      expect(() => pool.makeRoom(MAX_ENTRY_BYTES + 1)).toThrow(CapturePoolError);
      expect(() => pool.makeRoom(2 ** 32 + 16)).toThrow(/larger than the capture pool holds .*TRACE_INSPECTOR_SPILL=write/);
      expect(pool.size).toBe(MIN_POOL_BYTES);
    } finally {
      pool.close();
    }
  });

  it.each([
    ['the pass sealed before runPass resolves (the default): that runPass', false],
    ['sealing behind the engine (sealBehind, as `capture` and `--gate` do): finishCapture at the latest', true],
  ])('a writer that cannot write the next spill ends the capture with an error naming the file, without a hang; reported by %s', async (_, sealBehind) => {
    const dir = captureDir('pool-writer-fails');
    const host = await EngineHost.start({ library: testlib('toy_engine'), passTimeoutMs: 20_000 });
    const failures: Error[] = [];
    const failed = (error: unknown): null => {
      failures.push(error instanceof Error ? error : new Error(String(error)));
      return null;
    };
    try {
      const inputs = toyInputs();
      await host.open();
      await setInputs(host, inputs);
      await host.beginCapture(dir, captureHeader(host, inputs), { sealBehind });
      expect((await host.runPass('prefill')).status).toBe('ok');
      // A folder where the writer must create pass 1's spill: the writer fails applying the pass's begin.
      mkdirSync(join(dir, 'pass-001.spill'));
      const started = Date.now();
      const decode = await host.runPass('decode').then((result) => result, failed);
      if (!sealBehind) expect(decode).toBeNull();
      await host.finishCapture({ status: 'completed', message: '', last_pass: 1, last_boundary: null }).then(() => null, failed);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(failures.length).toBeGreaterThan(0);
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(EngineHostError);
        expect(failure.message).toContain(join(dir, 'pass-001.spill'));
        expect(failure.message).toContain('already exists');
      }
    } finally {
      await host.close(); // does not hang either
    }
    // What was sealed is kept, with the journal, for recover.
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['capture.journal.jsonl', 'pass-000.safetensors']));
  });

  // A real full disk: a small tmpfs (needs root to mount; skipped where mount is refused).
  const probe = join(captureDir('pool-disk-probe'), 'mnt');
  mkdirSync(probe, { recursive: true });
  const canMount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]).status === 0 && spawnSync('umount', [probe]).status === 0;

  it.skipIf(!canMount)('a full disk under the writer ends the capture with ENOSPC naming the file, without a hang', async () => {
    const mountPoint = join(captureDir('pool-disk'), 'mnt');
    mkdirSync(mountPoint, { recursive: true });
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]).status).toBe(0);
    try {
      const dir = join(mountPoint, 'run');
      const host = await EngineHost.start({ library: testlib('bulk_engine'), passTimeoutMs: 20_000 });
      const started = Date.now();
      let failure: Error | null = null;
      try {
        const inputs = toyInputs();
        await host.open();
        await setInputs(host, inputs);
        await host.setOption('bulk.rows', '16'); // 8 records of 64 KiB a pass: the disk fills up in the second pass
        await host.beginCapture(dir, captureHeader(host, inputs));
        for (let pass = 0; pass < 8 && failure === null; pass++) {
          failure = await host.runPass(pass === 0 ? 'prefill' : 'decode').then(
            () => null,
            (error: unknown) => error as Error,
          );
        }
        failure ??= await host.finishCapture({ status: 'completed', message: '', last_pass: 7, last_boundary: null }).then(
          () => null,
          (error: unknown) => error as Error,
        );
      } finally {
        await host.close();
      }
      expect(failure).toBeInstanceOf(EngineHostError);
      expect(failure?.message).toMatch(/ENOSPC/);
      expect(failure?.message).toContain(dir); // the file it could not write:
      // the records (64 KiB) go in place, so the write that fails is a pass file's, named as such.
      expect(failure?.message).toMatch(/pass-\d{3}\.safetensors: ENOSPC/);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(readdirSync(dir)).toContain('capture.journal.jsonl');
    } finally {
      spawnSync('umount', [mountPoint]);
    }
  });

  describe('after the process dies with the writer behind', () => {
    const child = join(import.meta.dirname, 'capture-pool-crash-child.ts');

    function crash(scenario: 'behind' | 'torn'): { dir: string; unapplied: number } {
      const dir = join(captureDir(`pool-crash-${scenario}`), 'bundle');
      const result = spawnSync(process.execPath, ['--import', 'tsx', child, dir, scenario], { encoding: 'utf8' });
      expect(result.signal, result.stderr).toBe('SIGKILL');
      const report = JSON.parse(result.stdout.trim()) as { unapplied: number };
      return { dir, unapplied: report.unapplied };
    }

    async function expectRecovered(dir: string, pass1: number): Promise<string> {
      const bundle = await openBundle(dir);
      try {
        expect(bundle.passes.map((pass) => [pass.index, pass.mode])).toEqual([
          [0, 'text'],
          [1, null],
        ]);
        expect(Buffer.from((await bundle.readBoundary(0, 'big')).data).equals(Buffer.from(bigRecord().data))).toBe(true);
        const want = pass1Records().slice(0, pass1);
        expect(bundle.passes[1]?.boundaries.map((boundary) => boundary.name)).toEqual(want.map((record) => record.name));
        for (const record of want) expect(Buffer.from((await bundle.readBoundary(1, record.name)).data).equals(Buffer.from(record.data))).toBe(true);
        return bundle.manifest.run?.message ?? '';
      } finally {
        await bundle.close();
      }
    }

    it('recovery applies what the pool held: pass 0 ended and sealed, pass 1 begun, its five records', async () => {
      const { dir, unapplied } = crash('behind');
      expect(unapplied).toBeGreaterThan(0); // the writer was still sealing pass 0
      NativeBundleWriter.recover(dir, { status: 'crashed', message: 'killed' });
      const message = await expectRecovered(dir, 5);
      expect(message).toMatch(/\d+ records? and \d+ pass entr(y|ies) applied from the capture pool/);
      expect(readdirSync(dir)).not.toContain('capture.pool');
      const manifest = readFileSync(join(dir, 'manifest.json'));
      NativeBundleWriter.recover(dir, { status: 'crashed', message: 'again' }); // a second recovery changes nothing
      expect(readFileSync(join(dir, 'manifest.json')).equals(manifest)).toBe(true);
    });

    it('an entry torn by the death (stored but for its magic) is dropped; the records before it are kept', async () => {
      const { dir, unapplied } = crash('torn');
      expect(unapplied).toBeGreaterThan(0);
      NativeBundleWriter.recover(dir, { status: 'crashed', message: 'killed' });
      await expectRecovered(dir, 5);
      expect(smallRecords()[1]).toHaveLength(5); // the sixth record is the torn one
    });
  });
});

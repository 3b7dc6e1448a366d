// A capture interrupted from outside, run as a user runs it (the real CLI, real signals):
// Ctrl+C / SIGTERM finish the bundle as "aborted" with its sealed passes (exit 130 / 143);
// after a SIGKILL the folder says it holds an interrupted capture and `recover` seals it; two
// captures into the same --out at once: the second is refused by name; a full disk is a named
// error that keeps what was sealed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { writeToyCase } from '../gate/gate-fixtures.ts';
import { TESTLIB_DIR, tempDirTracker } from '../helpers/paths.ts';
import { runCliProcess } from '../helpers/run-cli.ts';
import { startCapture, type RunningCli } from './interrupt-harness.ts';

const { tempDir, removeTempDirs } = tempDirTracker('interrupt');
afterAll(() => removeTempDirs());

const HANG_ENGINE = join(TESTLIB_DIR, 'libhang_engine.so');
const STACK_FRAME = /^\s+at /m;

/** A toy reference case (3 passes) the toy engines run; the hang engine hangs in decode pass 1. */
function toyReference(): string {
  return writeToyCase(tempDir('case'), { passes: 3 }).referenceDir;
}

/** Waits until pass 1 has begun in `dir` (journaled); it emits its first record microseconds later, then hangs. */
async function waitForPassOne(dir: string): Promise<void> {
  const journal = join(dir, 'capture.journal.jsonl');
  const deadline = Date.now() + 30_000;
  while (!(existsSync(journal) && readFileSync(journal, 'utf8').includes('"t":"pass_begin","pass":1')) && Date.now() < deadline) await sleep(20);
  await sleep(300);
}

/** Starts a capture with the hang engine and waits until prefill is sealed (it then hangs in pass 1). */
async function captureStuckInPassOne(out: string): Promise<RunningCli> {
  const run = startCapture(['capture', '--engine', HANG_ENGINE, '--bundle', toyReference(), '--out', out, '--timeout', '120']);
  await run.waitForStderr(/capture: pass 0 prefill: text/);
  await waitForPassOne(out);
  return run;
}

describe('Ctrl+C and SIGTERM during a capture', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s stops the engine and finishes the bundle as aborted with the sealed pass (exit %i)', async (signal, code) => {
    const out = join(tempDir('signal'), 'native');
    const run = await captureStuckInPassOne(out);
    run.child.kill(signal);
    const ended = await run.ended;
    expect(ended.code).toBe(code);
    expect(ended.stderr).toContain(`${signal} received`);
    expect(ended.stderr).toMatch(/is finished as an aborted bundle with 1 complete pass/);
    expect(ended.stderr).not.toContain('internal error');
    expect(ended.stderr).not.toMatch(STACK_FRAME);
    const bundle = await openBundle(out);
    try {
      expect(bundle.manifest.run?.status).toBe('aborted');
      expect(bundle.manifest.run?.message).toContain(`${signal} received`);
      expect(bundle.passes.map((pass) => [pass.index, pass.boundaries.length])).toEqual([
        [0, 3],
        [1, 1], // the whole record of the pass in flight (toy.embed), sealed from the spill
      ]);
      await bundle.readBoundary(0, 'toy.token');
    } finally {
      await bundle.close();
    }
    // The lock is gone with the capture; the engine host did not outlive it.
    expect(existsSync(join(out, 'capture.lock'))).toBe(false);
  });
});

describe('Ctrl+C during a gate run', () => {
  it('finishes the capture in flight as aborted, judges and signs nothing (exit 130), and a reused --work names what to recover', async () => {
    const root = tempDir('gate');
    const work = join(root, 'work');
    const { generateKeyPairSync } = await import('node:crypto');
    const key = join(root, 'gate.key');
    writeFileSync(key, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const gate = startCapture(['--gate', '--engine', HANG_ENGINE, '--bundle', toyReference(), '--work', work, '--key', key, '--timeout', '120']);
    const native = join(work, 'toy', 'native');
    await waitForPassOne(native);
    gate.child.kill('SIGINT');
    const ended = await gate.ended;
    expect(ended.code).toBe(130);
    expect(ended.stderr).toMatch(/gate: stopped: SIGINT received during case toy/);
    expect(ended.stderr).not.toMatch(STACK_FRAME);
    expect(existsSync(join(work, 'receipt.dsse.json'))).toBe(false);
    const bundle = await openBundle(native);
    expect(bundle.manifest.run?.status).toBe('aborted');
    await bundle.close();

    // A gate killed outright leaves its capture to recover; the next gate into that --work says so.
    const killedWork = join(root, 'killed');
    const killed = startCapture(['--gate', '--engine', HANG_ENGINE, '--bundle', toyReference(), '--work', killedWork, '--key', key, '--timeout', '120']);
    await waitForPassOne(join(killedWork, 'toy', 'native'));
    killed.child.kill('SIGKILL');
    await killed.ended;
    const again = runCliProcess(['--gate', '--engine', HANG_ENGINE, '--bundle', toyReference(), '--work', killedWork, '--key', key]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain(`\`trace-inspector recover ${join(killedWork, 'toy', 'native')}\` seals it`);
  });
});

describe('after a SIGKILL', () => {
  it('openBundle and capture name the interrupted capture and `recover` seals it with every sealed pass', async () => {
    const out = join(tempDir('kill'), 'native');
    const run = await captureStuckInPassOne(out);
    run.child.kill('SIGKILL');
    await run.ended;
    expect(existsSync(join(out, 'manifest.json'))).toBe(false);
    expect(existsSync(join(out, 'capture.journal.jsonl'))).toBe(true);

    // Opening the folder says exactly how to recover it.
    const opened = await openBundle(out).then(
      () => null,
      (error: unknown) => error,
    );
    expect(opened).toBeInstanceOf(BundleError);
    expect((opened as BundleError).message).toContain(`trace-inspector recover ${out}`);
    // So does a capture asked to write there.
    const again = runCliProcess(['capture', '--engine', HANG_ENGINE, '--bundle', toyReference(), '--out', out]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain(`run \`trace-inspector recover ${out}\``);

    const recovered = runCliProcess(['recover', out]);
    expect(recovered.stderr).toBe('');
    expect(recovered.status).toBe(0);
    expect(recovered.stdout).toMatch(/recovered .*: 2 passes, 4 records; run aborted/);
    const bundle = await openBundle(out);
    try {
      expect(bundle.manifest.run?.status).toBe('aborted');
      expect(bundle.passes.map((pass) => pass.boundaries.length)).toEqual([3, 1]);
    } finally {
      await bundle.close();
    }
    expect(readdirSync(out).sort()).toEqual(['inputs.safetensors', 'manifest.json', 'pass-000.safetensors', 'pass-001.safetensors']);
    // Recovering a finished bundle changes nothing.
    const twice = runCliProcess(['recover', out]);
    expect(twice.status).toBe(0);
    expect(twice.stdout).toContain('already a finished bundle');
  });

  it('recover refuses a folder while the capture that holds its lock is still running, and names what it is not', async () => {
    const out = join(tempDir('live'), 'native');
    const run = await captureStuckInPassOne(out);
    try {
      const refused = runCliProcess(['recover', out]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain(`a capture is still writing here (pid ${run.child.pid}`);
      expect(existsSync(join(out, 'manifest.json'))).toBe(false);
    } finally {
      run.child.kill('SIGINT');
      await run.ended;
    }
    const empty = tempDir('not-a-capture');
    const none = runCliProcess(['recover', empty]);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('holds no capture');
    const file = join(empty, 'file.txt');
    writeFileSync(file, 'x');
    expect(runCliProcess(['recover', file]).stderr).toContain('not a folder');
    expect(runCliProcess(['recover']).status).toBe(2);
  });
});

describe('two captures into the same --out at once', () => {
  it('the second is refused by name (exit 2) and the first is untouched', async () => {
    const out = join(tempDir('twice'), 'native');
    const first = await captureStuckInPassOne(out);
    try {
      const second = runCliProcess(['capture', '--engine', HANG_ENGINE, '--bundle', toyReference(), '--out', out]);
      expect(second.status).toBe(2);
      expect(second.stderr).toContain(`another capture is writing into this folder (pid ${first.child.pid}`);
      expect(second.stderr).not.toMatch(STACK_FRAME);
    } finally {
      first.child.kill('SIGINT');
    }
    expect((await first.ended).code).toBe(130);
    const bundle = await openBundle(out);
    expect(bundle.passes).toHaveLength(2);
    await bundle.close();
  });
});

describe('a full disk', () => {
  // A real full disk: a small tmpfs (needs root to mount; skipped where mount is refused). The
  // probe mounts and unmounts at once; the test mounts its own and always unmounts it.
  const probe = join(tempDir('disk-probe'), 'mnt');
  mkdirSync(probe);
  const canMount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]).status === 0 && spawnSync('umount', [probe]).status === 0;

  it.skipIf(!canMount)('is a named error (exit 1) that keeps every sealed pass, and recover seals them once space is freed', async () => {
    const mountPoint = join(tempDir('disk'), 'mnt');
    mkdirSync(mountPoint);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint]).status).toBe(0);
    try {
      await fullDiskCapture(mountPoint);
    } finally {
      spawnSync('umount', [mountPoint]);
    }
  });
});

async function fullDiskCapture(mountPoint: string): Promise<void> {
  {
    const out = join(mountPoint, 'run');
    // The reference engine's default case needs ~2.6 MB: the disk fills up during the capture.
    const run = runCliProcess(['capture', '--out', out]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/ENOSPC/);
    expect(run.stderr).toContain(`run \`trace-inspector recover ${out}\``);
    expect(run.stderr).not.toContain('internal error');
    expect(run.stderr).not.toMatch(STACK_FRAME);
    const sealed = readdirSync(out).filter((name) => /^pass-\d+\.safetensors$/.test(name));
    expect(sealed.length).toBeGreaterThan(0);
    expect(existsSync(join(out, 'capture.journal.jsonl'))).toBe(true);

    expect(spawnSync('mount', ['-o', 'remount,size=16m', mountPoint]).status).toBe(0);
    const recovered = runCliProcess(['recover', out]);
    expect(recovered.status).toBe(0);
    const bundle = await openBundle(out);
    try {
      expect(bundle.manifest.run?.status).toBe('aborted');
      // Every pass sealed before the disk filled up is in the bundle.
      expect(bundle.passes.length).toBeGreaterThanOrEqual(sealed.length);
    } finally {
      await bundle.close();
    }
  }
}

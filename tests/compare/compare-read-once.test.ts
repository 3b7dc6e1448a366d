// `compare` on tree-sha256 bundles reads every byte once: the leaves of the tensors it compares
// are hashed from the very windows it compares (bundle-reader.ts boundaryWindows, leaf-feed.ts),
// the workers read only what it does not (fed-verification.ts), and nothing is released before
// every digest matched. Its rows are the old path's; a changed byte — in a compared window, in a
// part the comparison never reads, in a header — fails the run naming the file and field.
import { chmodSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { ctimeSettled, REHASH_ENV } from '../../main/core/bundle/file-pins.ts';
import { leafHashPool } from '../../main/core/bundle/leaf-hash-pool.ts';
import { readOnceTally } from '../../main/core/bundle/leaf-feed.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import { runCompare } from '../../main/core/compare/compare-run.ts';
import { plainCompareOptions } from '../helpers/compare-options.ts';
import { InputError } from '../../main/core/io/input-error.ts';
import { tempDirTracker } from '../helpers/paths.ts';
import { writeScaleReference, type ScaleReferenceSpec } from '../scale/scale-reference.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { flipFileByte } from '../helpers/tensor-tamper.ts';

const { tempDir, removeTempDirs } = tempDirTracker('compare-read-once');
afterAll(removeTempDirs);
const saved = process.env[REHASH_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[REHASH_ENV];
  else process.env[REHASH_ENV] = saved;
});

const CHUNK = 64 * 1024;
// Two passes of the scale engine at a tiny size, leaves of 64 KiB (the logits span four).
const SPEC: ScaleReferenceSpec = { caseId: 'once', prompt: [1, 17, 300, 65_535], pcmSamples: 4800, passes: 2, kvCache: false, chunkBytes: CHUNK };
// Only a file whose ctime is older than this is fed (file-pins.ts PIN_MARGIN_MS): a bundle just
// written or changed is given time to settle, as any bundle a user compares has.
const SETTLE_MS = 150;

const options = plainCompareOptions;

/** A reference and a candidate holding the same values in other files (a copy), settled. */
async function pair(label: string): Promise<{ reference: string; candidate: string }> {
  const root = tempDir(label);
  const reference = writeScaleReference(join(root, 'reference'), SPEC).dir;
  const candidate = join(root, 'candidate');
  cpSync(reference, candidate, { recursive: true });
  await sleep(SETTLE_MS);
  return { reference, candidate };
}

/** Boundary tensor bytes of a bundle (what the comparison reads), and where one tensor lies. */
async function tensorBytes(dir: string): Promise<number> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { passes: { boundaries: { byte_length: number }[] }[] };
  return manifest.passes.reduce((sum, pass) => sum + pass.boundaries.reduce((inner, boundary) => inner + boundary.byte_length, 0), 0);
}

async function tensorAt(dir: string, passFile: string, key: string): Promise<{ file: string; begin: number }> {
  const file = join(dir, passFile);
  const tensors = await SafetensorsFile.open(file);
  await tensors.close();
  const info = tensors.tensor(key);
  if (info === undefined) throw new Error(`no ${key}`);
  return { file, begin: tensors.dataStart + info.begin };
}

async function flipByte(file: string, at: number, mask = 0x01): Promise<void> {
  flipFileByte(file, at, mask);
  await sleep(SETTLE_MS);
}

const rows = (result: Awaited<ReturnType<typeof runCompare>>): string =>
  JSON.stringify(result.cases[0]?.verdicts.map(({ durationMs: _durationMs, ...row }) => row));

const failure = (run: Promise<unknown>): Promise<Error> => rejectionOf(run, InputError);

describe('compare reads every byte once', () => {
  it('the rows of the old path; every compared tensor hashed from the windows compared, none read again, also on a second run', async () => {
    const { reference, candidate } = await pair('rows');
    const compared = (await tensorBytes(reference)) + (await tensorBytes(candidate));
    // Twice: the second run's files are pinned by the first, and are still fed, not read twice.
    const runs = [];
    for (let run = 0; run < 2; run++) {
      const before = { ...readOnceTally };
      runs.push(await runCompare(options(reference, candidate)));
      expect(readOnceTally.fedBytes - before.fedBytes).toBe(compared);
      expect(readOnceTally.rereadBytes - before.rereadBytes).toBe(0);
    }
    process.env[REHASH_ENV] = 'always';
    const old = await runCompare(options(reference, candidate));
    for (const now of runs) {
      expect(now.seals.overall).toBe('PASSED');
      expect(now.compared).toBeGreaterThan(20);
      expect(rows(now)).toBe(rows(old));
      expect(now.counts).toEqual(old.counts);
    }
  });

  it('a changed byte in a compared window is caught from the leaves of that window, naming the file and the tensor', async () => {
    const { reference, candidate } = await pair('window');
    const { file, begin } = await tensorAt(candidate, 'pass-0001.safetensors', 'backbone.logits');
    await flipByte(file, begin + 2 * CHUNK + 7);
    const before = { ...readOnceTally };
    const error = await failure(runCompare(options(reference, candidate)));
    expect(readOnceTally.rereadBytes - before.rereadBytes).toBe(0);
    expect(error.message).toContain(`candidate bundle ${candidate} is not valid`);
    expect(error.message).toContain(file);
    expect(error.message).toContain('files[2].sha256');
    expect(error.message).toContain('"backbone.logits"');
  });

  it('a changed byte in a window hashed on a leaf worker (handed over through shared memory) is caught, naming the file and the tensor', async () => {
    const { reference, candidate } = await pair('handover');
    const { file, begin } = await tensorAt(candidate, 'pass-0000.safetensors', 'backbone.logits');
    await flipByte(file, begin + CHUNK + 3, 0x80);
    const before = { ...leafHashPool().counts };
    const error = await failure(runCompare(options(reference, candidate)));
    // Every window went to the workers (the rings never fill on a bundle this small): the leaf
    // that did not match was answered through the shared job table, not hashed on this thread.
    expect(leafHashPool().counts.onWorkers - before.onWorkers).toBeGreaterThan(0);
    expect(leafHashPool().counts.onThisThread - before.onThisThread).toBe(0);
    expect(error.message).toContain(`candidate bundle ${candidate} is not valid`);
    expect(error.message).toContain(file);
    expect(error.message).toContain('"backbone.logits"');
  });

  it('a changed byte the comparison never reads (an input, a header) is caught by the workers, naming the file and field', async () => {
    const inputs = await pair('input');
    const input = JSON.parse(readFileSync(join(inputs.candidate, 'manifest.json'), 'utf8')) as { inputs: { file: string; key: string }[] };
    const first = input.inputs[0];
    if (first === undefined) throw new Error('the scale reference records inputs');
    const at = await tensorAt(inputs.candidate, first.file, first.key);
    await flipByte(at.file, at.begin + 1);
    const inputError = await failure(runCompare(options(inputs.reference, inputs.candidate)));
    expect(inputError.message).toContain(at.file);
    expect(inputError.message).toContain('files[0].sha256');

    const headers = await pair('header');
    const file = join(headers.reference, 'pass-0000.safetensors');
    // The header's last byte, a space of its padding, made a tab: the same header, other bytes.
    const headerEnd = 8 + Number(readFileSync(file).readBigUInt64LE(0));
    expect(
      readFileSync(file)
        .subarray(headerEnd - 1, headerEnd)
        .toString(),
    ).toBe(' ');
    await flipByte(file, headerEnd - 1, 0x20 ^ 0x09);
    const headerError = await failure(runCompare(options(headers.reference, headers.candidate)));
    expect(headerError.message).toContain(`reference bundle ${headers.reference} is not valid`);
    expect(headerError.message).toContain(file);
    expect(headerError.message).toContain('files[1].sha256');
  });

  it('a tensor never read, or read off the chunk grid, is read and hashed by the workers at the settle: a changed byte there is caught', async () => {
    const { reference } = await pair('unread');
    const { file, begin } = await tensorAt(reference, 'pass-0000.safetensors', 'backbone.logits');
    const clean = await openBundle(reference, { verify: 'deferred' });
    const windows = await clean.boundaryWindows?.(0, 'backbone.logits');
    if (windows === undefined || windows === null) throw new Error('a deferred tree bundle reads in windows');
    const before = { ...readOnceTally };
    // The first half of a leaf, then the second: neither read holds a whole leaf, none is taken.
    await windows.read(0, new Uint8Array(CHUNK / 2));
    await windows.read(CHUNK / 2, new Uint8Array(CHUNK / 2));
    await windows.finish();
    expect(await clean.settleVerification?.()).toBe(true);
    expect(readOnceTally.rereadBytes - before.rereadBytes).toBe(await tensorBytes(reference));
    await clean.close();

    await flipByte(file, begin + 3 * CHUNK + 1);
    const tampered = await openBundle(reference, { verify: 'deferred' });
    const error = await tampered.settleVerification?.().then(
      () => null,
      (caught: unknown) => caught,
    );
    await tampered.close();
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).code).toBe('E_DIGEST');
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toContain('"backbone.logits"');
  });

  it('a file written to while its windows are read is refused naming the tensor; bytes read in its ctime tick are never fed', async () => {
    const { reference } = await pair('during');
    const { file } = await tensorAt(reference, 'pass-0000.safetensors', 'backbone.logits');
    const bundle = await openBundle(reference, { verify: 'deferred' });
    const windows = await bundle.boundaryWindows?.(0, 'backbone.logits');
    if (windows === undefined || windows === null) throw new Error('a deferred tree bundle reads in windows');
    await windows.read(0, new Uint8Array(CHUNK));
    writeFileSync(file, readFileSync(file));
    await expect(windows.finish()).rejects.toThrow(/written to while the tensor was read/);
    expect(await bundle.settleVerification?.()).toBe(false);
    await bundle.close();

    // A file changed just before it is read: a write in the same ctime tick could go unseen, so
    // the read is not fed (its leaves are read again by the workers).
    const fresh = await openBundle(reference, { verify: 'deferred' });
    chmodSync(file, 0o644);
    const before = { ...readOnceTally };
    const freshWindows = await fresh.boundaryWindows?.(0, 'backbone.logits');
    if (freshWindows === undefined || freshWindows === null) throw new Error('a deferred tree bundle reads in windows');
    await freshWindows.read(0, new Uint8Array(CHUNK));
    await freshWindows.finish();
    await fresh.settleVerification?.();
    await fresh.close();
    expect(readOnceTally.fedBytes).toBe(before.fedBytes);
    expect(readOnceTally.rereadBytes).toBeGreaterThan(before.rereadBytes);

    // The identity's ctime is its last field: fed only when older than the pin margin at the read.
    const now = Date.now();
    const identity = (ctimeMs: number): string => `1:2:3:4:${BigInt(ctimeMs) * 1_000_000n + 5n}`;
    expect(ctimeSettled(identity(now - 500), now)).toBe(true);
    expect(ctimeSettled(identity(now - 20), now)).toBe(false);
  });
});

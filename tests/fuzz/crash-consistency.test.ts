// Crash consistency: the CLI capturing with the reference engine is killed at a random point
// (seeded: after a random pass, plus a random delay), then its folder is opened the way a user
// would. It is either a bundle already (the kill came after the manifest) or openBundle names
// the interrupted capture and `trace-inspector recover` seals it; either way every pass whose
// seal was journaled before the kill is in the bundle, byte for byte. Bounded: a few trials.
// The same with the scale engine, whose large records the capture writes in place in the pass
// files (pass-file-in-place.ts): every record kept reads back with its digest and holds the
// reference's bytes.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { testlib } from '../gate/gate-fixtures.ts';
import { writeScaleReference } from '../scale/scale-reference.ts';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { startCapture } from '../cli/interrupt-harness.ts';
import { referenceBundle, tempDirTracker } from '../helpers/paths.ts';
import { runCliProcess } from '../helpers/run-cli.ts';
import { fuzzScale, fuzzSeed, INTERNAL_ERROR, Rng, STACK_FRAME } from './fuzz-harness.ts';

const { tempDir, removeTempDirs } = tempDirTracker('crash');
afterAll(() => removeTempDirs());

const CASE = 'greedy';

/** The passes whose seal reached the journal: what a kill must never lose, with each file's sha256. */
function journaledSeals(dir: string): Map<number, string> {
  const sealed = new Map<number, string>();
  const path = join(dir, 'capture.journal.jsonl');
  if (!existsSync(path)) return sealed;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.includes('"t":"pass_sealed"')) continue;
    try {
      const seal = JSON.parse(line) as { pass: number; file: { path: string } };
      sealed.set(seal.pass, sha256(join(dir, seal.file.path)));
    } catch {
      // a torn last line: not a seal
    }
  }
  return sealed;
}

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * Kills `capture` runs at random points (seeded) and opens or recovers what each left. `args`:
 * the capture's arguments but --out; `compareData`: every pass but the last kept must hold all of
 * the reference's records, and every record kept the reference's bytes (an engine that computes
 * its reference exactly).
 */
async function killAtRandom(label: string, args: readonly string[], referenceDir: string, compareData: boolean): Promise<void> {
  {
    const rng = new Rng(fuzzSeed(label));
    const passes = (await openBundle(referenceDir, { verify: 'none' })).passes.length;
    const reference = compareData ? await openBundle(referenceDir) : null;
    const trials = Math.round(4 * fuzzScale());
    const outcomes: string[] = [];
    const trial = async (t: number, afterPass: number, delayMs: number, signal: NodeJS.Signals): Promise<void> => {
      const out = join(tempDir(`${label.replaceAll(' ', '-')}-${t}`), 'native');
      const run = startCapture(['capture', ...args, '--out', out]);
      const where = `trial ${t}: ${signal} ${delayMs} ms after pass ${afterPass}`;
      await run.waitForStderr(new RegExp(`capture: pass ${afterPass} `)).catch(() => undefined); // the run may finish first
      await sleep(delayMs);
      // What was sealed when the signal left (a seal journaled after it is a bonus, not a promise).
      const sealedBefore = journaledSeals(out);
      run.child.kill(signal);
      const ended = await run.ended;
      expect(ended.stderr, where).not.toMatch(INTERNAL_ERROR);
      expect(ended.stderr, where).not.toMatch(STACK_FRAME);

      let bundle: TraceBundle;
      try {
        bundle = await openBundle(out);
        outcomes.push(`${where}: a bundle already (exit ${ended.code ?? ended.signal})`);
      } catch (error) {
        if (!(error instanceof BundleError)) throw error;
        expect(error.message, where).toContain(`trace-inspector recover ${out}`);
        const recovered = runCliProcess(['recover', out]);
        expect(recovered.stderr, where).toBe('');
        expect(recovered.status, where).toBe(0);
        bundle = await openBundle(out);
        outcomes.push(`${where}: recovered (${bundle.manifest.run?.message ?? ''})`);
      }
      try {
        for (const [pass, digest] of sealedBefore) {
          const entry = bundle.passes.find((candidate) => candidate.index === pass);
          expect(entry, `${where}: sealed pass ${pass} lost`).toBeDefined();
          expect(sha256(join(out, entry?.file ?? '')), `${where}: pass ${pass} changed`).toBe(digest);
        }
        // A pass before the last one kept holds every record: recovery drops only what the death tore.
        if (reference !== null)
          for (const pass of bundle.passes.slice(0, -1))
            expect(pass.boundaries.length, `${where}: pass ${pass.index}`).toBe(reference.passes[pass.index]?.boundaries.length);
        // Every tensor that survived reads back with its digest (and, given, holds the reference's bytes).
        for (const pass of bundle.passes)
          for (const boundary of pass.boundaries) {
            const read = await bundle.readBoundary(pass.index, boundary.name);
            if (reference === null) continue;
            const want = await reference.readBoundary(pass.index, boundary.name);
            expect(Buffer.from(read.data).equals(Buffer.from(want.data)), `${where}: pass ${pass.index} ${boundary.name}`).toBe(true);
          }
        expect(bundle.manifest.run?.status, where).toMatch(/^(completed|aborted)$/);
      } finally {
        await bundle.close();
      }
    };
    const plans = Array.from({ length: trials }, (_, t) => ({
      t,
      afterPass: rng.int(passes),
      delayMs: rng.int(40),
      signal: rng.chance(0.75) ? ('SIGKILL' as const) : ('SIGINT' as const),
    }));
    // Two at a time (two cores).
    const queue = [...plans];
    await Promise.all(
      [0, 1].map(async () => {
        for (let plan = queue.shift(); plan !== undefined; plan = queue.shift()) await trial(plan.t, plan.afterPass, plan.delayMs, plan.signal);
      }),
    );
    await reference?.close();
    process.stdout.write(`${outcomes.join('\n')}\n`);
    expect(outcomes).toHaveLength(trials);
  }
}

describe('a capture killed at a random point', () => {
  it('is recovered or names how, and never loses a sealed pass', async () => {
    await killAtRandom('crash consistency', ['--bundle', referenceBundle(CASE)], referenceBundle(CASE), false);
  }, 120_000);

  it('with its large records written in place: recovered, every record kept holds the bytes the engine emitted', async () => {
    // 64 prompt tokens: hidden states of 68 x 2048 f32 (544 KiB), logits 256 KiB, KV caches: in place.
    const spec = {
      caseId: 'scale-crash',
      prompt: Array.from({ length: 64 }, (_, i) => (i * 37) % 65_536),
      pcmSamples: 4800,
      passes: 21,
      kvCache: true,
      chunkBytes: 64 * 1024,
    };
    const reference = writeScaleReference(join(tempDir('scale-reference'), 'reference'), spec);
    const options = Object.entries(reference.engineOptions).flatMap(([key, value]) => ['--option', `${key}=${value}`]);
    await killAtRandom('crash in place', ['--engine', testlib('scale_engine'), '--bundle', reference.dir, ...options], reference.dir, true);
  }, 120_000);
});

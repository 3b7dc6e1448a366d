// Crash consistency: the CLI capturing with the reference engine is killed at a random point
// (seeded: after a random pass, plus a random delay), then its folder is opened the way a user
// would. It is either a bundle already (the kill came after the manifest) or openBundle names
// the interrupted capture and `trace-inspector recover` seals it; either way every pass whose
// seal was journaled before the kill is in the bundle, byte for byte. Bounded: a few trials.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
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

describe('a capture killed at a random point', () => {
  it('is recovered or names how, and never loses a sealed pass', async () => {
    const rng = new Rng(fuzzSeed('crash consistency'));
    const passes = (await openBundle(referenceBundle(CASE), { verify: 'none' })).passes.length;
    const trials = Math.round(4 * fuzzScale());
    const outcomes: string[] = [];
    const trial = async (t: number, afterPass: number, delayMs: number, signal: NodeJS.Signals): Promise<void> => {
      const out = join(tempDir(`trial-${t}`), 'native');
      const run = startCapture(['capture', '--bundle', referenceBundle(CASE), '--out', out]);
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
        outcomes.push(`${where}: recovered`);
      }
      try {
        for (const [pass, digest] of sealedBefore) {
          const entry = bundle.passes.find((candidate) => candidate.index === pass);
          expect(entry, `${where}: sealed pass ${pass} lost`).toBeDefined();
          expect(sha256(join(out, entry?.file ?? '')), `${where}: pass ${pass} changed`).toBe(digest);
        }
        // Every tensor that survived reads back with its digest.
        for (const pass of bundle.passes) for (const boundary of pass.boundaries) await bundle.readBoundary(pass.index, boundary.name);
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
    process.stdout.write(`${outcomes.join('\n')}\n`);
    expect(outcomes).toHaveLength(trials);
  }, 120_000);
});

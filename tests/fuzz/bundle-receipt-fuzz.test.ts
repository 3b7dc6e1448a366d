// Seeded, bounded fuzzing of what other people send: bundle manifests, safetensors headers and
// receipts, randomly mutated (fuzz-harness.ts), through the real readers in this process and
// through the real CLI (capture, gate, verify). Whatever the mutation:
//   - a reader answers with its named error (BundleError, ReceiptError) or a verdict, nothing else;
//   - the CLI exits 0/1 with a verdict or 2 with a named error, never "internal error" or a stack;
//   - nothing hangs past its bound; nothing is written outside the command's target.
// The seed is printed; TI_FUZZ_SEED reproduces a run (see fuzz-harness.ts).
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { ReceiptError } from '../../main/core/receipt/errors.ts';
import { parseEnvelope, verifyEnvelopeBytes } from '../../main/core/receipt/receipt.ts';
import { writeToyCase } from '../gate/gate-fixtures.ts';
import { REPO_ROOT, TESTLIB_DIR, tempDirTracker } from '../helpers/paths.ts';
import { runCliBounded, runCliProcess } from '../helpers/run-cli.ts';
import { changedOutside, fuzzScale, fuzzSeed, INTERNAL_ERROR, mutateBytes, mutateJson, Rng, snapshotTree, STACK_FRAME } from './fuzz-harness.ts';

const { tempDir, removeTempDirs } = tempDirTracker('fuzz');
afterAll(() => removeTempDirs());

const scale = fuzzScale();
const TOY_ENGINE = join(TESTLIB_DIR, 'libtoy_engine.so');

/** A toy case, a signing key and a real gate receipt over it (the receipt fuzz mutates that). */
let root: string;
let referenceDir: string;
let receiptPath: string;
let publicKeyPath: string;
let privateKeyPath: string;

beforeAll(() => {
  root = tempDir('case');
  referenceDir = writeToyCase(join(root, 'case'), { passes: 3 }).referenceDir;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  privateKeyPath = join(root, 'gate.key');
  publicKeyPath = join(root, 'gate.pub');
  writeFileSync(privateKeyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(publicKeyPath, publicKey.export({ type: 'spki', format: 'pem' }));
  const work = join(root, 'gate-work');
  const gate = runCliProcess(['--gate', '--engine', TOY_ENGINE, '--bundle', referenceDir, '--work', work, '--key', privateKeyPath]);
  if (gate.status !== 0) throw new Error(`the gate over the toy case did not pass:\n${gate.stderr}\n${gate.stdout}`);
  receiptPath = join(work, 'receipt.dsse.json');
}, 60_000);

/** Runs `body` up to `count` times or until `budgetMs` has passed; returns how many ran. */
async function iterate(count: number, budgetMs: number, body: (i: number) => Promise<void>): Promise<number> {
  const started = Date.now();
  let i = 0;
  for (; i < count && Date.now() - started < budgetMs; i++) await body(i);
  return i;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}

describe('the bundle reader under mutated manifests and safetensors headers', () => {
  it('answers every mutation with a valid bundle or a BundleError', async () => {
    const rng = new Rng(fuzzSeed('bundle reader'));
    const dir = tempDir('reader');
    cpSync(referenceDir, dir, { recursive: true });
    const manifestPath = join(dir, 'manifest.json');
    const manifestText = readFileSync(manifestPath, 'utf8');
    const passFiles = readdirSync(dir).filter((name) => name.endsWith('.safetensors'));
    const originals = new Map(passFiles.map((name) => [name, readFileSync(join(dir, name))]));
    const outcomes = { opened: 0, refused: 0 };
    const ran = await iterate(150 * scale, 15_000 * scale, async (i) => {
      // Restore, then mutate either the manifest or one safetensors file's header.
      writeFileSync(manifestPath, manifestText);
      for (const [name, bytes] of originals) writeFileSync(join(dir, name), bytes);
      let what: string;
      if (rng.chance(0.5)) {
        const mutated = mutateJson(JSON.parse(manifestText), rng);
        writeFileSync(manifestPath, JSON.stringify(mutated.json));
        what = `manifest: ${mutated.what.join('; ')}`;
      } else {
        const name = rng.pick(passFiles);
        const bytes = originals.get(name) as Buffer;
        const headerEnd = 8 + Number(bytes.readBigUInt64LE(0));
        const mutated = mutateBytes(bytes, rng, headerEnd);
        writeFileSync(join(dir, name), mutated.bytes);
        what = `${name}: ${mutated.what}`;
      }
      try {
        const bundle = await openBundle(dir);
        try {
          for (const pass of bundle.passes) for (const boundary of pass.boundaries) await bundle.readBoundary(pass.index, boundary.name);
        } finally {
          await bundle.close();
        }
        outcomes.opened += 1;
      } catch (error) {
        if (!(error instanceof BundleError)) throw new Error(`iteration ${i} (${what}): not a BundleError: ${describeError(error)}`);
        expect(error.message.length).toBeGreaterThan(0);
        outcomes.refused += 1;
      }
    });
    expect(ran).toBeGreaterThan(20);
    // The mutations are hostile: most are refused (a bundle that opened was changed harmlessly).
    expect(outcomes.refused).toBeGreaterThan(outcomes.opened);
  }, 60_000);
});

describe('receipt verification under mutated receipts', () => {
  it('answers every mutation with NOT VERIFIED (reasons given) or a ReceiptError, never VERIFIED', async () => {
    const rng = new Rng(fuzzSeed('receipt verification') + 1);
    const original = readFileSync(receiptPath);
    const ran = await iterate(150 * scale, 10_000 * scale, async (i) => {
      let bytes: Buffer;
      let what: string;
      if (rng.chance(0.5)) {
        const mutated = mutateBytes(original, rng);
        bytes = mutated.bytes;
        what = mutated.what;
      } else {
        const envelope = JSON.parse(original.toString('utf8')) as Record<string, unknown>;
        // Half the JSON mutations go into the signed payload itself (re-encoded, signature kept).
        if (rng.chance(0.5) && typeof envelope['payload'] === 'string') {
          const payload = JSON.parse(Buffer.from(envelope['payload'], 'base64').toString('utf8')) as Parameters<typeof mutateJson>[0];
          const mutated = mutateJson(payload, rng);
          envelope['payload'] = Buffer.from(JSON.stringify(mutated.json)).toString('base64');
          what = `payload: ${mutated.what.join('; ')}`;
        } else {
          const mutated = mutateJson(envelope as Parameters<typeof mutateJson>[0], rng);
          what = `envelope: ${mutated.what.join('; ')}`;
        }
        bytes = Buffer.from(`${JSON.stringify(envelope)}\n`);
      }
      if (bytes.equals(original)) return;
      try {
        const verification = await verifyEnvelopeBytes(parseEnvelope(bytes, `mutation ${i}`), { publicKey: publicKeyPath });
        expect(verification.ok, `iteration ${i} (${what}) verified`).toBe(false);
        expect(verification.reasons.length).toBeGreaterThan(0);
      } catch (error) {
        if (!(error instanceof ReceiptError)) throw new Error(`iteration ${i} (${what}): not a ReceiptError: ${describeError(error)}`);
      }
    });
    expect(ran).toBeGreaterThan(20);
  }, 60_000);
});

describe('the real CLI under mutated inputs', () => {
  it('capture, gate and verify: exit 0/1 with a verdict or 2 with a named error, no stack, no hang, nothing written outside the target', async () => {
    const rng = new Rng(fuzzSeed('cli') + 2);
    const trials = Math.round(4 * scale);
    const jobs: (() => Promise<void>)[] = [];
    for (let t = 0; t < trials; t++) {
      // Each trial: its own sandbox with a mutated copy of the toy reference and of the receipt.
      const sandbox = tempDir(`cli-${t}`);
      const bundle = join(sandbox, 'reference');
      cpSync(referenceDir, bundle, { recursive: true });
      const manifestPath = join(bundle, 'manifest.json');
      let what: string;
      if (rng.chance(0.6)) {
        const mutated = mutateJson(JSON.parse(readFileSync(manifestPath, 'utf8')), rng);
        writeFileSync(manifestPath, JSON.stringify(mutated.json));
        what = `manifest: ${mutated.what.join('; ')}`;
      } else {
        const name = rng.pick(readdirSync(bundle).filter((file) => file.endsWith('.safetensors')));
        const bytes = readFileSync(join(bundle, name));
        const mutated = mutateBytes(bytes, rng, 8 + Number(bytes.readBigUInt64LE(0)));
        writeFileSync(join(bundle, name), mutated.bytes);
        what = `${name}: ${mutated.what}`;
      }
      const receipt = join(sandbox, 'receipt.dsse.json');
      writeFileSync(receipt, mutateBytes(readFileSync(receiptPath), rng).bytes);
      const runs: { args: string[]; target: string; exits: number[] }[] = [
        {
          args: ['capture', '--engine', TOY_ENGINE, '--bundle', bundle, '--out', join(sandbox, 'out'), '--timeout', '20'],
          target: join(sandbox, 'out'),
          exits: [0, 1, 2],
        },
        {
          args: ['--gate', '--engine', TOY_ENGINE, '--bundle', bundle, '--work', join(sandbox, 'work'), '--key', privateKeyPath, '--timeout', '20'],
          target: join(sandbox, 'work'),
          exits: [0, 1, 2],
        },
        { args: ['verify', receipt, '--pubkey', publicKeyPath, '--subjects', bundle], target: join(sandbox, 'none'), exits: [1, 2] },
      ];
      for (const run of runs) {
        jobs.push(async () => {
          const before = snapshotTree(sandbox);
          const beforeRepo = snapshotTree(join(REPO_ROOT, 'fixtures'));
          const answer = await runCliBounded(run.args, { cwd: sandbox, timeoutMs: 45_000 });
          const text = `${answer.stderr}${answer.stdout}`;
          const context = `trial ${t} (${what}): ${run.args[0]}\n${text}`;
          expect(answer.timedOut, `hung: ${context}`).toBe(false);
          expect(answer.signal, `killed: ${context}`).toBeNull();
          expect(text, context).not.toMatch(INTERNAL_ERROR);
          expect(text, context).not.toMatch(STACK_FRAME);
          expect(run.exits, context).toContain(answer.status);
          if (answer.status === 2) expect(text, context).toMatch(/trace-inspector: |--gate: |verify: /);
          expect(changedOutside(before, snapshotTree(sandbox), [run.target]), context).toEqual([]);
          expect(changedOutside(beforeRepo, snapshotTree(join(REPO_ROOT, 'fixtures')), []), context).toEqual([]);
        });
      }
    }
    // Two at a time: the machine has two cores.
    const queue = [...jobs];
    await Promise.all(
      [0, 1].map(async () => {
        for (let job = queue.shift(); job !== undefined; job = queue.shift()) await job();
      }),
    );
  }, 120_000);
});

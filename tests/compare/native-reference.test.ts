// A native bundle as the reference of `--gate` and `capture` (issue 13): refused without
// contracts (it declares none), admitted with `--contract bit_exact` or a `--contracts` file,
// judged under them — a clean run of the same engine passes bit for bit, a perturbed one fails at
// the perturbation's boundary — and a contracts file is pinned by the gate's receipt. A capture
// names the weights it ran with relative to itself, so it stands as a reference with no --weights.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, WEIGHTS_FILE, freshTempDir, referenceBundle } from '../helpers/paths.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}
function cli(args: readonly string[]): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
const seals = (run: Run): string[] => run.stdout.split('\n').filter((line) => /^(FIDELITY|OVERALL|GAP): /.test(line));

const root = freshTempDir('native-reference');
const native = join(root, 'native');
let key = { privateKeyPath: '', publicKeyPath: '' };
let works = 0;
const work = (): string => join(root, `work-${(works += 1)}`);
beforeAll(() => {
  key = keyFiles(root);
  const run = cli(['capture', '--bundle', referenceBundle('topk_ties'), '--out', native]);
  expect(run.status, run.stderr).toBe(0);
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

// No --weights: the capture names the weights it ran with, relative to itself.
const gate = (extra: string[]): Run => cli(['--gate', '--bundle', native, '--key', key.privateKeyPath, '--work', work(), ...extra]);
const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const modelOf = (dir: string): { weights_file?: string; weights_sha256?: string } =>
  (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { provenance: { model: { weights_file?: string; weights_sha256?: string } } }).provenance
    .model;

describe('the weights a capture names', () => {
  it('are the ones it ran with, relative to its own folder, with their digest', () => {
    const model = modelOf(native);
    expect(resolve(native, model.weights_file ?? '')).toBe(WEIGHTS_FILE);
    expect(model.weights_sha256).toBe(sha256(WEIGHTS_FILE));
  });

  it("are the file named with --weights and its own digest, not the reference's", () => {
    // The deliberate error a copied model would hide: other weights (one byte changed) than the reference's.
    const other = join(root, 'other-weights.safetensors');
    const bytes = readFileSync(WEIGHTS_FILE);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0x01;
    writeFileSync(other, bytes);
    const out = join(root, 'other-weights-run');
    cli(['capture', '--bundle', referenceBundle('prefill_1tok'), '--weights', other, '--out', out]);
    const model = modelOf(out);
    expect(resolve(out, model.weights_file ?? '')).toBe(other);
    expect(model.weights_sha256).toBe(sha256(other));
    expect(model.weights_sha256).not.toBe(sha256(WEIGHTS_FILE));
  });
});

describe('a native bundle as the reference of --gate and capture', () => {
  it('is refused without contracts, exit 2 naming its manifest and kind and saying how to supply them', () => {
    const run = gate([]);
    expect(run.stderr).toContain(`${join(native, 'manifest.json')}: kind: is "native", expected "reference"`);
    expect(run.stderr).toContain('--contracts FILE or --contract bit_exact');
    expect(run.status).toBe(2);
  });

  it('gates the same engine bit for bit with --contract bit_exact, and fails a perturbation at its boundary', () => {
    const clean = gate(['--contract', 'bit_exact']);
    expect(clean.stdout).toMatch(/all \d+ boundary rows PASS/);
    expect(clean.stdout).toContain('contracts --contract bit_exact for every boundary without a contract');
    // A native reference has no fp64 oracle beside it: that is a gap, as for any case without one.
    expect(seals(clean)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: oracle_absent:topk_ties']);
    expect(clean.status).toBe(0);
    const perturbed = gate(['--contract', 'bit_exact', '--option', 'perturb.logits_bf16_truncate=1']);
    expect(perturbed.stdout).toContain('first divergence: case topk_ties, pass 0 / backbone.logits (stage backbone)');
    expect(seals(perturbed).slice(0, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    expect(perturbed.status).toBe(1);
  });

  it('pins a --contracts file in the gate receipt', () => {
    const contracts = join(root, 'engine-contracts.json');
    writeFileSync(contracts, JSON.stringify({ schema: 'trace-inspector.contracts', schema_version: 1, rules: [{ boundaries: '*', contract: 'bit_exact' }] }));
    const receipt = join(root, 'gate-receipt.dsse.json');
    const run = gate(['--contracts', contracts, '--receipt', receipt]);
    expect(run.stdout).toContain(`contracts contracts file ${contracts} (1 rule(s))`);
    expect(run.status).toBe(0);
    const verified = cli([
      'verify',
      receipt,
      '--pubkey',
      key.publicKeyPath,
      '--subjects',
      root,
      '--subjects',
      join(REPO_ROOT, 'engine', 'build'),
      '--subjects',
      join(REPO_ROOT, 'fixtures', 'weights'),
    ]);
    expect(verified.stdout).toContain('subject    engine-contracts.json: OK');
    expect(verified.status).toBe(0);
  });

  it('captures against a native reference with --contract bit_exact: every boundary identical', () => {
    const run = cli(['capture', '--bundle', native, '--contract', 'bit_exact', '--weights', WEIGHTS_FILE, '--out', join(root, 'recaptured')]);
    expect(run.stdout).toMatch(/^(\d+) comparisons: \1 identical, 0 within bound, 0 failing, 0 missing, 0 not in reference$/m);
    expect(run.status).toBe(0);
  });
});

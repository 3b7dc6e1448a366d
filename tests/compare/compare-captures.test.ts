// `trace-inspector compare` on real captures: the reference engine run twice over the committed
// topk_ties case (same options, then a deliberate perturbation), judged bundle against bundle
// with no engine running: identical runs pass bit for bit with a receipt over both bundles; the
// perturbation fails at the boundary its option names; a candidate that names its boundaries
// differently fails without a map and passes through one; a second implementation given as
// --oracle that disagrees makes the rows REVIEW_REQUIRED; --baseline holds a faithful reference
// bit for bit.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, REPO_ROOT, freshTempDir, referenceBundle } from '../helpers/paths.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: readonly string[], env: Record<string, string> = {}): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '', ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const CASE = 'topk_ties';
const root = freshTempDir('compare-captures');
let key = { privateKeyPath: '', publicKeyPath: '' };
const first = join(root, 'first');
const second = join(root, 'second');
const perturbed = join(root, 'perturbed');
/** A second implementation that stores the logits through bf16: every pass the same, only values differ. */
const truncating = join(root, 'truncating');
let receiptCount = 0;
const receipt = (): string => join(root, `receipt-${(receiptCount += 1)}.dsse.json`);
/** The FIDELITY and OVERALL seal lines (GAP lines follow them). */
const seals = (run: Run): string[] => run.stdout.split('\n').filter((line) => /^(FIDELITY|OVERALL): /.test(line));

function capture(out: string, options: string[] = []): void {
  const run = cli(['capture', '--bundle', referenceBundle(CASE), '--out', out, ...options.flatMap((option) => ['--option', option])]);
  expect(run.stderr).not.toMatch(/internal error/i);
  expect(run.status, run.stderr).toBe(0);
}

const Manifest = z.object({ passes: z.array(z.object({ boundaries: z.array(z.object({ name: z.string() }).loose()) }).loose()) }).loose();
function rowsOf(dir: string): number {
  return Manifest.parse(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))).passes.reduce((sum, pass) => sum + pass.boundaries.length, 0);
}

beforeAll(() => {
  key = keyFiles(root);
  capture(first);
  capture(second);
  capture(perturbed, ['perturb.kv_position_off_by_one=1']);
  capture(truncating, ['perturb.logits_bf16_truncate=1']);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('compare: two captures of the reference engine', () => {
  it('passes two identical runs bit for bit (no flags: a native reference is judged bit_exact) and signs a receipt over both bundles', () => {
    const signed = receipt();
    const json = join(root, 'identical.json');
    const run = cli(['compare', first, second, '--key', key.privateKeyPath, '--receipt', signed, '--json', json]);
    expect(run.stderr).not.toMatch(/internal error/i);
    const rows = rowsOf(first);
    expect(rows).toBeGreaterThan(500);
    expect(run.stdout).toContain(`all ${rows} boundary rows PASS`);
    expect(run.stdout).toContain('contracts  bit_exact for every boundary the native reference declares no contract for');
    expect(seals(run)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(run.status).toBe(0);
    // Every contract used is bit_exact, and the JSON says what the comparison was.
    const result = z
      .object({
        contracts: z.record(z.string(), z.object({ kind: z.string() }).loose()),
        comparison: z.object({ candidate: z.object({ dir: z.string() }).loose() }).loose(),
      })
      .loose()
      .parse(JSON.parse(readFileSync(json, 'utf8')));
    expect(new Set(Object.values(result.contracts).map((contract) => contract.kind))).toEqual(new Set(['bit_exact']));
    expect(result.comparison.candidate.dir).toBe(second);
    // The receipt names both bundles' manifests and verifies against them.
    const verified = cli(['verify', signed, '--pubkey', key.publicKeyPath, '--subjects', root]);
    expect(verified.stdout).toContain('subject    first/manifest.json: OK');
    expect(verified.stdout).toContain('subject    second/manifest.json: OK');
    expect(verified.stdout).toContain('sealed     FIDELITY: OK');
    expect(verified.status).toBe(0);
  });

  it('fails a run with a perturbation at the boundary its option names (pass 1, backbone.l2.k_append), every earlier row passing', () => {
    const junit = join(root, 'perturbed.xml');
    const summary = join(root, 'step-summary.md');
    writeFileSync(summary, '');
    const run = cli(['compare', first, perturbed, '--key', key.privateKeyPath, '--receipt', receipt(), '--junit', junit], {
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_WORKSPACE: root,
    });
    expect(run.stdout).toContain('first divergence: case topk_ties, pass 1 / backbone.l2.k_append (stage backbone)');
    // The gate's reports serve compare: JUnit failures, an ::error annotation, the step summary.
    expect(readFileSync(junit, 'utf8')).toMatch(/<testcase [^>]*name="pass 1 \/ backbone\.l2\.k_append"[^>]*>\s*<failure/);
    expect(run.stdout).toMatch(/^::error .*backbone\.l2\.k_append/m);
    expect(readFileSync(summary, 'utf8')).toContain('FIDELITY: FAIL');
    expect(run.stdout).toMatch(/verdict\s+FAIL \(value\) against the reference/);
    expect(seals(run)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    expect(run.status).toBe(1);
    // Pass 0 (prefill) is untouched by the option: no pass-0 row is listed as failing.
    expect(run.stdout).not.toMatch(/^FAIL\s+topk_ties\s+0\s/m);
  });

  it('matches a candidate whose boundaries are named differently through a map file, and fails it without one', () => {
    const renamed = join(root, 'renamed');
    cpSync(second, renamed, { recursive: true });
    const manifestPath = join(renamed, 'manifest.json');
    // The port calls backbone.l<i>.out "layers.<i>.out" and backbone.l<i>.mixer_out "layers.<i>.mixer.out".
    const text = readFileSync(manifestPath, 'utf8')
      .replace(/"name":\s*"backbone\.l(\d+)\.out"/g, '"name": "layers.$1.out"')
      .replace(/"name":\s*"backbone\.l(\d+)\.mixer_out"/g, '"name": "layers.$1.mixer.out"');
    writeFileSync(manifestPath, text);
    const without = cli(['compare', first, renamed, '--key', key.privateKeyPath, '--receipt', receipt()]);
    expect(without.stdout).toMatch(/FAIL\s+topk_ties\s+0\s+backbone\.l0\.mixer_out\s+missing/);
    expect(without.stdout).toContain('GAP: not_in_reference:topk_ties:layers.0.out');
    expect(without.status).toBe(1);

    const map = join(root, 'rename.map.json');
    writeFileSync(
      map,
      JSON.stringify({
        schema: 'trace-inspector.boundary-map',
        schema_version: 1,
        map: [
          { candidate: 'layers.{i}.out', reference: 'backbone.l{i}.out' },
          { candidate: 'layers.{i}.mixer.out', reference: 'backbone.l{i}.mixer_out' },
        ],
      }),
    );
    const signed = receipt();
    const mapped = cli(['compare', first, renamed, '--map', map, '--key', key.privateKeyPath, '--receipt', signed]);
    expect(mapped.stdout).toContain(`all ${rowsOf(first)} boundary rows PASS`);
    expect(mapped.stdout).toMatch(
      /map\s+\S+rename\.map\.json\s+sha256 \S+: 12 candidate boundary name\(s\) mapped, 0 declared unmapped, \d+ kept under their own name, 0 of them unknown to the reference/,
    );
    expect(seals(mapped)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(mapped.status).toBe(0);
    // The map file is a subject of the receipt.
    const verified = cli(['verify', signed, '--pubkey', key.publicKeyPath, '--subjects', root]);
    expect(verified.stdout).toContain('subject    rename.map.json: OK');
    expect(verified.status).toBe(0);
  });

  it('makes a row REVIEW_REQUIRED where the candidate passes the reference and fails a second implementation given as --oracle', () => {
    const run = cli(['compare', first, second, '--oracle', truncating, '--key', key.privateKeyPath, '--receipt', receipt()]);
    expect(run.stdout).toMatch(/REVIEW_REQUIRED\s+topk_ties\s+0\s+backbone\.logits/);
    expect(run.stdout).toContain('first divergence: case topk_ties, pass 0 / backbone.logits');
    expect(run.stdout).toMatch(/oracle\s+\S+truncating\s+\(native/);
    expect(run.stdout).toContain("the oracles disagree: native passes the reference's contract but fails the fp64 oracle's");
    expect(seals(run)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required']);
    expect(run.status).toBe(1);
  });

  it('holds the candidate bit for bit in regression mode (--baseline), even against a reference whose contracts are faithful', () => {
    // The PyTorch reference's faithful contracts admit the engine's rounding differences ...
    const faithful = cli(['compare', referenceBundle(CASE), first, '--key', key.privateKeyPath, '--receipt', receipt()]);
    expect(seals(faithful)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    // ... a baseline does not: any moved bit fails.
    const baseline = cli(['compare', '--baseline', referenceBundle(CASE), first, '--key', key.privateKeyPath, '--receipt', receipt()]);
    expect(baseline.stdout).toContain('regression mode (--baseline)');
    expect(baseline.stdout).toMatch(/FAIL\s+topk_ties\s+\d+\s+\S+\s+value/);
    expect(seals(baseline)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    expect(baseline.status).toBe(1);
    // A contracts file replaces the reference's own contracts where its rules match: sampler
    // orders stay exact as declared, and the logits held bit for bit fail as under --baseline.
    const contracts = join(root, 'logits-exact.contracts.json');
    writeFileSync(
      contracts,
      JSON.stringify({ schema: 'trace-inspector.contracts', schema_version: 1, rules: [{ boundaries: 'backbone.logits', contract: 'bit_exact' }] }),
    );
    const ruled = cli(['compare', referenceBundle(CASE), first, '--contracts', contracts, '--key', key.privateKeyPath, '--receipt', receipt()]);
    expect(ruled.stdout).toContain(`contracts  contracts file ${contracts} (1 rule(s); boundaries no rule matches keep the reference's own contract)`);
    expect(ruled.stdout).toMatch(/first divergence: case topk_ties, pass 0 \/ backbone\.logits/);
    expect(ruled.stdout).not.toMatch(/^FAIL\s+topk_ties\s+\d+\s+(?!\s|backbone\.logits\s)/m);
    expect(ruled.status).toBe(1);
    // A stored capture of the same build is still bit for bit.
    const same = cli(['compare', '--baseline', first, second, '--key', key.privateKeyPath, '--receipt', receipt()]);
    expect(seals(same)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(same.status).toBe(0);
  });
});

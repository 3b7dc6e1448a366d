// Engine against engine on the worked "bring your own model" example (issue 13): the NAM Rust
// engine built twice — a release build and a debug build, in their own target folders — each
// captured against the pluck case's reference, and the two captures compared bundle against
// bundle with `trace-inspector compare`: bit for bit identical. A build that computes something
// else (the engine's own perturbation, perturb.wrong_activation) fails at its boundary, so the
// green result is no placebo.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cargoBuild, cdylibPath, findCargo } from '../helpers/cargo.ts';
import { REPO_ROOT, freshTempDir } from '../helpers/paths.ts';
import { runCliProcess, type CliRun } from '../helpers/run-cli.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';

const NAM = join(REPO_ROOT, 'examples', 'nam');
const REFERENCE = join(NAM, 'bundles', 'pluck', 'reference');
const WEIGHTS = join(NAM, 'weights', 'nam-tiny.safetensors');
const root = freshTempDir('nam-vs');
let release = '';
let debug = '';
let key = '';
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => {
  cargoBuild(join(NAM, 'engine'), join(root, 'target-release'));
  release = cdylibPath(join(root, 'target-release'), 'nam_engine', false);
  // The second build: cargo's debug profile (no optimisation), its own target folder.
  const build = spawnSync(findCargo(), ['build', '--offline', '--quiet', '--target-dir', join(root, 'target-debug')], {
    cwd: join(NAM, 'engine'),
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (build.status !== 0) throw new Error(`cargo build (debug) failed: ${build.stdout}${build.stderr}`);
  debug = join(root, 'target-debug', 'debug', 'libnam_engine.so');
  key = keyFiles(root).privateKeyPath;
}, 600_000);

function capture(engine: string, out: string, options: string[] = []): void {
  const run = runCliProcess([
    'capture',
    '--engine',
    engine,
    '--bundle',
    REFERENCE,
    '--weights',
    WEIGHTS,
    '--out',
    out,
    ...options.flatMap((option) => ['--option', option]),
  ]);
  expect(run.stderr).not.toMatch(/internal error/i);
  expect(run.status, run.stderr).toBe(0);
}
const seals = (run: CliRun): string[] => run.stdout.split('\n').filter((line) => /^(FIDELITY|OVERALL|GAP): /.test(line));

describe('the NAM example, engine against engine', () => {
  it('compares a debug build against a release build bit for bit, and fails a build that computes otherwise at its boundary', () => {
    capture(release, join(root, 'release'));
    capture(debug, join(root, 'debug'));
    const same = runCliProcess(['compare', join(root, 'release'), join(root, 'debug'), '--key', key, '--receipt', join(root, 'same.dsse.json')]);
    expect(same.stderr).not.toMatch(/internal error/i);
    // 4 passes x 25 boundaries, every one bit for bit (a native reference is judged bit_exact).
    expect(same.stdout).toContain('all 100 boundary rows PASS');
    expect(same.stdout).toContain('bit_exact for every boundary the native reference declares no contract for');
    expect(seals(same)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(same.status).toBe(0);

    capture(release, join(root, 'wrong-activation'), ['perturb.wrong_activation=1']);
    const other = runCliProcess(['compare', join(root, 'release'), join(root, 'wrong-activation'), '--key', key, '--receipt', join(root, 'other.dsse.json')]);
    expect(other.stdout).toContain('first divergence: case pluck, pass 0 / wavenet.a0.l0.act');
    expect(seals(other)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    expect(other.status).toBe(1);
  }, 120_000);
});

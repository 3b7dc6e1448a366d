// `trace-inspector capture` as a user runs it: the table, the exit codes, and bad input that
// must be refused with a message naming the file and the field or symbol — without writing
// over anything.
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/run-cli.ts';
import { REFERENCE_ENGINE, TESTLIB_DIR, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const work = freshTempDir('cli');

describe('trace-inspector capture', () => {
  it('captures the default case and prints a per-boundary table with a clean summary', () => {
    const out = join(work, 'default-run');
    const run = runCliProcess(['capture', '--out', out]);
    expect(run.stderr).toContain('capture: pass 0 prefill');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^passes\s+boundary\s+dtype\s+shape\s+contract\s+max abs\s+max ULP\s+result/m);
    expect(run.stdout).toMatch(/backbone\.logits\s+F32\s+\[160\]\s+faithful/);
    expect(run.stdout).toMatch(/sampler\.text\.token\s+I32\s+\[1\]\s+bit_exact\s+identical/);
    expect(run.stdout).toMatch(/ 0 failing, 0 missing, 0 not in reference/);
    expect(run.stdout).not.toContain('first divergence');
    expect(readdirSync(out)).toContain('manifest.json');
  });

  it('names the first divergence and marks the failing boundaries when the engine is perturbed (exit 0: capture reports, the gate judges)', () => {
    const run = runCliProcess([
      'capture',
      '--bundle',
      referenceBundle('greedy'),
      '--option',
      'perturb.kv_position_off_by_one=1',
      '--out',
      join(work, 'perturbed'),
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('first divergence: pass 1 backbone.l2.k_append (outside)');
    expect(run.stdout).toMatch(/backbone\.l2\.k_append\s+F32\s+\[1,2,16\]\s+faithful\s+\S+\s+\d+\s+OUTSIDE \d+\/32 \(first at pass 1\)/);
    expect(run.stdout).toMatch(/sampler\.text\.token\s+I32\s+\[1\]\s+bit_exact\s+(identical|DIFFERS)/);
    expect(run.stdout).not.toMatch(/ 0 failing,/);
  });

  it('prints one row per pass and boundary with --per-pass', () => {
    const run = runCliProcess(['capture', '--bundle', referenceBundle('greedy'), '--out', join(work, 'per-pass'), '--per-pass']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^1\s+backbone\.embed\s+F32\s+\[1,64\]/m);
  });

  it('refuses a non-empty output folder and leaves its content untouched (exit 2)', () => {
    const out = join(work, 'occupied');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'precious');
    const run = runCliProcess(['capture', '--out', out]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(out);
    expect(run.stderr).toContain('not empty');
    expect(readdirSync(out)).toEqual(['keep.txt']);
    expect(readFileSync(join(out, 'keep.txt'), 'utf8')).toBe('precious');
  });

  it.each([
    [['capture', '--frobnicate'], 'frobnicate'],
    [['capture', '--isolation', 'fork'], '--isolation'],
    [['capture', '--timeout', '-3'], '--timeout'],
    [['capture', '--option', 'novalue'], '--option'],
    [['launch'], 'unknown command "launch"'],
  ])('rejects bad usage %j with exit 2', (args, expected) => {
    const run = runCliProcess(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(expected);
  });

  it('rejects a missing reference bundle naming its manifest (exit 2)', () => {
    const missing = join(work, 'no-such-bundle');
    const run = runCliProcess(['capture', '--bundle', missing, '--out', join(work, 'x1')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(join(missing, 'manifest.json'));
  });

  it('rejects a reference bundle with a corrupted manifest naming the file and field (exit 2)', () => {
    const copy = join(work, 'corrupt-bundle');
    cpSync(referenceBundle('greedy'), copy, { recursive: true });
    const manifestPath = join(copy, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { provenance: { model: Record<string, unknown> } };
    delete manifest.provenance.model.weights_sha256;
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const run = runCliProcess(['capture', '--bundle', copy, '--out', join(work, 'x2')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('manifest.json');
    expect(run.stderr).toContain('provenance.model.weights_sha256');
  });

  it.each([
    ['a missing library', () => join(work, 'libnothing.so'), 'libnothing.so'],
    ['a library that is not an engine', () => join(TESTLIB_DIR, 'libnot_an_engine.so'), 'ti_abi_version'],
    ['an engine of another ABI version', () => join(TESTLIB_DIR, 'libabi2_engine.so'), 'version'],
    ['an engine whose describe() is not JSON', () => join(TESTLIB_DIR, 'libbad_describe_engine.so'), 'describe'],
  ])('rejects %s naming the library and the symbol (exit 2)', (_label, library, expected) => {
    const lib = library();
    const out = join(work, `x-${readdirSync(work).length}`);
    const run = runCliProcess(['capture', '--engine', lib, '--out', out]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(lib);
    expect(run.stderr).toContain(expected);
  });

  it('refuses a missing library before it hashes the reference (exit 2)', () => {
    // The reference's first pass file no longer matches its digest: hashing it first would say E_DIGEST.
    const copy = join(work, 'corrupt-pass-bundle');
    cpSync(referenceBundle('greedy'), copy, { recursive: true });
    const passFile = join(copy, readdirSync(copy).find((name) => name.startsWith('pass-')) as string);
    const bytes = readFileSync(passFile);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    writeFileSync(passFile, bytes);
    const lib = join(work, 'libmissing-engine.so');
    const run = runCliProcess(['capture', '--engine', lib, '--bundle', copy, '--out', join(work, 'x4')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`${lib}: no such file`);
    expect(run.stderr).not.toMatch(/E_DIGEST|sha256/);
  });

  it('rejects an option the engine does not know, naming it (exit 2)', () => {
    const run = runCliProcess(['capture', '--engine', REFERENCE_ENGINE, '--option', 'perturb.no_such_thing=1', '--out', join(work, 'x3')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('perturb.no_such_thing');
  });
});

// The reference engine under AddressSanitizer + UBSan: the same sources linked into a
// standalone driver (engine/tests/ti_driver.c), run over every committed case's inputs, clean
// and with every deliberate perturbation. Any sanitizer report aborts the driver (non-zero).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ASAN_DRIVER, CASES, REPO_ROOT, WEIGHTS_FILE, referenceBundle } from '../helpers/paths.ts';

const ManifestPasses = z.object({ passes: z.array(z.object({ index: z.number(), kind: z.string(), mode: z.string().nullable() })) });

function referencePasses(caseId: string): z.infer<typeof ManifestPasses>['passes'] {
  return ManifestPasses.parse(JSON.parse(readFileSync(join(referenceBundle(caseId), 'manifest.json'), 'utf8'))).passes;
}

function runDriver(caseId: string, extra: readonly string[] = []): { status: number | null; output: string } {
  const decodes = referencePasses(caseId).length - 1;
  const run = spawnSync(ASAN_DRIVER, [WEIGHTS_FILE, join(referenceBundle(caseId), 'inputs.safetensors'), String(decodes), ...extra], {
    encoding: 'utf8',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
    timeout: 120_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

function perturbationOptions(): string[] {
  const describeJson = execFileSync(
    process.execPath,
    [
      '-e',
      `const k=require('koffi');const l=k.load(${JSON.stringify(join(REPO_ROOT, 'engine/build/libti_reference.so'))});process.stdout.write(l.func('const char *ti_describe(void)')())`,
    ],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  const parsed = z.object({ options: z.array(z.object({ name: z.string() })) }).parse(JSON.parse(describeJson));
  return parsed.options.map((option) => option.name).filter((name) => name.startsWith('perturb.'));
}

beforeAll(() => {
  execFileSync('make', ['-C', join(REPO_ROOT, 'engine'), '-s', 'asan'], { stdio: 'inherit' });
}, 300_000);

describe('reference engine under ASan + UBSan', () => {
  it.each(CASES)('runs case %s cleanly, pass by pass in the reference modes', (caseId) => {
    const run = runDriver(caseId);
    expect(run.output).not.toMatch(/AddressSanitizer|runtime error|LeakSanitizer/);
    expect(run.status).toBe(0);
    const passLines = [...run.output.matchAll(/^pass (\d+) (prefill|decode) (text|audio) records=(\d+)$/gm)];
    expect(passLines.map((match) => [Number(match[1]), match[2], match[3]])).toEqual(referencePasses(caseId).map((pass) => [pass.index, pass.kind, pass.mode]));
  });

  it('runs every deliberate perturbation cleanly: part-1 options over the NaN case, audio options over the tail case', () => {
    const options = perturbationOptions();
    expect(options.length).toBeGreaterThanOrEqual(20);
    // Audio-stage perturbations only change code the NaN case never reaches (no pcm_in).
    const audioStage = /^perturb\.(frontend_|features_|rel_shift|conformer_|detok_|skip_envelope|ola_)/;
    for (const option of options) {
      const caseId = audioStage.test(option) ? 'tail' : 'nan_inf';
      // --options-only: the checks an option can change (the clean runs above cover the rest).
      const run = runDriver(caseId, ['--options-only', `${option}=1`]);
      expect(run.output, `${caseId} ${option}`).not.toMatch(/AddressSanitizer|runtime error|LeakSanitizer/);
      expect(run.status, `${caseId} ${option}: ${run.output.slice(-400)}`).toBe(0);
    }
  }, 600_000);
});

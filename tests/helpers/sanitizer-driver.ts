// One C check driver (engine/tests/*_driver.c) built with AddressSanitizer + UBSan and run once:
// the helper's and the recorder's sanitizer tests share the build, the sanitizer options and the
// reading of the driver's closing line, "<name>: N checks, M failed".
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './paths.ts';

/** Builds engine/build/asan/<target> (a make target of engine/Makefile). */
export function buildSanitizerDriver(target: string): void {
  execFileSync('make', ['-C', join(REPO_ROOT, 'engine'), '-s', `build/asan/${target}`], { stdio: 'inherit' });
}

/**
 * Runs engine/build/asan/<target> and expects no sanitizer report, no failed check, exit 0, and
 * at least `minChecks` checks (so a driver that silently stops early fails too).
 */
export function expectSanitizerDriverClean(target: string, label: string, minChecks: number): void {
  const run = spawnSync(join(REPO_ROOT, 'engine', 'build', 'asan', target), [], {
    encoding: 'utf8',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
    timeout: 60_000,
  });
  const output = `${run.stdout}${run.stderr}`;
  expect(output).not.toMatch(/AddressSanitizer|runtime error|LeakSanitizer|FAIL line/);
  const closing = new RegExp(`^${label}: (\\d+) checks, 0 failed$`, 'm').exec(output);
  expect(closing, output.slice(-2000)).not.toBeNull();
  expect(Number(closing?.[1])).toBeGreaterThanOrEqual(minChecks);
  expect(run.status).toBe(0);
}

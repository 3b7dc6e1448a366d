// The C engine helper (engine/helpers/ti_helper.c) under AddressSanitizer + UBSan: the driver
// engine/tests/helper_driver.c calls every ABI function of an engine built on it
// (engine/tests/helper_test_engine.c) and checks the catalogue JSON, the dtype / shape / option
// refusals with their statuses and messages, the wanted filter, injection (own value recorded,
// injected value flows on, pass-dependent extents checked, cleared when the pass ends), strided
// records, abort and reset. Any failed check or sanitizer report fails the test.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.ts';

const DRIVER = join(REPO_ROOT, 'engine', 'build', 'asan', 'helper_driver');

beforeAll(() => {
  execFileSync('make', ['-C', join(REPO_ROOT, 'engine'), '-s', 'build/asan/helper_driver'], { stdio: 'inherit' });
}, 120_000);

describe('the C engine helper under ASan + UBSan', () => {
  it('passes every check of the driver without a sanitizer report', () => {
    const run = spawnSync(DRIVER, [], {
      encoding: 'utf8',
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
      timeout: 60_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(output).not.toMatch(/AddressSanitizer|runtime error|LeakSanitizer|FAIL line/);
    expect(output).toMatch(/^helper-driver: (\d+) checks, 0 failed$/m);
    expect(Number(/helper-driver: (\d+) checks/.exec(output)?.[1])).toBeGreaterThanOrEqual(49);
    expect(run.status).toBe(0);
  });
});

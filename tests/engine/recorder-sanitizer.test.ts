// The engine host's C recorder (engine/host-recorder/ti_recorder.c) under AddressSanitizer +
// UBSan: the driver engine/tests/recorder_driver.c plays the host (a 1 KiB ring it drains when
// the recorder asks for room, a fallback that counts the records handed over) and checks the
// frames of row-major and strided records across wraps, the crumb, the counters, the record
// window, and that every contract violation is handed over with nothing written. Any failed check
// or sanitizer report fails the test.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.ts';

const DRIVER = join(REPO_ROOT, 'engine', 'build', 'asan', 'recorder_driver');

beforeAll(() => {
  execFileSync('make', ['-C', join(REPO_ROOT, 'engine'), '-s', 'build/asan/recorder_driver'], { stdio: 'inherit' });
}, 120_000);

describe('the C recorder under ASan + UBSan', () => {
  it('passes every check of the driver without a sanitizer report', () => {
    const run = spawnSync(DRIVER, [], {
      encoding: 'utf8',
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
      timeout: 60_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(output).not.toMatch(/AddressSanitizer|runtime error|LeakSanitizer|FAIL line/);
    expect(output).toMatch(/^recorder-driver: (\d+) checks, 0 failed$/m);
    expect(Number(/recorder-driver: (\d+) checks/.exec(output)?.[1])).toBeGreaterThanOrEqual(200);
    expect(run.status).toBe(0);
  });
});

// Builds the Rust engines of this repository (rust/trace-inspector-abi and the examples that use
// it) with cargo, offline, into a target folder the caller owns. A machine without cargo fails
// the test with a message saying so: the Rust crate is part of what the suite proves.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** cargo from $CARGO, the PATH, or ~/.cargo/bin (rustup's default, often not on CI's PATH). */
export function findCargo(): string {
  const candidates = [process.env['CARGO'], 'cargo', join(homedir(), '.cargo', 'bin', 'cargo')].filter((c): c is string => c !== undefined && c !== '');
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status === 0) return candidate;
  }
  throw new Error(
    `cargo was not found (tried ${candidates.join(', ')}): the Rust engine tests need a Rust toolchain; install it (rustup or Debian's cargo) or set CARGO`,
  );
}

/**
 * `cargo build --offline --release` of the package in `manifestDir` into `targetDir`; extra
 * arguments (e.g. `--examples`) are appended. Bounded at 5 minutes; throws with cargo's output
 * when the build fails.
 */
export function cargoBuild(manifestDir: string, targetDir: string, extra: readonly string[] = []): void {
  const cargo = findCargo();
  const run = spawnSync(cargo, ['build', '--offline', '--release', '--quiet', '--target-dir', targetDir, ...extra], {
    cwd: manifestDir,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (run.status !== 0) {
    const why = run.error ? run.error.message : `exit ${String(run.status)}${run.signal ? ` (${run.signal})` : ''}`;
    throw new Error(`cargo build in ${manifestDir} failed: ${why}\n${run.stdout}${run.stderr}`);
  }
}

/** The shared library cargo writes for a cdylib named `name` (an example or the package's lib). */
export function cdylibPath(targetDir: string, name: string, example: boolean): string {
  const path = join(targetDir, 'release', ...(example ? ['examples'] : []), `lib${name}.so`);
  if (!existsSync(path)) throw new Error(`cargo built no ${path}`);
  return path;
}

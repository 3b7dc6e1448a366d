// CLI conventions: `<command> --help` / `-h` print that command's usage on stdout and exit 0
// (not "Unknown option", exit 2); `help <command>` does the same; `self-test` is a command of
// its own; a missing command prints the usage on stderr (exit 2), so stdout holds only results.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import type { CliIO } from '../../main/cli/cli-io.ts';

async function run(argv: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), stderrIsTTY: false, cwd: process.cwd(), env: {} };
  const status = await runCli(argv, io);
  return { status, stdout, stderr };
}

describe('CLI help conventions', () => {
  it.each([
    ['capture', 'usage: trace-inspector capture'],
    ['gate', 'usage: trace-inspector --gate'],
    ['--gate', 'usage: trace-inspector --gate'],
    ['verify', 'usage: trace-inspector verify'],
    ['check', 'usage: trace-inspector check'],
    ['keygen', 'usage: trace-inspector keygen'],
    ['recover', 'usage: trace-inspector recover'],
    ['export-wav', 'usage: trace-inspector export-wav'],
    ['serve', 'usage: trace-inspector serve'],
    ['self-test', 'usage: trace-inspector --gate --self-test'],
  ])('%s --help and -h print its usage on stdout and exit 0', async (command, usage) => {
    for (const flag of ['--help', '-h']) {
      const result = await run([command, flag]);
      expect(result.status).toBe(0);
      expect(result.stdout.startsWith(usage)).toBe(true);
      expect(result.stderr).toBe('');
    }
    expect((await run(['help', command])).stdout.startsWith(usage)).toBe(true);
  });

  it('gives the self-test usage for --gate --self-test --help, and lists self-test in help', async () => {
    expect((await run(['--gate', '--self-test', '--help'])).stdout.startsWith('usage: trace-inspector --gate --self-test')).toBe(true);
    const help = await run(['help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}self-test /m);
  });

  it('prints the usage on stderr, not stdout, when no command is given (exit 2)', async () => {
    const result = await run([]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('usage: trace-inspector <command>');
  });

  it('still refuses an unknown option with exit 2 on stderr', async () => {
    const result = await run(['capture', '--no-such-flag']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/--no-such-flag/);
  });
});

// The --gate command in-process (runCli with a recording CliIO): progress is a bar redrawn with
// \r on a terminal and plain lines in a log, the exit code is the seals', and what it writes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../main/cli/run-cli.ts';
import type { GateResult } from '../../main/core/gate/gate-types.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import { TOY_ENGINE, keyFiles, recordingIO, removeTempDirs, setF32, tempDir, writeToyCase } from './gate-fixtures.ts';

beforeAll(requireBuiltHost);
afterAll(removeTempDirs);

describe('trace-inspector --gate (in process)', () => {
  it('on a terminal: one progress line redrawn with \\r, cleared before the report', async () => {
    const root = tempDir('cmd-tty');
    const toy = writeToyCase(root, { oracle: true });
    const keys = keyFiles(root);
    const io = { ...recordingIO(root), stderrIsTTY: true };
    const code = await runCli(['--gate', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--work', join(root, 'work'), '--key', keys.privateKeyPath], io);
    expect(code).toBe(0);
    const stderr = io.err.join('');
    expect(stderr).toMatch(/\rgate 1\/1 toy \[[#-]{20}\] /);
    // Redraws never start a new line; the last thing written to the terminal clears the bar.
    const redraws = io.err.filter((chunk) => chunk.startsWith('\r'));
    expect(redraws.length).toBeGreaterThan(2);
    expect(redraws.every((chunk) => !chunk.includes('\n'))).toBe(true);
    expect(io.err.at(-1)).toMatch(/^\r +\r$/);
    expect(io.out.join('').trimEnd().split('\n').slice(-2)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
  });

  it("in a log: plain lines, one per pass; the exit code is the seals' (gaps pass, --strict fails)", async () => {
    const root = tempDir('cmd-log');
    const toy = writeToyCase(root); // no oracle: a gap
    const keys = keyFiles(root);
    const io = recordingIO(root);
    const json = join(root, 'gate.json');
    const code = await runCli(
      ['--gate', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--work', join(root, 'work'), '--key', keys.privateKeyPath, '--json', json],
      io,
    );
    expect(code).toBe(0);
    const stderr = io.err.join('');
    expect(stderr).not.toContain('\r');
    expect(stderr).toContain('gate: toy: pass 0 [1/3] ok');
    expect(stderr).toContain('gate: toy: pass 2 [3/3] ok');
    const result = JSON.parse(readFileSync(json, 'utf8')) as GateResult;
    expect(result.seals.lines).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: PASSED_WITH_GAPS', 'GAP: oracle_absent:toy']);
    expect(existsSync(join(root, 'work', 'receipt.dsse.json'))).toBe(true);

    const strictIo = recordingIO(root);
    const strict = await runCli(
      ['--gate', '--strict', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--work', join(root, 'work-strict'), '--key', keys.privateKeyPath],
      strictIo,
    );
    expect(strict).toBe(1);
    expect(strictIo.out.join('').trimEnd().split('\n').slice(-3)).toEqual([
      'FIDELITY: INCOMPLETE',
      'OVERALL: FAIL reason=strict_gaps',
      'GAP: oracle_absent:toy',
    ]);
  });

  it('uses the sibling oracle-f64 of a --bundle, and --oracle overrides it', async () => {
    const root = tempDir('cmd-oracle');
    const toy = writeToyCase(root, { oracle: true });
    const keys = keyFiles(root);
    const io = recordingIO(root);
    const json = join(root, 'gate.json');
    expect(
      await runCli(
        ['--gate', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--work', join(root, 'work'), '--key', keys.privateKeyPath, '--json', json],
        io,
      ),
    ).toBe(0);
    const result = JSON.parse(readFileSync(json, 'utf8')) as GateResult;
    expect(result.cases[0]?.oracle?.dir).toBe(toy.oracleDir);
    expect(result.seals.fidelity).toBe('OK');

    // Another oracle of the same case, disagreeing at pass 2 / toy.embed, named with --oracle.
    const elsewhere = writeToyCase(tempDir('cmd-oracle-other'), { oracle: true, editOracle: (passes) => setF32(passes, 2, 'toy.embed', 0, -1) });
    const json2 = join(root, 'gate2.json');
    const args = ['--gate', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--oracle', elsewhere.oracleDir as string];
    expect(await runCli([...args, '--work', join(root, 'work2'), '--key', keys.privateKeyPath, '--json', json2], recordingIO(root))).toBe(1);
    const overridden = JSON.parse(readFileSync(json2, 'utf8')) as GateResult;
    expect(overridden.cases[0]?.oracle?.dir).toBe(elsewhere.oracleDir);
    expect(overridden.seals.lines.slice(0, 2)).toEqual(['FIDELITY: INCOMPLETE', 'OVERALL: FAIL reason=review_required']);
  });
});

// `--json -` on capture, gate, compare and verify: stdout holds exactly one JSON document a script
// can parse (the human report goes to stderr), the document says what the exit code says, and a
// --json file that exists already is refused before anything runs.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../main/cli/run-cli.ts';
import { TOY_ENGINE, keyFiles, recordingIO, removeTempDirs, setF32, tempDir, writeToyCase } from '../gate/gate-fixtures.ts';

afterAll(removeTempDirs);

/** stdout parsed as one JSON document: it must be nothing else. */
function onlyJson(out: readonly string[]): Record<string, unknown> {
  const text = out.join('');
  expect(text.endsWith('\n')).toBe(true);
  expect(text.trimEnd().includes('\n')).toBe(false);
  return JSON.parse(text) as Record<string, unknown>;
}

describe('--json - writes one JSON document to stdout and the human report to stderr', () => {
  it('capture: the run, its passes and every compared row; the table on stderr', async () => {
    const root = tempDir('json-capture');
    const toy = writeToyCase(root);
    const io = recordingIO(root);
    expect(await runCli(['capture', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--out', join(root, 'native'), '--json', '-'], io)).toBe(0);
    const doc = onlyJson(io.out);
    expect(doc['schema']).toBe('trace-inspector.capture-result');
    expect((doc['run'] as { status: string }).status).toBe('completed');
    expect(doc['bundle']).toBe(join(root, 'native'));
    const comparison = doc['comparison'] as { summary: { compared: number; failing: number }; rows: unknown[] };
    expect(comparison.summary.compared).toBeGreaterThan(0);
    expect(comparison.summary.failing).toBe(0);
    expect(comparison.rows.length).toBe(comparison.summary.compared);
    expect(io.err.join('')).toContain('comparisons:');
  });

  it('gate: the GateResult agrees with the exit code, on a clean case and on a perturbed reference', async () => {
    const root = tempDir('json-gate');
    const keys = keyFiles(root);
    const clean = writeToyCase(join(root, 'clean'), { oracle: true });
    const io = recordingIO(root);
    expect(
      await runCli(
        ['gate', '--engine', TOY_ENGINE, '--bundle', clean.referenceDir, '--work', join(root, 'w1'), '--key', keys.privateKeyPath, '--json', '-'],
        io,
      ),
    ).toBe(0);
    const result = onlyJson(io.out) as { schema: string; seals: { exitCode: number; lines: string[] } };
    expect(result.schema).toBe('trace-inspector.gate-result');
    expect(result.seals.exitCode).toBe(0);
    expect(io.err.join('')).toContain(result.seals.lines.at(-1) as string);

    // The deliberate error: one element of the reference moved, so the native run disagrees with it.
    const broken = writeToyCase(join(root, 'broken'), { oracle: true, editReference: (passes) => setF32(passes, 0, 'toy.embed', 0, 1234.5) });
    const failing = recordingIO(root);
    expect(
      await runCli(
        ['gate', '--engine', TOY_ENGINE, '--bundle', broken.referenceDir, '--work', join(root, 'w2'), '--key', keys.privateKeyPath, '--json', '-'],
        failing,
      ),
    ).toBe(1);
    const failed = onlyJson(failing.out) as { seals: { exitCode: number; overall: string } };
    expect(failed.seals.exitCode).toBe(1);
    expect(failed.seals.overall).toBe('FAIL');
  });

  it('compare and verify: the comparison result, then the verification of its receipt (and of a tampered copy)', async () => {
    const root = tempDir('json-compare');
    const keys = keyFiles(root);
    const toy = writeToyCase(root, { oracle: true });
    const receipt = join(root, 'compare.receipt.json');
    const io = recordingIO(root);
    const code = await runCli(['compare', toy.referenceDir, toy.oracleDir as string, '--receipt', receipt, '--key', keys.privateKeyPath, '--json', '-'], io);
    const result = onlyJson(io.out) as { schema: string; seals: { exitCode: number }; options: Record<string, unknown>; cases: { weights: unknown }[] };
    expect(result.schema).toBe('trace-inspector.gate-result');
    expect(result.seals.exitCode).toBe(code);
    // No engine ran: the result states no isolation, timeout or work folder rather than placeholders.
    expect(result.options).toMatchObject({ isolation: null, passTimeoutMs: null, workDir: null });
    expect(result.cases.map((item) => item.weights)).toEqual([null]);
    expect(io.err.join('')).toContain('OVERALL:');

    const verified = recordingIO(root);
    expect(await runCli(['verify', receipt, '--pubkey', keys.publicKeyPath, '--json', '-'], verified)).toBe(0);
    const verification = onlyJson(verified.out) as { schema: string; ok: boolean; statement: { predicateType: string } | null };
    expect(verification.schema).toBe('trace-inspector.verification');
    expect(verification.ok).toBe(true);
    expect(verification.statement?.predicateType).toMatch(/trace-inspector/);
    expect(verified.err.join('')).toContain('VERIFIED');

    // The deliberate error: one byte of the signed envelope changed.
    const tampered = join(root, 'tampered.json');
    const envelope = JSON.parse(readFileSync(receipt, 'utf8')) as { payload: string };
    envelope.payload = `${envelope.payload.slice(0, 10)}${envelope.payload[10] === 'A' ? 'B' : 'A'}${envelope.payload.slice(11)}`;
    writeFileSync(tampered, JSON.stringify(envelope));
    const refused = recordingIO(root);
    expect(await runCli(['verify', tampered, '--pubkey', keys.publicKeyPath, '--json', '-'], refused)).toBe(1);
    const notVerified = onlyJson(refused.out) as { ok: boolean; reasons: string[] };
    expect(notVerified.ok).toBe(false);
    expect(notVerified.reasons.length).toBeGreaterThan(0);
  });

  it('a --json file that exists already is refused (exit 2) before anything runs, and is left as it was', async () => {
    const root = tempDir('json-exists');
    const toy = writeToyCase(root);
    const existing = join(root, 'result.json');
    writeFileSync(existing, 'keep me');
    for (const argv of [
      ['capture', '--engine', TOY_ENGINE, '--bundle', toy.referenceDir, '--out', join(root, 'native'), '--json', existing],
      ['verify', join(root, 'no-receipt.json'), '--json', existing],
    ]) {
      const io = recordingIO(root);
      expect(await runCli(argv, io), argv[0]).toBe(2);
      expect(io.err.join('')).toContain(`--json ${existing} already exists`);
    }
    expect(readFileSync(existing, 'utf8')).toBe('keep me');
    expect(existsSync(join(root, 'native'))).toBe(false);
  });
});

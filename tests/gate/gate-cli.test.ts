// `trace-inspector --gate` as a user runs it (node bin/trace-inspector.js, a separate process):
// the embedded default passes clean, the seals are the last stdout lines, the receipt verifies
// and a tampered one does not, JUnit parses back, Actions annotations and the step summary are
// written, a crashing engine still gets its receipt, and bad usage is exit 2 touching nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADLESS_COMMANDS } from '../../main/cli/run-cli.ts';
import type { GateResult } from '../../main/core/gate/gate-types.ts';
import { verifyReceipt } from '../../main/core/receipt/receipt.ts';
import { requireBuiltHost } from '../engine-host/engine-host-fixtures.ts';
import { BUNDLES_DIR, CASES, CLI, REPO_ROOT, WEIGHTS_FILE } from '../helpers/paths.ts';
import { SEGV_ENGINE, TOY_ENGINE, keyFiles, removeTempDirs, setF32, tempDir, writeToyCase } from './gate-fixtures.ts';
import { findAll, parseXml } from './mini-xml.ts';

beforeAll(requireBuiltHost);
afterAll(removeTempDirs);

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function gateCli(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 280_000): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    // A clean environment for what the gate reads: no Actions unless a test asks for it.
    env: { ...process.env, GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '', ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const lastLines = (text: string, count: number): string[] => text.trimEnd().split('\n').slice(-count);

/** Every committed case: each fixtures/bundles/<case> holding a reference bundle (the helpers' CASES among them). */
const COMMITTED_CASES = readdirSync(BUNDLES_DIR)
  .filter((name) => existsSync(join(BUNDLES_DIR, name, 'reference', 'manifest.json')))
  .sort();

describe('the embedded default', () => {
  const root = tempDir('cli-default');
  const config = join(root, 'config');
  const work = join(root, 'work');
  let run: Run;

  beforeAll(() => {
    run = gateCli(['--gate', '--work', work, '--junit', join(root, 'junit.xml'), '--json', join(root, 'gate.json')], { TRACE_INSPECTOR_CONFIG_DIR: config });
  }, 300_000);

  it('passes clean: FIDELITY: OK, OVERALL: PASSED as the last lines, exit 0', () => {
    expect(run.stderr).not.toContain('internal error');
    expect(lastLines(run.stdout, 2)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('first divergence: none');
  });

  it('ran every committed case with its oracle and compared every boundary of every pass', () => {
    const result = JSON.parse(readFileSync(join(root, 'gate.json'), 'utf8')) as GateResult;
    expect(result.cases.map((item) => item.id).sort()).toEqual(COMMITTED_CASES);
    for (const caseId of CASES) expect(COMMITTED_CASES).toContain(caseId);
    for (const item of result.cases) {
      expect(item.oracle).not.toBeNull();
      expect(item.run.outcome.status).toBe('completed');
      expect(item.verdicts.length).toBe(item.reference.boundaries);
      expect(item.compared).toBe(item.reference.boundaries);
    }
    expect(result.counts.PASS).toBe(result.compared);
    expect(result.gaps).toEqual([]);
  });

  it('says where the default signing key was created', () => {
    expect(run.stderr).toContain(`created your default signing key ${join(config, 'trace-inspector-ed25519.key')}`);
  });

  it('writes a receipt that verifies, with every subject re-hashed, and a tampered copy that does not', async () => {
    const receipt = join(work, 'receipt.dsse.json');
    const publicKey = join(config, 'trace-inspector-ed25519.pub');
    const verified = await verifyReceipt(receipt, {
      publicKey,
      subjectFiles: [join(REPO_ROOT, 'engine', 'build'), join(REPO_ROOT, 'fixtures', 'bundles'), WEIGHTS_FILE],
    });
    expect(verified.reasons).toEqual([]);
    expect(verified.ok).toBe(true);
    // The engine, a reference and an oracle manifest per case, the weights.
    expect(verified.subjectsChecked).toHaveLength(2 + 2 * COMMITTED_CASES.length);
    expect(verified.subjectsNotChecked).toEqual([]);
    const predicate = verified.statement?.predicate as Record<string, unknown>;
    expect(predicate['seals']).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(predicate['strict']).toBe(false);
    const table = predicate['verdicts'] as { columns: string[]; cases: { case: string; passes: { pass: number; rows: unknown[][] }[] }[] };
    expect(table.columns.slice(0, 2)).toEqual(['boundary', 'verdict']);
    expect(table.cases.map((item) => item.case).sort()).toEqual(COMMITTED_CASES);
    const rows = table.cases.flatMap((item) => item.passes.flatMap((pass) => pass.rows));
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.every((row) => row[1] === 'PASS')).toBe(true);

    const text = readFileSync(receipt, 'utf8');
    const envelope = JSON.parse(text) as { payload: string };
    const payload = Buffer.from(envelope.payload, 'base64').toString('utf8').replace('"FIDELITY: OK"', '"FIDELITY: OX"');
    const tampered = join(root, 'tampered.dsse.json');
    writeFileSync(tampered, text.replace(envelope.payload, Buffer.from(payload, 'utf8').toString('base64')));
    const rejected = await verifyReceipt(tampered, { publicKey });
    expect(rejected.ok).toBe(false);
    expect(rejected.reasons.join(' ')).toMatch(/signature/i);
  });

  it('writes JUnit XML that parses back with one testcase per pass x boundary', () => {
    const result = JSON.parse(readFileSync(join(root, 'gate.json'), 'utf8')) as GateResult;
    const root_ = parseXml(readFileSync(join(root, 'junit.xml'), 'utf8'));
    const testcases = findAll(root_, 'testcase');
    const rows = result.cases.reduce((sum, item) => sum + item.verdicts.length, 0);
    expect(testcases).toHaveLength(rows);
    expect(findAll(root_, 'testsuite')).toHaveLength(COMMITTED_CASES.length);
    expect(findAll(root_, 'failure')).toHaveLength(0);
    expect(testcases.map((testcase) => testcase.attributes['name'])).toContain('pass 3 / backbone.l2.out');
  });

  it('`electron . --gate` runs headless: --gate, verify and keygen are headless commands', () => {
    for (const command of ['--gate', 'verify', 'keygen']) expect(HEADLESS_COMMANDS.has(command)).toBe(true);
  });
});

describe('a crashing engine', () => {
  it('FIDELITY: FAIL naming the pass and the last boundary, exit 1, and the receipt is still written', async () => {
    const root = tempDir('cli-crash');
    const toy = writeToyCase(root, { oracle: true });
    const keys = keyFiles(root);
    const receipt = join(root, 'out', 'crash.dsse.json');
    const run = gateCli([
      '--gate',
      '--engine',
      SEGV_ENGINE,
      '--bundle',
      toy.referenceDir,
      '--work',
      join(root, 'work'),
      '--key',
      keys.privateKeyPath,
      '--receipt',
      receipt,
    ]);
    expect(run.status).toBe(1);
    expect(lastLines(run.stdout, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=engine_crashed']);
    expect(run.stdout).toContain('first divergence: case toy, pass 1 / toy.token');
    expect(run.stdout).toMatch(/crashed in pass 1 \(decode\), after boundary toy\.mix/);
    const verified = await verifyReceipt(receipt, { publicKey: keys.publicKeyPath });
    expect(verified.ok).toBe(true);
    const predicate = verified.statement?.predicate as { seals: string[]; cases: { run: { status: string; lastBoundary: string } }[] };
    expect(predicate.seals).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=engine_crashed']);
    expect(predicate.cases[0]?.run.status).toBe('crashed');
  });
});

describe('GitHub Actions', () => {
  it('prints escaped annotations and appends a step summary', () => {
    const root = tempDir('cli-actions');
    // A case id with ':' and ',' (escaped in the annotation title); a failure whose message holds '%'.
    const toy = writeToyCase(root, {
      caseId: 'toy:a,b',
      oracle: true,
      editReference: (passes) => setF32(passes, 1, 'toy.mix', 1, 99),
      editOracle: (passes) => setF32(passes, 1, 'toy.mix', 1, 99),
    });
    const summary = join(root, 'summary.md');
    writeFileSync(summary, '# earlier step\n');
    const keys = keyFiles(root);
    const run = gateCli(['--gate', '--engine', TOY_ENGINE, '--bundle', toy.caseDir, '--work', join(root, 'work'), '--key', keys.privateKeyPath], {
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_WORKSPACE: root,
    });
    expect(run.status).toBe(1);
    const annotations = run.stdout.split('\n').filter((line) => line.startsWith('::'));
    expect(annotations.length).toBeGreaterThan(0);
    const first = annotations[0] as string;
    expect(first.startsWith('::error file=toy%3Aa%2Cb/reference/manifest.json,title=FAIL pass 1 / toy.mix (case toy%3Aa%2Cb)::first divergence: value: ')).toBe(
      true,
    );
    expect(first).toContain('(25.0%25)');
    expect(first).not.toMatch(/[^%]%(?![0-9A-F]{2})/);
    // The seals stay the last lines even with annotations printed.
    expect(lastLines(run.stdout, 2)).toEqual(['FIDELITY: FAIL', 'OVERALL: FAIL reason=boundary_failures']);
    const markdown = readFileSync(summary, 'utf8');
    expect(markdown.startsWith('# earlier step\n')).toBe(true);
    expect(markdown).toContain('```text\nFIDELITY: FAIL\nOVERALL: FAIL reason=boundary_failures\n```');
    expect(markdown).toContain('| FAIL | toy:a,b | 1 | `toy.mix` | value | 1/4 |');
  });
});

describe('bad usage is exit 2 and touches nothing', () => {
  const root = tempDir('cli-usage');
  const toy = writeToyCase(root, { oracle: true });
  const other = writeToyCase(root, { caseId: 'other', oracle: true });
  const keys = keyFiles(root);
  const base = ['--gate', '--engine', TOY_ENGINE, '--key', keys.privateKeyPath];

  it.each([
    ['an unknown flag', ['--frobnicate'], /--frobnicate/],
    [
      '--oracle with several --bundle',
      ['--bundle', toy.referenceDir, '--bundle', other.referenceDir, '--oracle', toy.oracleDir as string],
      /--oracle names the oracle of one --bundle/,
    ],
    ['--oracle without --bundle', ['--oracle', toy.oracleDir as string], /--oracle/],
    ['a --timeout that is no number', ['--bundle', toy.referenceDir, '--timeout', 'soon'], /--timeout/],
    ['--isolation that is neither', ['--bundle', toy.referenceDir, '--isolation', 'container'], /--isolation/],
    ['a --bundle that is no bundle', ['--bundle', root], /no manifest\.json/],
    ['a --self-test flag the self-test does not take', ['--self-test', '--strict'], /--self-test/],
    ['two outputs naming one file', ['--bundle', toy.referenceDir, '--json', join(root, 'same'), '--junit', join(root, 'same')], /same file/],
    ['a key that is not a private key', ['--bundle', toy.referenceDir, '--key', keys.publicKeyPath], /public key/],
  ])('%s', (_label, args, message) => {
    const work = join(tempDir('cli-usage-work'), 'work');
    const run = gateCli([...base, '--work', work, ...args]);
    expect(run.stderr).toMatch(message);
    expect(run.status).toBe(2);
    expect(existsSync(work)).toBe(false);
  });

  it('an existing --receipt is refused and left as it was', () => {
    const receipt = join(root, 'existing.dsse.json');
    writeFileSync(receipt, 'previous evidence\n');
    const work = join(tempDir('cli-usage-receipt'), 'work');
    const run = gateCli([...base, '--bundle', toy.referenceDir, '--receipt', receipt, '--work', work]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--receipt ${receipt} already exists`);
    expect(readFileSync(receipt, 'utf8')).toBe('previous evidence\n');
    expect(existsSync(work)).toBe(false);
  });

  it('a ledger naming a boundary no reference has names the file and the entry', () => {
    const ledger = join(root, 'typo-ledger.json');
    writeFileSync(
      ledger,
      JSON.stringify({
        schema: 'trace-inspector.known-gaps',
        schema_version: 1,
        known_gaps: [{ id: 'KG-TYPO', boundary: 'toy.mixx', reason: 'r', reopen_evidence: 'e' }],
      }),
    );
    const work = join(tempDir('cli-usage-ledger'), 'work');
    const run = gateCli([...base, '--bundle', toy.referenceDir, '--ledger', ledger, '--work', work]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(ledger);
    expect(run.stderr).toContain('known_gaps[0]');
    expect(run.stderr).toContain('KG-TYPO');
    expect(existsSync(work)).toBe(false);
  });

  it('a missing --engine is refused before any evidence is hashed', () => {
    // A reference whose pass file no longer matches its digest: hashing it first would report E_DIGEST.
    const broken = writeToyCase(tempDir('cli-usage-engine'), { caseId: 'broken' });
    const passFile = join(broken.referenceDir, readdirSync(broken.referenceDir).find((name) => name.startsWith('pass-')) as string);
    const bytes = readFileSync(passFile);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    writeFileSync(passFile, bytes);
    const work = join(tempDir('cli-usage-engine-work'), 'work');
    const missing = join(root, 'no-such-engine.so');
    const run = gateCli(['--gate', '--engine', missing, '--key', keys.privateKeyPath, '--bundle', broken.referenceDir, '--work', work]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`${missing}: no such file`);
    expect(run.stderr).not.toMatch(/E_DIGEST|sha256/);
    expect(existsSync(work)).toBe(false);
  });

  it('a non-empty --work folder is refused', () => {
    const work = tempDir('cli-usage-busy');
    writeFileSync(join(work, 'something'), 'x');
    const run = gateCli([...base, '--bundle', toy.referenceDir, '--work', work]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('not empty');
    expect(readdirSync(work)).toEqual(['something']);
  });
});

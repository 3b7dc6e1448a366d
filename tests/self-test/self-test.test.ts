// The perturbation self-test (anti-placebo): the real gate, run clean over every committed case
// and once per deliberate perturbation, must pass clean and fail each perturbation exactly where
// it first shows; host-side record perturbations must be flagged exactly where they were made.
// And the self-test itself must fail when a perturbation is not caught where its table says.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPerturbationTable } from '../../main/core/gate/perturbation-table.ts';
import { formatSelfTestReport, runSelfTest, type SelfTestCheck, type SelfTestResult } from '../../main/core/gate/self-test.ts';
import { runSelfTestCommand } from '../../main/cli/commands/self-test-command.ts';
import { embeddedDefaults } from '../../main/core/tool/tool-info.ts';
import { BUNDLES_DIR, REFERENCE_ENGINE, freshTempDir } from '../helpers/paths.ts';
import { InputError } from '../../main/core/io/input-error.ts';

// The reference engine's table, beside the engine (the self-test's default).
const REFERENCE_TABLE = await loadPerturbationTable(embeddedDefaults().perturbationTable);
const ENGINE_PERTURBATIONS = REFERENCE_TABLE.enginePerturbations;
const RECORD_PERTURBATIONS = REFERENCE_TABLE.recordPerturbations;

const root = freshTempDir('self-test');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every committed case: the clean run must cover all of them. */
const COMMITTED_CASES = readdirSync(BUNDLES_DIR)
  .filter((name) => existsSync(join(BUNDLES_DIR, name, 'reference', 'manifest.json')))
  .sort();
const describeCheck = (check: SelfTestCheck): string => `${check.name}: expected ${check.expected}; observed ${check.observed}`;

describe('the self-test with its own tables', () => {
  let result: SelfTestResult;
  beforeAll(async () => {
    result = await runSelfTest({ library: REFERENCE_ENGINE, workDir: join(root, 'full') });
    // A budget for the hook, not a speed assertion: about 1 min idle, over 3 min at load 7.
  }, 600_000);

  it('passes', () => {
    // About 30 s on an idle 2-core machine (29 gate runs' worth of captures and comparisons); its
    // speed is a benchmark's business, not a timed assertion's (it took 128 s on a shared machine).
    expect(result.checks.filter((check) => !check.passed).map(describeCheck)).toEqual([]);
    expect(result.passed).toBe(true);
  });

  it('covers every perturb.* option the engine lists, each with one expectation', () => {
    expect([...result.perturbations].sort()).toEqual(ENGINE_PERTURBATIONS.map((item) => item.option).sort());
    expect(result.checks.find((check) => check.kind === 'coverage')?.passed).toBe(true);
  });

  it('ran the clean gate over every committed case and it passed', () => {
    const clean = result.checks.find((check) => check.kind === 'clean');
    expect(clean?.cases).toEqual(COMMITTED_CASES);
    expect(clean?.passed).toBe(true);
    expect(clean?.seals).toContain('FIDELITY: OK');
    expect(clean?.observedSpot).toBeNull();
  });

  it.each(ENGINE_PERTURBATIONS.map((item) => [item.option, item] as const))('catches %s exactly where it first shows', (_option, expectation) => {
    const check = result.checks.find((candidate) => candidate.kind === 'engine_perturbation' && candidate.name === expectation.option);
    expect(check, expectation.option).toBeDefined();
    expect(check?.observedSpot).toEqual({
      case: expectation.case,
      pass: expectation.pass,
      boundary: expectation.boundary,
      kind: expectation.kind ?? check?.observedSpot?.kind,
    });
    expect(check?.seals[0]).toBe('FIDELITY: FAIL');
    expect(check?.passed).toBe(true);
  });

  it.each(RECORD_PERTURBATIONS.map((item) => [item.kind, item] as const))('flags the record perturbation %s there and nowhere else', (kind, expectation) => {
    const check = result.checks.find((candidate) => candidate.kind === 'record_perturbation' && candidate.name === `record:${kind}`);
    expect(check?.passed, check ? describeCheck(check) : kind).toBe(true);
    expect(check?.observedSpot).toMatchObject({ case: expectation.case, pass: expectation.pass, boundary: expectation.boundary });
    expect(check?.observed).toMatch(/: 1 failing boundary, first /);
  });

  it('prints one line per check and SELF-TEST: PASSED last', () => {
    const text = formatSelfTestReport(result);
    const lines = text.split('\n');
    const checks = 2 + ENGINE_PERTURBATIONS.length + RECORD_PERTURBATIONS.length;
    expect(lines.at(-1)).toMatch(new RegExp(`^SELF-TEST: PASSED \\(${checks}/${checks} checks, [\\d.]+ s\\)$`));
    for (const expectation of ENGINE_PERTURBATIONS) expect(text).toContain(expectation.option);
  });
});

describe('the self-test is not a placebo', () => {
  let result: SelfTestResult;
  beforeAll(async () => {
    result = await runSelfTest({
      library: REFERENCE_ENGINE,
      workDir: join(root, 'wrong'),
      cleanCases: ['greedy'],
      enginePerturbations: [
        // greedy has no NaN in its inputs: this option changes nothing there.
        { option: 'perturb.nan_to_zero', case: 'greedy', pass: 0, boundary: 'backbone.embed', kind: 'nan_vs_number', why: 'wrong on purpose' },
        // The truncation first shows at backbone.logits, not at the final norm before it.
        { option: 'perturb.logits_bf16_truncate', case: 'greedy', pass: 0, boundary: 'backbone.final_norm', why: 'wrong on purpose' },
        // Right place, wrong kind: a value error, not a layout error.
        { option: 'perturb.conv_carry_off_by_one', case: 'greedy', pass: 0, boundary: 'backbone.l0.conv_carry', kind: 'layout', why: 'wrong on purpose' },
      ],
      recordPerturbations: [
        // Flipping the lowest mantissa bit is one ULP: inside every faithful contract, so not caught.
        { kind: 'flip_bit', case: 'greedy', pass: 2, boundary: 'backbone.l1.mixer_out', bit: 0 },
      ],
    });
  }, 300_000);

  const check = (name: string): SelfTestCheck => {
    const found = result.checks.find((candidate) => candidate.name === name);
    if (found === undefined) throw new Error(`no check ${name}`);
    return found;
  };

  it('fails as a whole', () => {
    expect(result.passed).toBe(false);
    expect(formatSelfTestReport(result).split('\n').at(-1)).toMatch(/^SELF-TEST: FAILED \(1\/6 checks/);
    expect(check('clean').passed).toBe(true);
  });

  it('fails an option that changes nothing: the gate passed, so nothing was caught', () => {
    const noop = check('perturb.nan_to_zero');
    expect(noop.passed).toBe(false);
    expect(noop.observedSpot).toBeNull();
    expect(noop.observed).toMatch(/OVERALL: PASSED.*NOT caught/);
  });

  it('fails an expectation at the wrong boundary, naming where it did show', () => {
    const wrong = check('perturb.logits_bf16_truncate');
    expect(wrong.passed).toBe(false);
    expect(wrong.observedSpot).toMatchObject({ case: 'greedy', pass: 0, boundary: 'backbone.logits' });
  });

  it('fails an expectation of the wrong kind', () => {
    const wrongKind = check('perturb.conv_carry_off_by_one');
    expect(wrongKind.passed).toBe(false);
    expect(wrongKind.observedSpot).toMatchObject({ pass: 0, boundary: 'backbone.l0.conv_carry', kind: 'value' });
  });

  it('fails a record perturbation the comparator rightly lets through', () => {
    const lowBit = check('record:flip_bit');
    expect(lowBit.passed).toBe(false);
    expect(lowBit.observed).toMatch(/bit 0 of element \d+ flipped: NOT caught/);
  });

  it('fails coverage: the engine lists perturbations the table does not check', () => {
    const coverage = check('coverage');
    expect(coverage.passed).toBe(false);
    expect(coverage.observed).toMatch(/never checked: .*perturb\.depth_in_transposed/);
  });
});

describe('runSelfTestCommand', () => {
  it('refuses flags it does not take, and an engine that cannot be loaded, as usage errors', async () => {
    const io = { stdout: () => undefined, stderr: () => undefined, stderrIsTTY: false, cwd: root, env: {} };
    await expect(runSelfTestCommand(['--strict'], io)).rejects.toBeInstanceOf(InputError);
    await expect(runSelfTestCommand(['--gate', '--self-test', '--engine', join(root, 'no-such-engine.so')], io)).rejects.toBeInstanceOf(InputError);
  });
});

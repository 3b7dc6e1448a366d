// The perturbation self-test (anti-placebo, docs/self-test.md): proves the gate sees what it
// claims to see. It runs the real gate (runGate) with the reference engine
//   - once clean over every committed case: it must PASS (FIDELITY: OK, OVERALL: PASSED);
//   - once per deliberate perturbation the engine lists (`perturb.*`, ti_describe().options):
//     each must FAIL, and its first divergence must be exactly the case / pass / boundary (and
//     failure kind) where the perturbation first shows, per the engine's table (the reference
//     engine's: engine/perturbations.json);
// and then perturbs single records of copies of the clean native bundles on the host side
// (record-perturbations.ts) and proves the comparator flags exactly that pass and boundary, and
// nothing else, with the right kind.
//
// The self-test passes only if every check passes. A perturbation the engine lists without an
// expectation, or an expectation naming an option the engine does not list, fails it too: a
// perturbation nobody checks proves nothing.
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EngineHost, type Isolation } from '../../engine-host/engine-host.ts';
import { openBundle, type TraceBundle } from '../bundle/bundle-reader.ts';
import { compareBoundary } from '../compare/compare-boundary.ts';
import { embeddedDefaults } from '../tool/tool-info.ts';
import { runGate } from './gate-run.ts';
import type { FailureKind, GateResult } from './gate-types.ts';
import { applyRecordPerturbation, copyBundle, EXPECTED_KINDS } from './record-perturbations.ts';
import { loadPerturbationTable, type EnginePerturbationExpectation, type RecordPerturbationExpectation } from './perturbation-table.ts';
import { failureKind } from './verdicts.ts';
import { createOutputFolder } from '../io/output-folder.ts';
import { InputError } from '../io/input-error.ts';

// ---- the expectations -----------------------------------------------------------------------
// The reference engine's table (one line per `perturb.*` option: where each first shows, and the
// host-side record perturbations) is data beside the engine, engine/perturbations.json, read
// through the same loader as any engine's table (perturbation-table.ts).

export type { EnginePerturbationExpectation, RecordPerturbationExpectation } from './perturbation-table.ts';

// ---- results --------------------------------------------------------------------------------

export type SelfTestCheckKind = 'coverage' | 'clean' | 'engine_perturbation' | 'record_perturbation';

/** Where a run first diverged (or the spot a check expected). */
export interface DivergenceSpot {
  case: string;
  pass: number;
  boundary: string;
  kind: FailureKind | null;
}

export interface SelfTestCheck {
  kind: SelfTestCheckKind;
  /** "clean", the option name, or "record:<kind>". */
  name: string;
  /** Cases the check ran. */
  cases: string[];
  expected: string;
  observed: string;
  passed: boolean;
  durationMs: number;
  /** For perturbation checks: the spot expected and the first divergence observed (null: none). */
  expectedSpot: DivergenceSpot | null;
  observedSpot: DivergenceSpot | null;
  /** The gate's seal lines, for gate runs. */
  seals: string[];
  /** The gate's work folder or the perturbed bundle, to look at. */
  evidence: string | null;
}

export interface SelfTestResult {
  passed: boolean;
  library: string;
  /** The engine's perturb.* options, as it lists them. */
  perturbations: string[];
  checks: SelfTestCheck[];
  durationMs: number;
}

export type SelfTestProgress = { kind: 'start'; checks: number } | { kind: 'check'; check: SelfTestCheck; done: number; total: number };

export interface SelfTestOptions {
  /** Engine library; default the built reference engine. */
  library?: string;
  /** A fresh or empty folder for every run's native bundles (kept: it is the evidence). */
  workDir: string;
  progress?: (event: SelfTestProgress) => void;
  /** Folder of <case>/{reference,oracle-f64}; default the committed fixtures. */
  bundlesDir?: string;
  /** Replaces the reference engine's table, engine/perturbations.json (tests use it to prove a wrong expectation fails). */
  enginePerturbations?: readonly EnginePerturbationExpectation[];
  /** Replaces the records of engine/perturbations.json. */
  recordPerturbations?: readonly RecordPerturbationExpectation[];
  /** Require an expectation for every perturb.* option the engine lists (default true). */
  requireCoverage?: boolean;
  /** Cases of the clean run (default every committed case; tests narrow it to save time). */
  cleanCases?: readonly string[];
  /** Default 'process' (the gate's default path). */
  isolation?: Isolation;
  passTimeoutMs?: number;
  /** Gate runs at once (default: the machine's available parallelism, at least 2). */
  concurrency?: number;
  /** Weights for every gate run instead of each reference's weights_file (as --gate --weights). */
  weightsPath?: string;
}

// ---- helpers ---------------------------------------------------------------------------------

function spotText(spot: DivergenceSpot | null): string {
  if (spot === null) return 'no divergence';
  return `${spot.case} pass ${spot.pass} ${spot.boundary}${spot.kind === null ? '' : ` (${spot.kind})`}`;
}

function sameSpot(expected: DivergenceSpot, observed: DivergenceSpot | null, kinds: readonly FailureKind[] | null): boolean {
  return (
    observed !== null &&
    observed.case === expected.case &&
    observed.pass === expected.pass &&
    observed.boundary === expected.boundary &&
    (kinds === null || (observed.kind !== null && kinds.includes(observed.kind)))
  );
}

function firstDivergenceOf(result: GateResult): DivergenceSpot | null {
  const ref = result.firstDivergence;
  if (ref === null) return null;
  const verdict = result.cases.find((item) => item.id === ref.case)?.verdicts[ref.index];
  if (verdict === undefined) return null;
  return { case: ref.case, pass: verdict.pass, boundary: verdict.boundary, kind: verdict.kind };
}

/** Runs `tasks` with at most `limit` at once, keeping their order. */
async function pool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next;
      next += 1;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return results;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_');
}

async function assertFreshWorkDir(dir: string): Promise<void> {
  try {
    const entries = await readdir(dir);
    if (entries.length > 0) throw new InputError(`${dir} exists and is not empty; the self-test writes its runs into a fresh folder`);
  } catch (error) {
    if (error instanceof InputError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await createOutputFolder(dir, '--work');
}

/** Every committed case: a folder with reference/ (and oracle-f64/ when there is one). */
async function committedCases(bundlesDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(bundlesDir)).sort();
  } catch {
    throw new InputError(`the cases folder ${bundlesDir} cannot be read`);
  }
  const cases = names.filter((name) => existsSync(join(bundlesDir, name, 'reference', 'manifest.json')));
  if (cases.length === 0) throw new InputError(`${bundlesDir} holds no <case>/reference bundle`);
  return cases;
}

async function enginePerturbationOptions(library: string, isolation: Isolation): Promise<string[]> {
  const host = await EngineHost.start({ library, isolation });
  try {
    return host.description.options.map((option) => option.name).filter((name) => name.startsWith('perturb.'));
  } finally {
    await host.close().catch(() => undefined);
  }
}

// ---- the checks ------------------------------------------------------------------------------

interface GateRunSpec {
  name: string;
  kind: 'clean' | 'engine_perturbation';
  cases: string[];
  engineOptions: Record<string, string>;
  expectation: EnginePerturbationExpectation | null;
}

async function runGateCheck(spec: GateRunSpec, context: CheckContext): Promise<{ check: SelfTestCheck; result: GateResult | null }> {
  const started = performance.now();
  const workDir = join(context.workDir, spec.kind === 'clean' ? 'clean' : join('engine', safeName(spec.name)));
  const expectedSpot: DivergenceSpot | null =
    spec.expectation === null
      ? null
      : { case: spec.expectation.case, pass: spec.expectation.pass, boundary: spec.expectation.boundary, kind: spec.expectation.kind ?? null };
  const expected = spec.kind === 'clean' ? 'FIDELITY: OK, OVERALL: PASSED' : `FAIL, first divergence at ${spotText(expectedSpot)}`;
  let result: GateResult | null = null;
  let observed: string;
  let observedSpot: DivergenceSpot | null = null;
  let passed = false;
  try {
    result = await runGate({
      library: context.library,
      cases: spec.cases.map((caseId) => {
        const oracleDir = join(context.bundlesDir, caseId, 'oracle-f64');
        return { referenceDir: join(context.bundlesDir, caseId, 'reference'), oracleDir: existsSync(join(oracleDir, 'manifest.json')) ? oracleDir : null };
      }),
      strict: false,
      isolation: context.isolation,
      passTimeoutMs: context.passTimeoutMs,
      engineOptions: spec.engineOptions,
      teacherForce: false,
      isolate: false,
      ...(spec.expectation?.freeRounding ? { forceRoundingDecisions: false } : {}),
      workDir,
      ledgerFile: null,
      command: `trace-inspector --gate --self-test (${spec.name})`,
      ...(context.weightsPath !== undefined ? { weightsPath: context.weightsPath } : {}),
    });
    observedSpot = firstDivergenceOf(result);
    const seals = `FIDELITY: ${result.seals.fidelity}, OVERALL: ${result.seals.overall}${result.seals.reason ? ` reason=${result.seals.reason}` : ''}`;
    if (spec.kind === 'clean') {
      passed = result.seals.fidelity === 'OK' && result.seals.overall === 'PASSED' && result.compared > 0;
      observed = observedSpot === null ? seals : `${seals}; first divergence at ${spotText(observedSpot)}`;
    } else {
      const expectation = spec.expectation as EnginePerturbationExpectation;
      const kinds = expectation.kind === undefined ? null : [expectation.kind];
      passed = result.seals.fidelity === 'FAIL' && result.seals.reason === 'boundary_failures' && sameSpot(expectedSpot as DivergenceSpot, observedSpot, kinds);
      observed = result.seals.fidelity === 'FAIL' ? `${seals}, first divergence at ${spotText(observedSpot)}` : `${seals}: the perturbation was NOT caught`;
    }
  } catch (error) {
    observed = `the gate could not run: ${error instanceof Error ? error.message : String(error)}`;
  }
  return {
    result,
    check: {
      kind: spec.kind,
      name: spec.name,
      cases: spec.cases,
      expected,
      observed,
      passed,
      durationMs: performance.now() - started,
      expectedSpot,
      observedSpot,
      seals: result?.seals.lines ?? [],
      evidence: workDir,
    },
  };
}

async function runRecordCheck(expectation: RecordPerturbationExpectation, clean: GateResult | null, context: CheckContext): Promise<SelfTestCheck> {
  const started = performance.now();
  const kinds = expectation.kinds ?? EXPECTED_KINDS[expectation.kind];
  const name = `record:${expectation.kind}`;
  const expectedSpot: DivergenceSpot = { case: expectation.case, pass: expectation.pass, boundary: expectation.boundary, kind: kinds[0] ?? null };
  const expected = `only ${expectation.case} pass ${expectation.pass} ${expectation.boundary} fails (${kinds.join(' or ')})`;
  const dest = join(context.workDir, 'records', safeName(`${expectation.kind}-${expectation.case}-p${expectation.pass}-${expectation.boundary}`));
  const base = { kind: 'record_perturbation' as const, name, cases: [expectation.case], expected, expectedSpot, seals: [], evidence: dest };
  const nativeDir = clean?.cases.find((item) => item.id === expectation.case)?.nativeDir ?? null;
  if (nativeDir === null) {
    return {
      ...base,
      observed: `no clean native bundle of case ${expectation.case} to perturb (the clean run did not produce one)`,
      passed: false,
      durationMs: performance.now() - started,
      observedSpot: null,
    };
  }
  let native: TraceBundle | null = null;
  let reference: TraceBundle | null = null;
  try {
    await copyBundle(nativeDir, dest);
    const applied = await applyRecordPerturbation(dest, expectation);
    native = await openBundle(dest);
    reference = await openBundle(join(context.bundlesDir, expectation.case, 'reference'), { verify: 'none' });
    const failures: DivergenceSpot[] = [];
    for (const pass of reference.passes) {
      for (const entry of pass.boundaries) {
        if (native.boundary(pass.index, entry.name) === undefined) {
          failures.push({ case: expectation.case, pass: pass.index, boundary: entry.name, kind: 'missing' });
          continue;
        }
        const comparison = await compareBoundary({ native, reference }, pass.index, entry.name);
        if (comparison.outcome === 'fail') failures.push({ case: expectation.case, pass: pass.index, boundary: entry.name, kind: failureKind(comparison) });
      }
    }
    const first = failures[0] ?? null;
    const passed = failures.length === 1 && sameSpot(expectedSpot, first, kinds);
    const observed =
      failures.length === 0
        ? `${applied.detail}: NOT caught, every boundary passed`
        : `${applied.detail}: ${failures.length} failing boundar${failures.length === 1 ? 'y' : 'ies'}, first ${spotText(first)}` +
          (failures.length > 1 ? `; also ${failures.slice(1, 4).map(spotText).join(', ')}${failures.length > 4 ? ', ...' : ''}` : '');
    return { ...base, observed, passed, durationMs: performance.now() - started, observedSpot: first };
  } catch (error) {
    return {
      ...base,
      observed: `could not run: ${error instanceof Error ? error.message : String(error)}`,
      passed: false,
      durationMs: performance.now() - started,
      observedSpot: null,
    };
  } finally {
    await Promise.all([native?.close(), reference?.close()]);
  }
}

interface CheckContext {
  library: string;
  workDir: string;
  bundlesDir: string;
  isolation: Isolation;
  passTimeoutMs: number;
  weightsPath: string | undefined;
}

function coverageCheck(listed: readonly string[], expectations: readonly EnginePerturbationExpectation[]): SelfTestCheck {
  const expectedOptions = new Set(expectations.map((item) => item.option));
  const unchecked = listed.filter((option) => !expectedOptions.has(option));
  const unknown = [...expectedOptions].filter((option) => !listed.includes(option));
  const problems = [
    ...(unchecked.length > 0 ? [`listed by the engine but never checked: ${unchecked.join(', ')}`] : []),
    ...(unknown.length > 0 ? [`expected but not listed by the engine: ${unknown.join(', ')}`] : []),
  ];
  return {
    kind: 'coverage',
    name: 'coverage',
    cases: [],
    expected: 'every perturb.* option the engine lists has an expectation, and every expectation names one it lists',
    observed: problems.length === 0 ? `${listed.length} options, each checked` : problems.join('; '),
    passed: problems.length === 0 && listed.length > 0,
    durationMs: 0,
    expectedSpot: null,
    observedSpot: null,
    seals: [],
    evidence: null,
  };
}

// ---- the self-test ---------------------------------------------------------------------------

export async function runSelfTest(options: SelfTestOptions): Promise<SelfTestResult> {
  const started = performance.now();
  const defaults = embeddedDefaults();
  const library = resolve(options.library ?? defaults.engineLibrary);
  const bundlesDir = resolve(options.bundlesDir ?? defaults.bundlesDir);
  const workDir = resolve(options.workDir);
  const isolation = options.isolation ?? 'process';
  const referenceTable =
    options.enginePerturbations === undefined || options.recordPerturbations === undefined ? await loadPerturbationTable(defaults.perturbationTable) : null;
  const enginePerturbations = options.enginePerturbations ?? referenceTable?.enginePerturbations ?? [];
  const recordPerturbations = options.recordPerturbations ?? referenceTable?.recordPerturbations ?? [];
  const context: CheckContext = { library, workDir, bundlesDir, isolation, passTimeoutMs: options.passTimeoutMs ?? 60_000, weightsPath: options.weightsPath };

  const concurrency = options.concurrency ?? Math.max(2, availableParallelism());
  await assertFreshWorkDir(workDir);
  const cases = await committedCases(bundlesDir);
  for (const expectation of [...enginePerturbations, ...recordPerturbations]) {
    if (!cases.includes(expectation.case)) throw new InputError(`an expectation names case "${expectation.case}", which ${bundlesDir} does not hold`);
  }
  const listed = await enginePerturbationOptions(library, isolation);

  const total = ((options.requireCoverage ?? true) ? 1 : 0) + 1 + enginePerturbations.length + recordPerturbations.length;
  options.progress?.({ kind: 'start', checks: total });
  const checks: SelfTestCheck[] = [];
  const report = (check: SelfTestCheck): void => {
    checks.push(check);
    options.progress?.({ kind: 'check', check, done: checks.length, total });
  };
  if (options.requireCoverage ?? true) report(coverageCheck(listed, enginePerturbations));

  // The clean run and every engine perturbation are independent gate runs: a few at once.
  const cleanCases = options.cleanCases === undefined ? cases : [...options.cleanCases];
  for (const caseId of cleanCases) if (!cases.includes(caseId)) throw new InputError(`clean case "${caseId}" is not in ${bundlesDir}`);
  for (const expectation of recordPerturbations) {
    if (!cleanCases.includes(expectation.case))
      throw new InputError(`record perturbation ${expectation.kind} needs case "${expectation.case}" in the clean run`);
  }
  const specs: GateRunSpec[] = [
    { name: 'clean', kind: 'clean', cases: cleanCases, engineOptions: {}, expectation: null },
    ...enginePerturbations.map((expectation, index): GateRunSpec => ({
      name: enginePerturbations.findIndex((other) => other.option === expectation.option) === index ? expectation.option : `${expectation.option}#${index}`,
      kind: 'engine_perturbation',
      cases: [expectation.case],
      engineOptions: { [expectation.option]: expectation.value ?? '1' },
      expectation,
    })),
  ];
  let clean: GateResult | null = null;
  await pool(
    specs.map((spec) => async () => {
      const { check, result } = await runGateCheck(spec, context);
      if (spec.kind === 'clean') clean = result;
      report(check);
      return check;
    }),
    concurrency,
  );

  // Host-side record perturbations of copies of the clean native bundles.
  await pool(
    recordPerturbations.map((expectation) => async () => {
      const check = await runRecordCheck(expectation, clean, context);
      report(check);
      return check;
    }),
    concurrency,
  );

  const order: Record<SelfTestCheckKind, number> = { coverage: 0, clean: 1, engine_perturbation: 2, record_perturbation: 3 };
  const names = [...enginePerturbations.map((item) => item.option), ...recordPerturbations.map((item) => `record:${item.kind}`)];
  checks.sort((a, b) => order[a.kind] - order[b.kind] || names.indexOf(a.name.replace(/#\d+$/, '')) - names.indexOf(b.name.replace(/#\d+$/, '')));
  return {
    passed: checks.length === total && checks.every((check) => check.passed),
    library,
    perturbations: listed,
    checks,
    durationMs: performance.now() - started,
  };
}

// ---- the report ------------------------------------------------------------------------------

/** A duration as the self-test's report prints it. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The human table: one line per check, then `SELF-TEST: PASSED | FAILED` last. */
export function formatSelfTestReport(result: SelfTestResult): string {
  const rows = result.checks.map((check) => [
    check.passed ? 'ok' : 'FAILED',
    check.name,
    check.kind === 'clean' ? `${check.cases.length} cases` : check.cases.join(','),
    check.kind === 'engine_perturbation' || check.kind === 'record_perturbation' ? spotText(check.expectedSpot).replace(/^\S+ /, '') : check.expected,
    check.kind === 'engine_perturbation' || check.kind === 'record_perturbation'
      ? check.passed
        ? spotText(check.observedSpot).replace(/^\S+ /, '')
        : check.observed
      : check.observed,
    seconds(check.durationMs),
  ]);
  const header = ['result', 'check', 'case', 'expected first divergence', 'observed', 'time'];
  const widths = header.map((title, column) => Math.min(60, Math.max(title.length, ...rows.map((row) => (row[column] as string).length))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] as number)))
      .join('  ')
      .trimEnd();
  const failed = result.checks.filter((check) => !check.passed);
  const details = failed.map(
    (check) => `  ${check.name}: expected ${check.expected}; observed ${check.observed}${check.evidence ? ` (evidence: ${check.evidence})` : ''}`,
  );
  return [
    `self-test of ${result.library}`,
    line(header),
    ...rows.map(line),
    ...(details.length > 0 ? ['', 'failed checks:', ...details] : []),
    '',
    `SELF-TEST: ${result.passed ? 'PASSED' : 'FAILED'} (${result.checks.length - failed.length}/${result.checks.length} checks, ${seconds(result.durationMs)})`,
  ].join('\n');
}

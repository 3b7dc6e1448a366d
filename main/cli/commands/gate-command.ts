// `trace-inspector --gate`: the headless gate for CI. Runs the engine over every case, judges
// every (pass, boundary), writes the signed receipt (always), the JSON and JUnit reports when
// asked, GitHub Actions annotations and a step summary under Actions, prints the human report
// with the seals as its last lines, and exits with the seals' code (0 pass, 1 fail, 2 usage).
import type { KeyObject } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { GATE_RECEIPT_FILE_NAME, writeGateReceipt } from '../../core/gate/gate-receipt.ts';
import { runGate } from '../../core/gate/gate-run.ts';
import { GateAbortedError } from '../../core/gate/gate-case.ts';
import { runSelfTestCommand } from './self-test-command.ts';
import { parseShard, type ShardSpec } from '../../core/gate/gate-shard.ts';
import { SHARD_BY } from '../../core/gate/pass-range.ts';
import type { GateCase, GateOptions, GateResult } from '../../core/gate/gate-types.ts';
import { ReceiptError } from '../../core/receipt/errors.ts';
import { defaultUserKey, loadPrivateKey, privateKeyModeWarning } from '../../core/receipt/keys.ts';
import { formatHumanReport } from '../../core/report/human-report.ts';
import { openBundle, type TraceBundle } from '../../core/bundle/bundle-reader.ts';
import { contractSourceOf, describeSource } from '../../core/compare/reference-contracts.ts';
import { BundleError } from '../../core/bundle/errors.ts';
import { compareLocalVsAccumulated, formatLocalVsAccumulated } from '../../core/capture/local-vs-accumulated.ts';
import { formatAudioSummary, summarizeAudio } from '../../core/audio/audio-summary.ts';
import { pcmStreams } from '../../core/audio/pcm-boundary.ts';
import { humanChannel, outputPath, STDOUT, writeRunOutputs } from '../run-outputs.ts';
import { evidenceChangedDuringRun } from '../../core/gate/evidence-recheck.ts';
import { stopOnSignals } from '../stop-signals.ts';
import { embeddedDefaults } from '../../core/tool/tool-info.ts';
import { EXIT_FAILURE, EXIT_USAGE, type CliIO } from '../cli-io.ts';
import { JOURNAL_FILE_NAME } from '../../core/bundle/capture-journal.ts';
import { MANIFEST_FILE_NAME } from '../../core/bundle/manifest-schema.ts';
import { engineOptionsArg, isolationArg, jsonOutputArg, parseCommandArgs, timeoutArg } from '../command-args.ts';
import { OutputFolderError } from '../../core/io/output-folder.ts';
import { progressPrinter } from '../gate-progress.ts';
import { boundGateHeapGrowth } from '../gate-heap.ts';
import { InputError } from '../../core/io/input-error.ts';

export const GATE_USAGE = `usage: trace-inspector --gate [--engine <lib>] [--bundle <reference bundle>]... [--oracle <dir>]
                            [--strict] [--receipt <file>] [--junit <file>] [--json <file|->]
                            [--key <pem>] [--ledger <file>] [--teacher-force] [--isolate]
                            [--isolation process|thread] [--timeout <seconds>]
                            [--option key=value]... [--weights <file>] [--work <dir>] [--self-test]
                            [--contracts <file> | --contract bit_exact]
                            [--shard K/N [--shard-by cases|passes] --json <file>]

Runs the engine over every case, compares every boundary of every pass with the reference and
the fp64 oracle, prints the verdicts and the seals (last lines), writes a signed receipt, and
exits 0 (FIDELITY: OK or INCOMPLETE with PASSED / PASSED_WITH_GAPS), 1 (OVERALL: FAIL) or 2
(bad usage or invalid input). Defaults: the built reference engine and every committed case
(fixtures/bundles/<case>/reference with its sibling oracle-f64), --work runs/gate-<time>,
--receipt <work>/${GATE_RECEIPT_FILE_NAME}, your per-user signing key, --isolation process,
--timeout 60. A --bundle uses its sibling oracle-f64 folder as oracle when there is one
(--oracle names it for a single --bundle). --strict turns gaps into a failure. --weights names
the weights for every case when a reference's provenance.model.weights_file lies outside the
weights roots; their sha256 must still be the reference's weights_sha256. --contracts FILE /
--contract bit_exact supply contracts (docs/compare.md): with them a --bundle may be a native
bundle (another engine's capture) standing as the reference.
--shard K/N runs the K-th of N deterministic shares of the cases and writes its partial result
(--json) and receipt; \`trace-inspector merge\` combines the N results (docs/ci.md). With
--shard-by passes the share is instead the K-th of N contiguous ranges of each case's passes
(about equal reference bytes): the engine runs from pass 0 through the range, and only the
range is captured and judged (for one long case split over N jobs).
--json - writes the JSON result to stdout; the human report then goes to stderr.
See docs/gate.md.
`;

const GateArgsSchema = z.object({
  engine: z.string().min(1, { error: '--engine: expected a library path' }).optional(),
  bundle: z.array(z.string().min(1, { error: '--bundle: expected a folder' })).default([]),
  oracle: z.string().min(1, { error: '--oracle: expected a folder' }).optional(),
  strict: z.boolean().default(false),
  receipt: z.string().min(1, { error: '--receipt: expected a file' }).optional(),
  junit: z.string().min(1, { error: '--junit: expected a file' }).optional(),
  json: jsonOutputArg,
  key: z.string().min(1, { error: '--key: expected a PEM private key file' }).optional(),
  ledger: z.string().min(1, { error: '--ledger: expected a file' }).optional(),
  'teacher-force': z.boolean().default(false),
  isolate: z.boolean().default(false),
  isolation: isolationArg,
  timeout: timeoutArg,
  option: engineOptionsArg,
  weights: z.string().min(1, { error: '--weights: expected a weights file' }).optional(),
  work: z.string().min(1, { error: '--work: expected a folder' }).optional(),
  contracts: z.string().min(1, { error: '--contracts: expected a file' }).optional(),
  contract: z.enum(['bit_exact'], { error: '--contract: expected "bit_exact" (other contracts go in a --contracts file)' }).optional(),
  shard: z.string().min(1, { error: '--shard: expected K/N' }).optional(),
  'shard-by': z.enum(SHARD_BY, { error: '--shard-by: expected "cases" or "passes"' }).optional(),
});
type GateArgs = z.infer<typeof GateArgsSchema>;

export function parseGateArgs(argv: readonly string[]): GateArgs {
  return parseCommandArgs('--gate', argv, GateArgsSchema);
}

const hasManifest = (dir: string): boolean => existsSync(join(dir, 'manifest.json'));

/** The oracle beside a reference bundle: <case>/oracle-f64 next to <case>/reference. */
function siblingOracle(referenceDir: string): string | null {
  const candidate = join(dirname(referenceDir), 'oracle-f64');
  return candidate !== referenceDir && hasManifest(candidate) ? candidate : null;
}

/** A --bundle names a reference bundle, or a case folder holding reference/. */
function referenceFolder(given: string): string {
  if (hasManifest(given)) return given;
  if (hasManifest(join(given, 'reference'))) return join(given, 'reference');
  throw new InputError(`--bundle ${given}: no manifest.json there (nor in ${join(given, 'reference')}); expected a reference bundle folder`);
}

async function committedCases(bundlesDir: string): Promise<GateCase[]> {
  let names: string[];
  try {
    names = (await readdir(bundlesDir)).sort();
  } catch {
    throw new InputError(`no --bundle given and the committed cases folder ${bundlesDir} cannot be read`);
  }
  const cases = names
    .map((name) => join(bundlesDir, name, 'reference'))
    .filter(hasManifest)
    .map((referenceDir) => ({ referenceDir, oracleDir: siblingOracle(referenceDir) }));
  if (cases.length === 0) throw new InputError(`no --bundle given and ${bundlesDir} holds no <case>/reference bundle`);
  return cases;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function refuseExisting(flag: string, path: string): void {
  if (existsSync(path)) throw new InputError(`${flag} ${path} already exists; the gate never overwrites its outputs (choose another path or move it away)`);
}

async function assertEmptyWork(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new InputError(`--work ${dir} is a file; expected a folder`);
  const entries = await readdir(dir);
  if (entries.length > 0) {
    // A previous gate that was killed mid-capture left a capture to recover: say which and how.
    const interrupted = entries
      .map((entry) => join(dir, entry, 'native'))
      .filter((native) => existsSync(join(native, JOURNAL_FILE_NAME)) && !existsSync(join(native, MANIFEST_FILE_NAME)));
    const hint = interrupted.length === 0 ? '' : ` (it holds an interrupted capture: \`trace-inspector recover ${interrupted[0]}\` seals it)`;
    throw new InputError(`--work ${dir} exists and is not empty; the gate never writes over a previous run${hint}`);
  }
}

interface SigningKey {
  privateKey: KeyObject;
  description: string;
}

/** The key that signs a receipt: --key, else the per-user default (created on first use); `label` prefixes the messages. */
export function signingKey(args: { key?: string | undefined }, io: CliIO, label = 'gate'): SigningKey {
  try {
    if (args.key !== undefined) {
      const path = resolve(io.cwd, args.key);
      // Loaded first: a path that is no key file (missing, a device, a FIFO) gets the loader's
      // refusal, never chmod advice.
      const privateKey = loadPrivateKey(path);
      const warning = privateKeyModeWarning(path);
      if (warning !== null) io.stderr(`${label}: warning: ${warning}\n`);
      return { privateKey, description: `key ${path}` };
    }
    const key = defaultUserKey(io.env);
    io.stderr(
      key.created
        ? `${label}: created your default signing key ${key.privateKeyPath} (public key ${key.publicKeyPath}); receipts are signed with it\n`
        : `${label}: signing with your default key ${key.privateKeyPath} (public key ${key.publicKeyPath})\n`,
    );
    return { privateKey: key.privateKey, description: `default key ${key.privateKeyPath}` };
  } catch (error) {
    if (error instanceof ReceiptError) throw new InputError(`${label === 'gate' ? '--gate' : label}: ${error.message}`);
    throw error;
  }
}

export async function runGateCommand(argv: readonly string[], io: CliIO, commandLine: string): Promise<number> {
  // The self-test has its own flags (main/core/gate/self-test.ts): hand it the rest as is.
  if (argv.includes('--self-test'))
    return runSelfTestCommand(
      argv.filter((arg) => arg !== '--self-test'),
      io,
    );
  const args = parseGateArgs(argv);
  // This process runs the gate to its end: its heap is held close to what is live (gate-heap.ts).
  boundGateHeapGrowth();

  const defaults = embeddedDefaults();
  const library = resolve(io.cwd, args.engine ?? defaults.engineLibrary);
  let cases: GateCase[];
  if (args.bundle.length === 0) {
    if (args.oracle !== undefined)
      throw new InputError('--oracle names the oracle of one --bundle; without --bundle every committed case uses its own oracle-f64 folder');
    cases = await committedCases(defaults.bundlesDir);
  } else {
    if (args.oracle !== undefined && args.bundle.length > 1) {
      throw new InputError(`--oracle names the oracle of one --bundle, but ${args.bundle.length} were given; each --bundle uses its sibling oracle-f64 folder`);
    }
    cases = args.bundle.map((given) => {
      const referenceDir = referenceFolder(resolve(io.cwd, given));
      const oracleDir = args.oracle !== undefined ? resolve(io.cwd, args.oracle) : siblingOracle(referenceDir);
      return { referenceDir, oracleDir };
    });
    if (args.oracle !== undefined && !hasManifest(resolve(io.cwd, args.oracle)))
      throw new InputError(`--oracle ${args.oracle}: no manifest.json there; expected an oracle-f64 bundle folder`);
  }

  let shard: ShardSpec | undefined;
  if (args['shard-by'] !== undefined && args.shard === undefined) throw new InputError(`--shard-by ${args['shard-by']} needs --shard K/N`);
  if (args.shard !== undefined) {
    try {
      shard = { ...parseShard(args.shard), by: args['shard-by'] ?? 'cases' };
    } catch (error) {
      throw new InputError((error as Error).message);
    }
    if (args.json === undefined)
      throw new InputError(`--shard ${args.shard} needs --json <file>: the shard's result, which \`trace-inspector merge\` combines with the others`);
  }

  const workDir = resolve(io.cwd, args.work ?? join('runs', `gate-${timestamp()}`));
  const receipt = resolve(io.cwd, args.receipt ?? join(workDir, GATE_RECEIPT_FILE_NAME));
  const outputs = [
    ['--receipt', receipt],
    ...(args.json !== undefined && args.json !== STDOUT ? [['--json', resolve(io.cwd, args.json)]] : []),
    ...(args.junit !== undefined ? [['--junit', resolve(io.cwd, args.junit)]] : []),
  ] as [string, string][];
  for (const [flag, path] of outputs) refuseExisting(flag, path);
  for (const [index, [flag, path]] of outputs.entries()) {
    const clash = outputs.findIndex(([, other]) => other === path);
    if (clash !== index) throw new InputError(`${outputs[clash]?.[0]} and ${flag} name the same file ${path}`);
  }
  await assertEmptyWork(workDir);
  if (args.contracts !== undefined && args.contract !== undefined) throw new InputError('--gate: give --contracts FILE or --contract bit_exact, not both');
  let supplied;
  try {
    supplied = await contractSourceOf({
      contractsFile: args.contracts === undefined ? null : resolve(io.cwd, args.contracts),
      contract: args.contract ?? null,
    });
  } catch (error) {
    if (error instanceof InputError) throw error.within('--gate');
    throw error;
  }
  const key = signingKey(args, io);

  const options: GateOptions = {
    library,
    cases,
    strict: args.strict,
    isolation: args.isolation,
    passTimeoutMs: args.timeout * 1000,
    engineOptions: Object.fromEntries(args.option.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])),
    teacherForce: args['teacher-force'],
    isolate: args.isolate,
    workDir,
    ledgerFile: args.ledger !== undefined ? resolve(io.cwd, args.ledger) : null,
    command: commandLine,
    referenceContracts: supplied === null ? null : describeSource(supplied),
    ...(args.weights !== undefined ? { weightsPath: resolve(io.cwd, args.weights) } : {}),
    ...(shard !== undefined ? { shard } : {}),
  };
  io.stderr(`gate: engine ${library}\ngate: ${cases.length} case(s); work folder ${workDir}\n`);

  // Each case's audio line, read while the gate still has its bundles open (reportSections).
  const audioLines = new Map<string, string | null>();
  options.onCaseJudged = async ({ caseId, reference, native }) => {
    if (native !== null) audioLines.set(caseId, await audioLineOrWhyNot(caseId, [native, reference]));
  };

  const progress = progressPrinter(io);
  const stop = stopOnSignals(io);
  options.signal = stop.signal;
  let result: GateResult;
  try {
    result = await runGate(options, progress.onEvent);
  } catch (error) {
    progress.finish();
    if (error instanceof GateAbortedError) {
      io.stderr(`gate: stopped: ${error.message}; nothing was judged or signed (the work folder ${workDir} keeps what was captured)\n`);
      return stop.exitCode();
    }
    if (error instanceof InputError) throw error.within('--gate');
    if (error instanceof OutputFolderError) throw new InputError(`--gate: ${error.message}`);
    throw error;
  } finally {
    progress.finish();
    stop.dispose();
  }
  for (const warning of result.warnings) io.stderr(`gate: warning: ${warning}\n`);

  // Everything read from the bundles after the verdicts (isolation, audio summaries) is read now,
  // and the evidence is checked to be what was judged, all BEFORE anything is signed or written.
  let sections: string[];
  try {
    sections = await reportSections(result, audioLines);
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    io.stderr(`gate: a bundle changed while the gate ran: ${error.message}\ngate: no receipt or report was written (exit 2)\n`);
    return EXIT_USAGE;
  }
  const changed = await evidenceChangedDuringRun(result);
  if (changed !== null) {
    io.stderr(`gate: ${changed}\ngate: the evidence is not what was judged: no receipt or report was written (exit 2)\n`);
    return EXIT_USAGE;
  }

  // Outputs: the receipt always; a failure to write evidence fails the run.
  const { files, writeFailed } = await writeRunOutputs(io, 'gate', result, {
    json: args.json === undefined ? undefined : outputPath(io.cwd, args.json),
    junit: args.junit === undefined ? undefined : resolve(io.cwd, args.junit),
    receipt,
    writeReceipt: (path) => writeGateReceipt(result, path, key.privateKey),
  });

  const human = humanChannel(io, args.json);
  for (const section of sections) human(section);
  human(formatHumanReport(result, { files }));
  if (writeFailed) {
    io.stderr('gate: an output could not be written: exit 1 whatever the seals say (a gate without its evidence does not pass)\n');
    return EXIT_FAILURE;
  }
  return result.seals.exitCode;
}

/**
 * What the report prints before its seals; reads the bundles (a BundleError if one changed), but
 * for the audio lines read as each case was judged (`audioLines`, by case: opening a long run's
 * bundles again here parsed their manifests again, the gate process's peak at 10 GiB).
 */
async function reportSections(result: GateResult, audioLines: ReadonlyMap<string, string | null>): Promise<string[]> {
  const sections: string[] = [];
  // With --isolate, the per-segment local error beside the accumulated error, before the report
  // (whose last lines are the seals).
  for (const item of result.cases) {
    if (item.isolatedDir === null || item.nativeDir === null) continue;
    sections.push(await localVsAccumulatedSection(item.id, item.nativeDir, item.isolatedDir, item.reference.dir));
  }
  // Cases with PCM output: how the native audio compares as a whole (informative, whatever the
  // contracts say; audio bounds declared in a contract are judged by the gate and listed in the
  // report's own `audio` lines).
  for (const item of result.cases) {
    if (item.nativeDir === null) continue;
    const line = audioLines.has(item.id) ? (audioLines.get(item.id) ?? null) : await audioSection(item.id, item.nativeDir, item.reference.dir);
    if (line !== null) sections.push(line);
  }
  return sections;
}

// The sections below re-read bundles the gate already verified and judged: they open them without
// hashing every file again (each tensor is still digest-checked as it is read), and evidence that
// changed since is said in one line, never an internal error.

/** What `use` says of open bundles; a BundleError becomes a line naming the file. */
async function orWhyNot(bundles: TraceBundle[], what: string, use: (bundles: TraceBundle[]) => Promise<string | null>): Promise<string | null> {
  try {
    return await use(bundles);
  } catch (error) {
    if (error instanceof BundleError) return notShown(what, error);
    throw error;
  }
}

function notShown(what: string, error: BundleError): string {
  return `${what}: not shown, the evidence could not be read: ${error.message}\n\n`;
}

/** Opens the bundles, runs `use`, closes them; a BundleError becomes a line naming the file. */
async function withVerifiedBundles(dirs: readonly string[], what: string, use: (bundles: TraceBundle[]) => Promise<string | null>): Promise<string | null> {
  const bundles: TraceBundle[] = [];
  try {
    for (const dir of dirs) bundles.push(await openBundle(dir, { verify: 'none' }));
  } catch (error) {
    await Promise.all(bundles.map((bundle) => bundle.close()));
    if (error instanceof BundleError) return notShown(what, error);
    throw error;
  }
  try {
    return await orWhyNot(bundles, what, use);
  } finally {
    await Promise.all(bundles.map((bundle) => bundle.close()));
  }
}

/** Layer isolation of one case: where each segment adds error on its own vs inherits it. */
async function localVsAccumulatedSection(caseId: string, nativeDir: string, isolatedDir: string, referenceDir: string): Promise<string> {
  const text = await withVerifiedBundles([nativeDir, isolatedDir, referenceDir], `layer isolation, case ${caseId}`, async ([native, isolated, reference]) => {
    const rows = await compareLocalVsAccumulated(native as TraceBundle, isolated as TraceBundle, reference as TraceBundle);
    return `layer isolation, case ${caseId}: local error (reference inputs) beside accumulated error\n${formatLocalVsAccumulated(rows, { injectedOnly: true })}\n\n`;
  });
  return text ?? '';
}

async function audioSection(caseId: string, nativeDir: string, referenceDir: string): Promise<string | null> {
  return withVerifiedBundles([nativeDir, referenceDir], `audio, case ${caseId}`, (bundles) => audioLines(caseId, bundles));
}

/** The audio line of a case whose native and reference bundles are open, or why it cannot be shown. */
function audioLineOrWhyNot(caseId: string, bundles: TraceBundle[]): Promise<string | null> {
  return orWhyNot(bundles, `audio, case ${caseId}`, (open) => audioLines(caseId, open));
}

async function audioLines(caseId: string, [native, reference]: TraceBundle[]): Promise<string | null> {
  // Every audio boundary the reference declares, each at its declared rate.
  const lines: string[] = [];
  for (const boundary of pcmStreams(reference as TraceBundle)) {
    const summary = await summarizeAudio(native as TraceBundle, reference as TraceBundle, boundary);
    if (summary !== null) lines.push(formatAudioSummary(caseId, summary));
  }
  return lines.length === 0 ? null : lines.join('');
}

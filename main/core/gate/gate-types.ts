// The gate's data: what runGate is asked (GateOptions), what it reports while it runs
// (GateProgress), and what it returns (GateResult). GateResult is plain JSON-able data — the
// reports, the receipt and the app all read it; non-finite numbers may appear in statistics and
// every serialiser writes them as strings ("NaN", "Infinity", "-Infinity").
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import type { AudioBounds, Contract, RunOutcome, RunStatus } from '../bundle/manifest-schema.ts';
import type { TeacherForcingSummary } from '../capture/teacher-forcing.ts';
import type { SuppliedContracts } from '../compare/reference-contracts.ts';
import type { AudioMetricValues, AudioViolation, BoundaryComparison, MismatchClass, StructuralProblem } from '../compare/comparison-types.ts';
import type { ShardInfo, ShardSpec } from './gate-shard.ts';

export type Isolation = 'process' | 'thread';

export interface GateCase {
  /** A reference bundle folder. */
  referenceDir: string;
  /** Its fp64 oracle bundle, or null when there is none (the case then records a gap). */
  oracleDir: string | null;
}

export interface GateOptions {
  /** Engine shared library. */
  library: string;
  cases: GateCase[];
  /** Turn gaps into a failure (OVERALL: FAIL reason=strict_gaps). */
  strict: boolean;
  isolation: Isolation;
  passTimeoutMs: number;
  /** Engine options set before each run (knobs, deliberate perturbations). */
  engineOptions: Record<string, string>;
  /** Passed through to the capture (teacher forcing is implemented by the capture). */
  teacherForce: boolean;
  /** Passed through to the capture (layer isolation is implemented by the capture). */
  isolate: boolean;
  /** Passed through to the capture: force rounding decisions (max_ulp boundaries); default true. */
  forceRoundingDecisions?: boolean;
  /**
   * Weights for every case instead of each reference's provenance.model.weights_file (--weights);
   * not confined to the weights roots, but their sha256 must be the reference's weights_sha256.
   */
  weightsPath?: string;
  /** Native bundles go to <workDir>/<case>/native; must not hold a previous run of a case. */
  workDir: string;
  /** A known-gap ledger file; null: a known-gaps.json beside each reference bundle, if any. */
  ledgerFile: string | null;
  /**
   * Contracts supplied from elsewhere (--contracts / --contract): a native bundle may then be the
   * reference, and a contracts file's rules replace a reference's own contracts where they match.
   */
  referenceContracts?: SuppliedContracts | null;
  /** The command line recorded in the native bundles' provenance. */
  command?: string;
  /**
   * Stops the run when aborted (Ctrl+C, SIGTERM): the capture in flight is finished as
   * `aborted` and runGate rejects with GateAbortedError; nothing is judged or signed.
   */
  signal?: AbortSignal;
  /** --shard K/N: run only this shard's share of the cases (gate-shard.ts). */
  shard?: ShardSpec;
  /**
   * Called once a case is judged, while its reference and native bundles are still open (native
   * null when none could be read): what a report reads of them is read here, so no bundle is
   * opened again after the run (the gate command's audio line; docs/performance.md).
   */
  onCaseJudged?: (judged: { caseId: string; reference: TraceBundle; native: TraceBundle | null }) => Promise<void>;
}

export const VERDICTS = ['PASS', 'FAIL', 'GAP', 'KNOWN_GAP', 'REVIEW_REQUIRED'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * What kind of failure a FAIL (or a KNOWN_GAP / REVIEW_REQUIRED that failed one side) shows:
 * an element mismatch class, a structural problem, evidence that could not be read, or a PCM
 * signal outside its contract's audio bounds ('audio': every element inside its own bound), or a
 * pass the sides disagree about ('pass': its count, kind or mode; on the row `(pass)`).
 */
export type FailureKind = MismatchClass | StructuralProblem | 'audio' | 'unreadable' | 'pass' | 'other';

/** Where the verdict's oracle side stands. */
export type OracleSide =
  | 'compared' // native was compared with the oracle under the oracle's contracts
  | 'absent' // the case has no oracle bundle
  | 'lacks' // the oracle bundle has no record of this (pass, boundary)
  | 'not_compared'; // nothing to compare (native missing, reference failed structurally...)

/** A comparison as the gate keeps it: the contract is stored once, in GateResult.contracts. */
export type ComparisonRecord = Omit<BoundaryComparison, 'contract'> & {
  /** Key into GateResult.contracts. */
  contractId: string;
};

export interface BoundaryVerdict {
  case: string;
  pass: number;
  boundary: string;
  stage: string;
  /** Position in the catalogue (execution order within a pass); null when the engine does not declare it. */
  catalogueIndex: number | null;
  verdict: Verdict;
  /** For FAIL, and for KNOWN_GAP / REVIEW_REQUIRED when one side failed: what kind. */
  kind: FailureKind | null;
  /** One sentence saying why (where / how much / what kind for failures). */
  reason: string;
  /** For GAP and KNOWN_GAP: the gap id it contributes to the seals. */
  gapId: string | null;
  /** The ledger entry that matched, if any. */
  ledgerId: string | null;
  /** The boundary exists in the reference / native bundle for this pass. */
  inReference: boolean;
  inNative: boolean;
  /** Native against the reference, under the reference's contract (null: not compared). */
  reference: ComparisonRecord | null;
  /** Native against the fp64 oracle, under the oracle's contract. */
  oracleSide: OracleSide;
  oracle: ComparisonRecord | null;
  /** Wall time spent comparing this boundary (both sides). */
  durationMs: number;
}

export interface GapRecord {
  id: string;
  /** The case it belongs to, null for a gap of the engine or of the whole run. */
  case: string | null;
  reason: string;
}

export type VerdictCounts = Record<Verdict, number>;

export interface CaseRun {
  /** How the capture ended (the native bundle's run outcome). */
  outcome: RunOutcome;
  /** Passes the reference has, and passes the engine completed. */
  passesExpected: number;
  passesCompleted: number;
  /** For a crash: the signal, when one killed the engine-host process. */
  signal: string | null;
  /** One sentence naming what happened, empty when the run completed. */
  summary: string;
}

export interface BundleSummary {
  dir: string;
  manifestPath: string;
  manifestSha256: string;
  /** The subject name of the manifest in the receipt. */
  subjectName: string;
  kind: string;
  caseDescription: string;
  precision: string;
  generator: { implementation: string; revision: string; dirty: boolean };
  runtime: Record<string, string | number | boolean>;
  createdAt: string;
  passes: number;
  boundaries: number;
  /**
   * The scheme the manifest's own digests are in (tree-digest.ts schemeName: "sha256" or
   * "tree-sha256/1:<chunk bytes>"), stated in receipts so no digest is read in the wrong scheme.
   * Absent in results written before the scheme existed (plain sha256).
   */
  digestScheme?: string;
}

/**
 * A PCM boundary's whole stream judged against its audio bounds (audio-stream-verdicts.ts): the
 * valid samples of every pass whose reference contract bounds the audio and which native
 * recorded, concatenated in pass order on both sides.
 */
export interface AudioStreamJudgement {
  boundary: string;
  /** The passes that make up the stream, in order. */
  passes: number[];
  /** The same, as ranges for people ("0-11, 18-20"). */
  passRange: string;
  samples: number;
  metrics: AudioMetricValues;
  /** Per metric the loosest bound of the stream's passes; null when some pass leaves it unbounded. */
  bounds: Omit<AudioBounds, 'derivation'>;
  violations: AudioViolation[];
  passed: boolean;
  /** The pass whose row carries a broken stream bound: the stream's last (the stream is complete there). */
  verdictPass: number;
}

export interface CaseResult {
  id: string;
  reference: BundleSummary;
  oracle: BundleSummary | null;
  /**
   * The weights the engine opened (the reference's provenance, digest-checked); null when the
   * reference names none (an engine that embeds or generates its weights, opened with none).
   */
  weights: { path: string; sha256: string; subjectName: string } | null;
  /** The native bundle, null when none could be written or recovered. */
  nativeDir: string | null;
  /** With --isolate: the isolated native bundle the capture wrote (null when none). */
  isolatedDir: string | null;
  /** With --teacher-force: what the capture forced and where the engine's own tokens differed. */
  teacherForcing: TeacherForcingSummary | null;
  run: CaseRun;
  /** Every (pass, boundary) of the reference, plus native records the reference lacks, in execution order. */
  verdicts: BoundaryVerdict[];
  counts: VerdictCounts;
  /** Rows where native was compared with the reference (structurally or element by element). */
  compared: number;
  /** Index into `verdicts` of the first FAIL / REVIEW_REQUIRED in execution order. */
  firstDivergence: number | null;
  /** The native bundle (or one of its tensors) could not be read. */
  unreadable: string | null;
  gaps: GapRecord[];
  /** Every PCM boundary whose contracts bound the audio, judged over its whole stream. */
  audio: AudioStreamJudgement[];
  /**
   * A shard of --shard-by passes: the passes [from, to) whose rows this result holds (pass-split.ts).
   * Absent: every pass (an unsharded or merged result).
   */
  passRange?: { from: number; to: number };
}

export interface EngineSummary {
  library: string;
  sha256: string;
  /** The library's file name: its subject name in the receipt. */
  subjectName: string;
  name: string;
  version: string;
  buildId: string;
  abiVersion: number;
  /** Boundary names the catalogue declares, in catalogue (execution) order. */
  catalogue: string[];
}

export interface LedgerEntry {
  id: string;
  boundary: string;
  /** Null: every pass. */
  passes: number[] | null;
  /** Null: every case the entry's source applies to. */
  case: string | null;
  reason: string;
  reopen_evidence: string;
  /** Where it was declared: a manifest or a known-gaps.json file. */
  source: string;
  /** The cases of this run it applies to. */
  appliesTo: string[];
}

export type FidelitySeal = 'OK' | 'INCOMPLETE' | 'FAIL';
export type OverallSeal = 'PASSED' | 'PASSED_WITH_GAPS' | 'FAIL';
export type FailReason =
  | 'nothing_compared'
  | 'engine_crashed'
  | 'engine_timeout'
  | 'engine_error'
  | 'engine_aborted'
  | 'unreadable_evidence'
  | 'boundary_failures'
  | 'review_required'
  | 'strict_gaps';

export interface Seals {
  fidelity: FidelitySeal;
  overall: OverallSeal;
  reason: FailReason | null;
  /** Every gap id, one `GAP:` line each. */
  gapIds: string[];
  /** The seal lines exactly as printed (and stored in the receipt). */
  lines: string[];
  exitCode: 0 | 1;
}

export interface DivergenceRef {
  case: string;
  /** Index into that case's verdicts. */
  index: number;
}

export interface GateResult {
  schema: 'trace-inspector.gate-result';
  schema_version: 1;
  tool: { name: string; version: string; commit: string; dirty: boolean };
  startedAt: string;
  finishedAt: string;
  strict: boolean;
  options: {
    /** null where no engine ran (`compare` judges two existing bundles). */
    isolation: Isolation | null;
    /** null where no engine ran. */
    passTimeoutMs: number | null;
    engineOptions: Record<string, string>;
    teacherForce: boolean;
    isolate: boolean;
    /** null where nothing was captured (`compare`). */
    workDir: string | null;
    ledgerFile: string | null;
    /** Where supplied contracts came from (a contracts file is a receipt subject); absent or null: the references' own. */
    referenceContracts?: { description: string; file: string | null; sha256: string | null } | null;
  };
  engine: EngineSummary;
  ledger: LedgerEntry[];
  /** Things the user should know that change no verdict (ledger entries for cases not run...). */
  warnings: string[];
  cases: CaseResult[];
  /** Contracts used, by id (sha256 prefix of their canonical JSON). */
  contracts: Record<string, Contract>;
  /** Every gap of the run (case gaps, boundary gaps, known gaps), each id once, in discovery order. */
  gaps: GapRecord[];
  counts: VerdictCounts;
  compared: number;
  firstDivergence: DivergenceRef | null;
  seals: Seals;
  /** Present when the run is one shard of a sharded gate (--shard K/N). */
  shard?: ShardInfo;
  /** Present on a merged result: the shard results it combines (gate-merge.ts). */
  mergedFrom?: { file: string; sha256: string; shard: number }[];
}

export type GateProgress =
  | { kind: 'case_start'; case: string; caseIndex: number; caseCount: number; passes: number }
  | { kind: 'pass'; case: string; pass: number; passes: number; status: 'ok' | RunStatus | string; detail: string }
  | { kind: 'compare'; case: string; done: number; total: number }
  | { kind: 'case_end'; case: string; caseIndex: number; caseCount: number; counts: VerdictCounts; run: RunStatus };

export function emptyCounts(): VerdictCounts {
  return { PASS: 0, FAIL: 0, GAP: 0, KNOWN_GAP: 0, REVIEW_REQUIRED: 0 };
}

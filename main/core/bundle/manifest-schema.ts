// manifest.json of a trace bundle (schema "trace-inspector.bundle", version 1), as specified by
// docs/bundle-format.md: the zod schema, its types, and `parseManifest`, which adds the checks a
// schema cannot express (pass order, unique names, byte lengths, confined paths, contracts).
import { z } from 'zod';
import { checkedBoundaryEntry, type ContractsSeen, type NestedEntrySchemas } from './boundary-entry-check.ts';
import { ChunkDigestsSchema, chunkListProblem } from './chunk-digests.ts';
import { DTypeSchema, DTYPE_SIZE, elementCount } from './dtype.ts';
import { BundleError, formatFieldPath, type BundleErrorCode, type BundleIssue } from './errors.ts';
import { isRowMajor } from './layout.ts';
import { checkBundlePath } from './path-confinement.ts';
import { issuesFromZod } from './zod-issues.ts';
import { DigestDeclarationSchema, segmentDigest } from './tree-digest.ts';
import { numberListKey } from '../io/number-keys.ts';

export const BUNDLE_SCHEMA_NAME = 'trace-inspector.bundle';
export const BUNDLE_SCHEMA_VERSION = 1;
export const MANIFEST_FILE_NAME = 'manifest.json';

export const BUNDLE_KINDS = ['reference', 'oracle-f64', 'native'] as const;
export const BundleKindSchema = z.enum(BUNDLE_KINDS);
export type BundleKind = z.infer<typeof BundleKindSchema>;

const NonEmptyString = z.string().min(1, { error: 'expected a non-empty string' });
export const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected 64 lowercase hex characters (a sha256)' });
const GitRevisionSchema = z.string().regex(/^[0-9a-f]{7,64}$/, { error: 'expected the git commit of the generator source (7 to 64 lowercase hex characters)' });
const Count = z.int().min(0);
const NonNegativeFinite = z.number().min(0).refine(Number.isFinite, { error: 'expected a finite number' });
const Finite = z.number().refine(Number.isFinite, { error: 'expected a finite number' });
export const ShapeSchema = z.array(Count);
export const StridesSchema = z.array(z.int());

// ---- provenance -------------------------------------------------------------------------

export const ModelProvenanceSchema = z
  .strictObject({
    name: NonEmptyString,
    checkpoint_revision: NonEmptyString,
    /**
     * The weights the model ran with, relative to the folder of manifest.json (resolved within the
     * weights roots, main/core/bundle/weights-roots.ts). Absent for a model whose engine embeds or
     * generates its weights: weights_sha256 is then absent too, and the engine opens with none.
     */
    weights_file: NonEmptyString.optional(),
    weights_sha256: Sha256HexSchema.optional(),
  })
  .superRefine((model, ctx) => {
    // Both or neither: weights without a digest cannot be verified, a digest of nothing is noise.
    if ((model.weights_file === undefined) === (model.weights_sha256 === undefined)) return;
    const [present, absent] = model.weights_file === undefined ? ['weights_sha256', 'weights_file'] : ['weights_file', 'weights_sha256'];
    ctx.addIssue({
      code: 'custom',
      path: [absent],
      message: `missing while ${present} is given: name the weights with both (weights_file and its sha256), or leave both out when the engine embeds or generates its weights`,
    });
  });

export const GeneratorProvenanceSchema = z.strictObject({
  implementation: NonEmptyString,
  revision: GitRevisionSchema,
  /** The generator's tree had uncommitted changes: `revision` then does not pin the source. */
  dirty: z.boolean(),
  command: NonEmptyString,
});

const RuntimeValueSchema = z.union([z.string(), z.number(), z.boolean()]);
/** Runtime versions: free-form by name; the required names depend on the bundle kind. */
export const RuntimeSchema = z.record(z.string(), RuntimeValueSchema);

/**
 * A reference or oracle names what computed it, tool by tool (torch and python for a PyTorch
 * reference; NAMcore, JAX or another native engine for others): any non-empty map.
 */
const ReferenceRuntimeSchema = z
  .record(NonEmptyString, RuntimeValueSchema)
  .refine((runtime) => Object.keys(runtime).length > 0, { error: 'expected at least one tool and its version, e.g. {"torch": "2.4.0", "python": "3.11.9"}' });
const NativeRuntimeSchema = z
  .object({
    node: NonEmptyString,
    engine_name: NonEmptyString,
    engine_version: NonEmptyString,
    engine_build_id: NonEmptyString,
    engine_library_sha256: Sha256HexSchema,
    engine_abi_version: z.int().min(1),
  })
  .catchall(RuntimeValueSchema);

export const PRECISIONS = ['float32', 'float64', 'bfloat16', 'float16', 'native'] as const;
export const PrecisionSchema = z.enum(PRECISIONS);
export type Precision = z.infer<typeof PrecisionSchema>;

/**
 * The precisions each bundle kind may declare: a reference computes in whatever its framework
 * ran (float32, bfloat16, ... or "native" for a reference that is itself an engine run), an
 * oracle in float64, a native capture in the engine's own.
 */
export const PRECISIONS_OF_KIND: Readonly<Record<BundleKind, readonly Precision[]>> = {
  reference: PRECISIONS,
  'oracle-f64': ['float64'],
  native: ['native'],
};

const IsoTimeSchema = z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time such as 2026-12-02T10:00:00Z' });

export const ProvenanceSchema = z.strictObject({
  model: ModelProvenanceSchema,
  generator: GeneratorProvenanceSchema,
  runtime: RuntimeSchema,
  precision: PrecisionSchema,
  created_at: IsoTimeSchema,
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

/** The provenance a bundle of `kind` must carry (runtime names and precision depend on it). */
export function provenanceSchemaFor(kind: BundleKind) {
  return ProvenanceSchema.extend({
    runtime: kind === 'native' ? NativeRuntimeSchema : ReferenceRuntimeSchema,
    precision: z.enum(PRECISIONS_OF_KIND[kind], { error: `expected ${PRECISIONS_OF_KIND[kind].map((p) => `"${p}"`).join(' or ')} for a ${kind} bundle` }),
  });
}

// ---- contracts --------------------------------------------------------------------------

export const NanPolicySchema = z.enum(['positions', 'positions_and_payload']);
export const SignedZeroPolicySchema = z.enum(['ignore', 'must_match']);

/**
 * Bounds on the audio metrics of a PCM boundary (docs/audio.md), each null when not bounded:
 * every record (one pass's valid samples) and the whole stream must keep inside them. Like the
 * element tolerances they derive from the precision contract, never from what passes, and
 * `derivation` says how.
 */
export const AudioBoundsSchema = z.strictObject({
  /** Error-to-signal ratio Σ(n−r)²/Σr² at most this. */
  max_esr: NonNegativeFinite.nullable(),
  /** SNR 10·log10(Σr²/Σ(n−r)²) in dB at least this. */
  min_snr_db: Finite.nullable(),
  /** Multi-resolution STFT distance at most this. */
  max_mr_stft: NonNegativeFinite.nullable(),
  /** Null-test residual (at the best-aligning offset) at most this many dBFS. */
  max_null_residual_dbfs: Finite.nullable(),
  /** |offset| of the null test's best alignment at most this many samples. */
  max_null_offset: Count.nullable(),
  /** Where the numbers come from: the element contract and precision they follow from. */
  derivation: NonEmptyString,
});
export type AudioBounds = z.infer<typeof AudioBoundsSchema>;
/** The bound fields of AudioBounds, in the order reports list them. */
export const AUDIO_BOUND_NAMES = ['max_esr', 'min_snr_db', 'max_mr_stft', 'max_null_residual_dbfs', 'max_null_offset'] as const;
export type AudioBoundName = (typeof AUDIO_BOUND_NAMES)[number];

export const BitExactContractSchema = z.strictObject({
  kind: z.literal('bit_exact'),
  nan_policy: NanPolicySchema,
  signed_zero: SignedZeroPolicySchema,
  reason: NonEmptyString,
  // Identical samples already mean ESR 0, SNR Infinity, MR-STFT 0 and no residual at offset 0:
  // audio bounds there could only be redundant or contradictory, so they are refused.
  audio: z
    .never({
      error:
        'a bit_exact contract already requires identical samples (ESR 0, SNR Infinity, MR-STFT 0, no null residual at offset 0): audio bounds belong on a faithful contract',
    })
    .optional(),
});

/** What a faithful tolerance derives from: never "what passes". */
export const ContractDerivationSchema = z.strictObject({
  storage_dtype: DTypeSchema,
  accumulation_dtype: DTypeSchema,
  accumulation_length: Count,
  reduction_order: NonEmptyString,
  formula: NonEmptyString,
  allowed_differences: NonEmptyString,
});

export const FaithfulContractSchema = z.strictObject({
  kind: z.literal('faithful'),
  /** An element passes when |n - r| <= abs + rel·|r| ... */
  abs: NonNegativeFinite,
  rel: NonNegativeFinite,
  /** ... or, when set, when its ULP distance <= max_ulp. */
  max_ulp: Count.nullable(),
  /** Optional bound on the error relative to the fp64 oracle. */
  oracle_rel: NonNegativeFinite.nullable(),
  nan_policy: NanPolicySchema,
  signed_zero: SignedZeroPolicySchema,
  derivation: ContractDerivationSchema,
  /** Optional bounds on the audio metrics of a PCM boundary (absent: only the elements are judged). */
  audio: AudioBoundsSchema.optional(),
});

export const ContractSchema = z.discriminatedUnion('kind', [BitExactContractSchema, FaithfulContractSchema]);
export type BitExactContract = z.infer<typeof BitExactContractSchema>;
export type FaithfulContract = z.infer<typeof FaithfulContractSchema>;
export type ContractDerivation = z.infer<typeof ContractDerivationSchema>;
export type Contract = z.infer<typeof ContractSchema>;

// ---- tensors, passes, files ------------------------------------------------------------------

export const ValidRegionSchema = z.strictObject({
  axis: Count,
  length: Count,
  /** What the elements past `length` along `axis` must hold. */
  padding: z.enum(['zero', 'any']),
});
export type ValidRegion = z.infer<typeof ValidRegionSchema>;

export const LayoutSchema = z.enum(['row-major', 'strided']);

export const BoundaryEntrySchema = z.strictObject({
  name: NonEmptyString,
  stage: NonEmptyString,
  dtype: DTypeSchema,
  shape: ShapeSchema,
  /** As the producer emitted them, in elements; the data on disk is always row-major. */
  strides: StridesSchema,
  layout: LayoutSchema,
  key: NonEmptyString,
  sha256: Sha256HexSchema,
  byte_length: Count,
  valid: ValidRegionSchema.nullable(),
  /** Required in reference and oracle bundles; null in native ones. */
  contract: ContractSchema.nullable(),
  /** Optional sha256 per fixed-size chunk of the tensor (chunk-digests.ts). */
  chunks: ChunkDigestsSchema.optional(),
});
export type BoundaryEntry = z.infer<typeof BoundaryEntrySchema>;

export const PassKindSchema = z.enum(['prefill', 'decode']);
export type PassKind = z.infer<typeof PassKindSchema>;
/**
 * A free label of what a pass produced ("text" and "audio" for the reference engine; any other
 * word for other models), or null when the producer gives none. When both the reference and the
 * engine name a mode, they must agree.
 */
export const PassModeSchema = z.string().min(1, { error: 'expected a non-empty label or null' }).max(64, { error: 'expected at most 64 characters' });
export type PassMode = z.infer<typeof PassModeSchema>;

export const PassEntrySchema = z.strictObject({
  index: Count,
  kind: PassKindSchema,
  mode: PassModeSchema.nullable().default(null),
  file: NonEmptyString,
  boundaries: z.array(BoundaryEntrySchema),
});
export type PassEntry = z.infer<typeof PassEntrySchema>;

export const InputEntrySchema = z.strictObject({
  name: NonEmptyString,
  dtype: DTypeSchema,
  shape: ShapeSchema,
  file: NonEmptyString,
  key: NonEmptyString,
  sha256: Sha256HexSchema,
});
export type InputEntry = z.infer<typeof InputEntrySchema>;

export const KnownGapSchema = z.strictObject({
  id: NonEmptyString,
  boundary: NonEmptyString,
  passes: z.array(Count),
  reason: NonEmptyString,
  reopen_evidence: NonEmptyString,
});
export type KnownGap = z.infer<typeof KnownGapSchema>;

export const FileEntrySchema = z.strictObject({
  path: NonEmptyString,
  sha256: Sha256HexSchema,
  bytes: Count,
});
export type FileEntry = z.infer<typeof FileEntrySchema>;

export const RUN_STATUSES = ['completed', 'engine_error', 'crashed', 'timeout', 'aborted'] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const RunOutcomeSchema = z.strictObject({
  status: RunStatusSchema,
  message: z.string(),
  /** The last pass with a recorded boundary, null when none was recorded. */
  last_pass: Count.nullable(),
  last_boundary: z.string().nullable(),
});
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

export const CaseSchema = z.strictObject({
  id: NonEmptyString,
  description: z.string(),
  /**
   * How many passes the case has (prefill included), stated by its generator. Optional (bundles
   * written before it existed lack it); when present, the gate fails a case whose reference,
   * oracle or native run has another count (docs/gate.md).
   */
  pass_count: z.int().min(1).optional(),
});
export type BundleCase = z.infer<typeof CaseSchema>;

/** One audio boundary: a one-dimensional float boundary whose records are PCM at this rate. */
export const AudioDeclarationSchema = z.strictObject({
  sample_rate: z
    .int({ error: 'expected the sample rate in Hz (an integer)' })
    .min(1, { error: 'expected a positive sample rate in Hz' })
    .max(1_000_000, { error: 'expected at most 1000000 Hz' }),
});
export type AudioDeclaration = z.infer<typeof AudioDeclarationSchema>;

export const BundleManifestSchema = z.strictObject({
  schema: z.literal(BUNDLE_SCHEMA_NAME),
  schema_version: z.literal(BUNDLE_SCHEMA_VERSION),
  kind: BundleKindSchema,
  case: CaseSchema,
  provenance: ProvenanceSchema,
  inputs: z.array(InputEntrySchema),
  passes: z.array(PassEntrySchema),
  known_gaps: z.array(KnownGapSchema),
  files: z.array(FileEntrySchema),
  /** How a native run ended; required in native bundles, optional elsewhere. */
  run: RunOutcomeSchema.nullable().optional(),
  /**
   * The audio boundaries, by name, with their sample rates (main/core/audio/audio-declarations.ts
   * says what a manifest without the map declares).
   */
  audio: z.record(NonEmptyString, AudioDeclarationSchema).optional(),
  /**
   * The digest scheme of every digest the manifest states (tree-digest.ts). Absent: plain sha256
   * of the bytes, as every bundle written before the scheme existed.
   */
  digests: DigestDeclarationSchema.optional(),
});
export type BundleManifest = z.infer<typeof BundleManifestSchema>;

function manifestSchemaFor(kind: BundleKind) {
  return BundleManifestSchema.extend({ provenance: provenanceSchemaFor(kind) });
}

// ---- parsing ------------------------------------------------------------------------------

/** Parses manifest.json text; `file` is how messages name it. */
export function parseManifestJson(text: string, file: string): BundleManifest {
  return parseManifest(manifestJsonValue(text, file), file);
}

/** The JSON value of a manifest's text, not yet validated (E_MANIFEST_JSON when it is not JSON). */
export function manifestJsonValue(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new BundleError('E_MANIFEST_JSON', file, '(root)', `not valid JSON: ${detail}`, { cause });
  }
}

/**
 * Validates a parsed manifest: identity (schema name and version) first, then the whole schema
 * (every issue reported, provenance issues first and as E_PROVENANCE), then the semantic rules.
 */
export function parseManifest(raw: unknown, file: string): BundleManifest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new BundleError('E_MANIFEST_SCHEMA', file, '(root)', 'expected a JSON object');
  }
  const top = raw as Record<string, unknown>;
  if (top['schema'] !== BUNDLE_SCHEMA_NAME) {
    throw new BundleError('E_SCHEMA_NAME', file, 'schema', `expected "${BUNDLE_SCHEMA_NAME}", found ${describe(top['schema'])}`);
  }
  if (top['schema_version'] !== BUNDLE_SCHEMA_VERSION) {
    throw new BundleError(
      'E_SCHEMA_VERSION',
      file,
      'schema_version',
      `expected ${BUNDLE_SCHEMA_VERSION} (the version this reader speaks), found ${describe(top['schema_version'])}`,
    );
  }
  const kind = BundleKindSchema.safeParse(top['kind']);
  if (!kind.success) {
    throw new BundleError('E_MANIFEST_SCHEMA', file, 'kind', `expected one of ${BUNDLE_KINDS.join(', ')}, found ${describe(top['kind'])}`);
  }

  // Absent provenance objects are replaced by {} so that every missing leaf is named, not
  // just the first missing object.
  const withSkeleton = withProvenanceSkeleton(top);
  const entries = entryIssues(withSkeleton);
  if (entries.stoppedAt !== null) {
    throw BundleError.fromIssues(file, [
      ...entries.issues,
      {
        code: 'E_MANIFEST_SCHEMA',
        field: '(more)',
        message: `and more problems: checking stopped at ${entries.stoppedAt} after the first ${entries.issues.length} (of ${entries.entries} list entries)`,
      },
    ]);
  }
  // Every list entry was parsed above: the schema parses the rest, with the lists' entries taken
  // out (a list that is not an array is left for it to name), and they go back in, parsed.
  // With an entry refused, it parses the whole manifest, so its issues come in its own order.
  const lists = entries.issues.length === 0 ? entries.parsed : null;
  const rest = lists === null ? withSkeleton : { ...withSkeleton, ...emptied(lists) };
  const parsed = manifestSchemaFor(kind.data).safeParse(rest);
  if (!parsed.success) throw schemaError(issuesFromZod(parsed.error, rest, 'E_MANIFEST_SCHEMA', [], manifestSchemaFor(kind.data)), file);
  const manifest: BundleManifest = lists === null ? parsed.data : { ...parsed.data, ...(lists as Partial<BundleManifest>) };
  const problems = semanticIssues(manifest);
  if (problems.length > 0) throw BundleError.fromIssues(file, problems);
  shareRepeatedValues(manifest);
  return manifest;
}

/**
 * Makes every boundary entry's name, stage, dtype and layout one string per distinct value, and
 * its shape and strides one array per distinct list of extents. JSON.parse gives each occurrence
 * a string and an array of its own, and a long run repeats the same few hundred names and shapes
 * in every pass: the 10 GiB scale trace's two manifests held 330,000 such strings (11 MB of the
 * gate process's heap while it judges, a heap snapshot) and 163,600 such arrays (about 9 MB).
 * Same values, fewer copies. A shared array is frozen: an entry's shape is never written to, and
 * a write would otherwise change every entry sharing it.
 */
function shareRepeatedValues(manifest: BundleManifest): void {
  const strings = new Map<string, string>();
  const one = (value: string): string => {
    const earlier = strings.get(value);
    if (earlier !== undefined) return earlier;
    strings.set(value, value);
    return value;
  };
  const lists = new Map<string, number[]>();
  const oneList = (value: number[]): number[] => {
    const key = numberListKey(value);
    const earlier = lists.get(key);
    if (earlier !== undefined) return earlier;
    lists.set(key, Object.freeze(value) as number[]);
    return value;
  };
  for (const pass of manifest.passes) {
    for (const entry of pass.boundaries) {
      entry.name = one(entry.name);
      entry.stage = one(entry.stage);
      entry.dtype = one(entry.dtype) as typeof entry.dtype;
      entry.layout = one(entry.layout) as typeof entry.layout;
      entry.shape = oneList(entry.shape);
      entry.strides = oneList(entry.strides);
    }
  }
}

/** Problems listed at most in one error; past it, a count. */
export const MAX_REPORTED_ISSUES = 100;

/** The list fields entryIssues parses entry by entry: each the parsed entries, when the field is an array. */
type ParsedLists = Partial<Record<'inputs' | 'known_gaps' | 'files' | 'passes', unknown[]>>;

/** `lists` with every entry taken out (the schema then checks only that each is an array). */
function emptied(lists: ParsedLists): ParsedLists {
  const out: ParsedLists = {};
  for (const key of Object.keys(lists) as (keyof ParsedLists)[]) out[key] = [];
  return out;
}

const NESTED_ENTRY_SCHEMAS: NestedEntrySchemas = { valid: ValidRegionSchema, contract: ContractSchema, chunks: ChunkDigestsSchema };

/**
 * Checks the list entries (inputs, known gaps, files, passes and their boundaries) one at a
 * time, keeping the first MAX_REPORTED_ISSUES problems and stopping at the next one. zod gathers the
 * issues of nested arrays by spreading them into their parent's list, which overflows the stack
 * on a manifest with ~10^5 invalid entries: such a manifest is refused here, before the whole
 * schema is parsed. The entries parsed are returned too: when none is refused the whole schema
 * need not walk them again (a 50k-row run's manifest was validated twice over).
 */
function entryIssues(top: Readonly<Record<string, unknown>>): { issues: BundleIssue[]; stoppedAt: string | null; entries: number; parsed: ParsedLists } {
  const issues: BundleIssue[] = [];
  let stoppedAt: string | null = null;
  let entries = 0;
  const parsed: ParsedLists = {};
  const contracts: ContractsSeen = new Map();
  /**
   * Checks one entry: its parsed value, or undefined when it is refused (its issues recorded);
   * null once more than MAX_REPORTED_ISSUES problems were found (the caller stops).
   */
  const check = (schema: z.ZodType, value: unknown, path: readonly PropertyKey[]): unknown => {
    if (stoppedAt !== null) return null;
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of issuesFromZod(result.error, value, 'E_MANIFEST_SCHEMA', path, schema)) {
      if (issues.length === MAX_REPORTED_ISSUES) {
        stoppedAt = formatFieldPath(path);
        return null;
      }
      issues.push(issue);
    }
    return undefined;
  };
  const each = (key: 'inputs' | 'known_gaps' | 'files', schema: z.ZodType): void => {
    const list = top[key];
    if (!Array.isArray(list)) return;
    entries += list.length;
    const out: unknown[] = [];
    for (let i = 0; i < list.length; i++) {
      const entry = check(schema, list[i], [key, i]);
      if (entry === null) break;
      out.push(entry);
    }
    parsed[key] = out;
  };
  each('inputs', InputEntrySchema);
  each('known_gaps', KnownGapSchema);
  each('files', FileEntrySchema);
  const passes = top['passes'];
  if (Array.isArray(passes)) {
    entries += passes.length;
    const out: unknown[] = [];
    for (let p = 0; p < passes.length && stoppedAt === null; p++) {
      const pass: unknown = passes[p];
      const boundaries = pass !== null && typeof pass === 'object' ? (pass as Record<string, unknown>)['boundaries'] : undefined;
      if (!Array.isArray(boundaries)) {
        out.push(check(PassEntrySchema, pass, ['passes', p]));
        continue;
      }
      entries += boundaries.length;
      const entry = check(PassEntrySchema, { ...(pass as Record<string, unknown>), boundaries: [] }, ['passes', p]);
      const parsedBoundaries: unknown[] = [];
      for (let b = 0; b < boundaries.length; b++) {
        // Most entries are told valid by the fast check; the rest (and every refusal's message) are zod's.
        const boundary =
          checkedBoundaryEntry(boundaries[b], NESTED_ENTRY_SCHEMAS, contracts) ?? check(BoundaryEntrySchema, boundaries[b], ['passes', p, 'boundaries', b]);
        if (boundary === null) break;
        parsedBoundaries.push(boundary);
      }
      out.push(entry !== null && typeof entry === 'object' ? { ...entry, boundaries: parsedBoundaries } : entry);
    }
    parsed.passes = out;
  }
  return { issues, stoppedAt, entries, parsed };
}

/**
 * One error for schema issues: when any concerns provenance the code is E_PROVENANCE and those
 * issues come first (a bundle that cannot prove where it came from is rejected for that).
 */
export function schemaError(issues: readonly BundleIssue[], file: string): BundleError {
  const isProvenance = (issue: BundleIssue): boolean => issue.field === 'provenance' || issue.field.startsWith('provenance.');
  const provenance = issues.filter(isProvenance);
  if (provenance.length === 0) return BundleError.fromIssues(file, issues, 'E_MANIFEST_SCHEMA');
  const marked = provenance.map((issue): BundleIssue => ({ ...issue, code: 'E_PROVENANCE' }));
  return BundleError.fromIssues(file, [...marked, ...issues.filter((issue) => !isProvenance(issue))], 'E_PROVENANCE');
}

/** `top` with absent provenance objects replaced by {}, so zod names each missing leaf. */
export function withProvenanceSkeleton(top: Record<string, unknown>): Record<string, unknown> {
  const provenance = top['provenance'];
  if (provenance === undefined) return { ...top, provenance: { model: {}, generator: {}, runtime: {} } };
  if (provenance === null || typeof provenance !== 'object' || Array.isArray(provenance)) return top;
  const filled: Record<string, unknown> = { ...(provenance as Record<string, unknown>) };
  for (const part of ['model', 'generator', 'runtime']) if (filled[part] === undefined) filled[part] = {};
  return { ...top, provenance: filled };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  return JSON.stringify(value) ?? String(value);
}

// ---- semantic rules ------------------------------------------------------------------------

class IssueList {
  readonly items: BundleIssue[] = [];
  add(code: BundleErrorCode, path: readonly PropertyKey[], message: string): void {
    this.items.push({ code, field: formatFieldPath(path), message });
  }
}

function semanticIssues(manifest: BundleManifest): BundleIssue[] {
  const out = new IssueList();
  const needsContracts = manifest.kind !== 'native';
  const listedFiles = checkFileList(manifest, out);
  const useFile = (path: readonly PropertyKey[], file: string): void => {
    const problem = checkBundlePath(file);
    if (problem !== null) out.add(problem.code, path, problem.message);
    else if (!listedFiles.has(file)) out.add('E_FILE_UNLISTED', path, `"${file}" is not listed in files[], so its digest cannot be verified`);
  };

  const inputNames = new Set<string>();
  const keysByFile = new Map<string, Set<string>>();
  const claimKey = (path: readonly PropertyKey[], file: string, key: string): void => {
    const keys = keysByFile.get(file) ?? new Set<string>();
    keysByFile.set(file, keys);
    if (keys.has(key)) out.add('E_DUPLICATE_NAME', path, `tensor key "${key}" of ${file} is used twice`);
    keys.add(key);
  };
  manifest.inputs.forEach((input, i) => {
    if (inputNames.has(input.name)) out.add('E_DUPLICATE_NAME', ['inputs', i, 'name'], `input "${input.name}" is listed twice`);
    inputNames.add(input.name);
    useFile(['inputs', i, 'file'], input.file);
    claimKey(['inputs', i, 'key'], input.file, input.key);
  });

  const inputFiles = new Set(manifest.inputs.map((input) => input.file));
  const passFiles = new Set<string>();
  manifest.passes.forEach((pass, p) => {
    if (pass.index !== p) out.add('E_PASS_ORDER', ['passes', p, 'index'], `expected ${p}: passes are listed in order, indices 0..n-1`);
    const expectedKind = p === 0 ? 'prefill' : 'decode';
    if (pass.kind !== expectedKind) {
      out.add('E_PASS_ORDER', ['passes', p, 'kind'], `expected "${expectedKind}": pass 0 is the prefill, every later pass a decode`);
    }
    useFile(['passes', p, 'file'], pass.file);
    if (passFiles.has(pass.file) || inputFiles.has(pass.file)) {
      out.add('E_DUPLICATE_NAME', ['passes', p, 'file'], `"${pass.file}" is already used by another pass or by the inputs`);
    }
    passFiles.add(pass.file);
    const names = new Set<string>();
    pass.boundaries.forEach((boundary, b) => {
      const at = ['passes', p, 'boundaries', b];
      if (names.has(boundary.name)) out.add('E_DUPLICATE_BOUNDARY', [...at, 'name'], `boundary "${boundary.name}" appears twice in pass ${p}`);
      names.add(boundary.name);
      claimKey([...at, 'key'], pass.file, boundary.key);
      checkBoundaryTensor(boundary, at, out);
      checkTreeChunks(manifest, boundary, at, out);
      checkAudioBounds(boundary, at, out);
      if (audioBoundsOf(boundary.contract) !== null && manifest.audio !== undefined && !Object.hasOwn(manifest.audio, boundary.name)) {
        out.add(
          'E_CONTRACT',
          [...at, 'contract', 'audio'],
          `audio bounds on "${boundary.name}", which the manifest's "audio" map does not declare: declare it with its sample rate`,
        );
      }
      if (needsContracts && boundary.contract === null) {
        out.add('E_CONTRACT', [...at, 'contract'], `a ${manifest.kind} bundle declares bit_exact or faithful for every boundary`);
      }
    });
  });

  checkAudioDeclarations(manifest, out);

  const gapIds = new Set<string>();
  manifest.known_gaps.forEach((gap, g) => {
    if (gapIds.has(gap.id)) out.add('E_DUPLICATE_NAME', ['known_gaps', g, 'id'], `gap id "${gap.id}" is declared twice`);
    gapIds.add(gap.id);
    gap.passes.forEach((index, i) => {
      if (index >= manifest.passes.length) {
        out.add('E_PASS_ORDER', ['known_gaps', g, 'passes', i], `pass ${index} does not exist (the bundle has ${manifest.passes.length})`);
      }
    });
  });

  if (manifest.kind === 'native' && (manifest.run === undefined || manifest.run === null)) {
    out.add('E_RUN', ['run'], 'a native bundle records how its run ended (status, message, last_pass, last_boundary)');
  }
  return out.items;
}

function checkFileList(manifest: BundleManifest, out: IssueList): Set<string> {
  const listed = new Set<string>();
  manifest.files.forEach((entry, f) => {
    const problem = checkBundlePath(entry.path);
    if (problem !== null) out.add(problem.code, ['files', f, 'path'], problem.message);
    if (listed.has(entry.path)) out.add('E_DUPLICATE_NAME', ['files', f, 'path'], `"${entry.path}" is listed twice`);
    if (entry.path === MANIFEST_FILE_NAME) out.add('E_PATH_INVALID', ['files', f, 'path'], 'manifest.json cannot list itself');
    listed.add(entry.path);
  });
  return listed;
}

function checkBoundaryTensor(boundary: BoundaryEntry, at: readonly PropertyKey[], out: IssueList): void {
  const { dtype, shape, strides } = boundary;
  const expectedBytes = elementCount(shape) * DTYPE_SIZE[dtype];
  if (boundary.byte_length !== expectedBytes) {
    out.add(
      'E_BYTE_LENGTH',
      [...at, 'byte_length'],
      `expected ${expectedBytes} (${elementCount(shape)} elements of ${dtype} x ${DTYPE_SIZE[dtype]} bytes for shape [${shape.join(', ')}]), found ${boundary.byte_length}`,
    );
  }
  const chunkProblem = boundary.chunks === undefined ? null : chunkListProblem(boundary.chunks, boundary.byte_length);
  if (chunkProblem !== null) out.add('E_BYTE_LENGTH', [...at, 'chunks', 'sha256'], chunkProblem);
  if (strides.length !== shape.length) {
    out.add('E_SHAPE', [...at, 'strides'], `has ${strides.length} entries but shape [${shape.join(', ')}] has rank ${shape.length}`);
  } else {
    const layout = isRowMajor(shape, strides) ? 'row-major' : 'strided';
    if (boundary.layout !== layout) {
      out.add('E_LAYOUT', [...at, 'layout'], `expected "${layout}" for strides [${strides.join(', ')}] of shape [${shape.join(', ')}]`);
    }
  }
  if (boundary.valid !== null) {
    const { axis, length } = boundary.valid;
    const extent = shape[axis];
    if (extent === undefined) out.add('E_SHAPE', [...at, 'valid', 'axis'], `axis ${axis} does not exist in shape [${shape.join(', ')}]`);
    else if (length > extent) out.add('E_SHAPE', [...at, 'valid', 'length'], `${length} exceeds the extent ${extent} of axis ${axis}`);
  }
}

/**
 * Under the tree scheme a boundary's chunk list is the leaves of its digest: same chunk size as
 * declared, and the list must hash to the tensor's sha256, so a range read that checks only its
 * chunks is bound to the tensor's digest (a list edited to match edited bytes is caught here).
 */
function checkTreeChunks(manifest: BundleManifest, boundary: BoundaryEntry, at: readonly PropertyKey[], out: IssueList): void {
  const declared = manifest.digests;
  const chunks = boundary.chunks;
  if (declared === undefined || chunks === undefined) return;
  if (chunks.bytes !== declared.chunk_bytes) {
    out.add('E_MANIFEST_SCHEMA', [...at, 'chunks', 'bytes'], `is ${chunks.bytes}; the manifest's digests declare chunks of ${declared.chunk_bytes} bytes`);
    return;
  }
  if (chunkListProblem(chunks, boundary.byte_length) !== null) return; // named by checkBoundaryTensor
  const root = segmentDigest(boundary.byte_length, chunks.bytes, chunks.sha256);
  if (root !== boundary.sha256) {
    out.add(
      'E_DIGEST',
      [...at, 'chunks', 'sha256'],
      `the chunk digests make the tensor digest ${root}, the boundary's sha256 is ${boundary.sha256} (the list or the digest was edited)`,
    );
  }
}

const PCM_DTYPES: readonly string[] = ['F32', 'F64', 'F16', 'BF16'];

/** A declared audio boundary is recorded, and every record is one-dimensional float PCM. */
function checkAudioDeclarations(manifest: BundleManifest, out: IssueList): void {
  for (const name of Object.keys(manifest.audio ?? {})) {
    let recorded = false;
    let reported = false;
    manifest.passes.forEach((pass, p) => {
      const entry = pass.boundaries.find((candidate) => candidate.name === name);
      if (entry === undefined || reported) return;
      recorded = true;
      reported = true;
      if (!PCM_DTYPES.includes(entry.dtype) || entry.shape.length !== 1) {
        out.add(
          'E_SHAPE',
          ['audio', name],
          `declared audio, but pass ${p} records "${name}" as ${entry.dtype} [${entry.shape.join(', ')}]: audio is a one-dimensional float boundary (F32, F64, F16 or BF16)`,
        );
      } else if (entry.valid !== null && entry.valid.axis !== 0) {
        out.add('E_SHAPE', ['audio', name], `declared audio, but pass ${p} declares its valid region on axis ${entry.valid.axis} (audio needs axis 0)`);
      } else {
        reported = false;
      }
    });
    if (!recorded) out.add('E_BOUNDARY_MISSING', ['audio', name], `declared audio, but no pass records a boundary "${name}"`);
  }
}

/** The audio bounds of a contract (only a faithful contract has them), or null. */
export function audioBoundsOf(contract: Contract | null | undefined): AudioBounds | null {
  return contract != null && contract.kind === 'faithful' && contract.audio !== undefined ? contract.audio : null;
}

/** Audio bounds need PCM (one-dimensional F32, valid samples a prefix) and must bound something. */
function checkAudioBounds(boundary: BoundaryEntry, at: readonly PropertyKey[], out: IssueList): void {
  const audio = audioBoundsOf(boundary.contract);
  if (audio === null) return;
  const field = [...at, 'contract', 'audio'];
  if (boundary.dtype !== 'F32' || boundary.shape.length !== 1) {
    out.add(
      'E_CONTRACT',
      field,
      `audio bounds need a one-dimensional F32 PCM boundary; "${boundary.name}" is ${boundary.dtype} [${boundary.shape.join(', ')}]`,
    );
  } else if (boundary.valid !== null && boundary.valid.axis !== 0) {
    out.add('E_CONTRACT', field, `audio bounds need the valid samples on axis 0; "${boundary.name}" declares axis ${boundary.valid.axis}`);
  }
  if (AUDIO_BOUND_NAMES.every((name) => audio[name] === null)) {
    out.add('E_CONTRACT', field, `bounds nothing: set at least one of ${AUDIO_BOUND_NAMES.join(', ')}, or leave "audio" out`);
  }
}

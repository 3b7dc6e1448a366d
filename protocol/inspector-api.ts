// The one typed API between the renderer and the core. Both hosts implement it: the Electron
// preload over IPC, and serve mode over a WebSocket. Every method is a (request schema,
// response schema) pair in INSPECTOR_METHODS; both ends validate what crosses with zod, so the
// renderer cannot tell which host it has, and neither end trusts the other's bytes.
//
// Numbers that may be non-finite (errors, ULP distances, dB levels) travel as WireNumber:
// a finite number, or one of the strings "NaN", "Infinity", "-Infinity" (JSON has no
// non-finite numbers; IPC would carry them, the WebSocket would turn them into null).
import { z } from 'zod';
import { columnIssues } from './row-columns-check.ts';

// ---- primitives ----------------------------------------------------------------------------

export const WireNumberSchema = z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity'])]);
export type WireNumber = z.infer<typeof WireNumberSchema>;

export function toWire(value: number): WireNumber {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return value;
}

export function fromWire(value: WireNumber): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return NaN;
  return value === 'Infinity' ? Infinity : -Infinity;
}

const Int = z.number().int();
const NonNegInt = z.number().int().nonnegative();
const PassKindSchema = z.enum(['prefill', 'decode']);
export const VerdictSchema = z.enum(['PASS', 'FAIL', 'GAP', 'KNOWN_GAP', 'REVIEW_REQUIRED']);
export type WireVerdict = z.infer<typeof VerdictSchema>;
export const OracleChoiceSchema = z.enum(['reference', 'fp64']);
export type OracleChoice = z.infer<typeof OracleChoiceSchema>;
export const IsolationModeSchema = z.enum(['process', 'thread']);
/** Base64 of little-endian bytes (PCM as float32, WAV files, heatmap cells). */
const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/);

// ---- session snapshot ------------------------------------------------------------------------

export const EngineInfoSchema = z.object({
  library: z.string(),
  name: z.string(),
  version: z.string(),
  buildId: z.string(),
  sha256: z.string(),
  abiVersion: Int,
  boundaryCount: NonNegInt,
});
export type EngineInfo = z.infer<typeof EngineInfoSchema>;

export const BundleInfoSchema = z.object({
  dir: z.string(),
  /** reference (a PyTorch run), oracle-f64, or native (an engine's capture: engine against engine). */
  kind: z.enum(['reference', 'oracle-f64', 'native']),
  caseId: z.string(),
  description: z.string(),
  precision: z.string(),
  /** "implementation @ revision" of the generator that made the bundle. */
  generator: z.string(),
  createdAt: z.string(),
  passCount: NonNegInt,
  boundaryCount: NonNegInt,
  /** The oracle judged beside it, when there is one: the case's fp64 oracle found beside a reference bundle, or a bundle set with setOracleBundle. */
  oracleDir: z.string().nullable(),
  oracleKind: z.enum(['reference', 'oracle-f64', 'native']).nullable(),
});
export type BundleInfo = z.infer<typeof BundleInfoSchema>;

export const TimelinePassSchema = z.object({
  index: NonNegInt,
  kind: PassKindSchema,
  /** pending: not run yet; done: ran and was judged; failed: engine error; crashed / timeout: the run ended there. */
  state: z.enum(['pending', 'done', 'failed', 'crashed', 'timeout']),
  /** Verdict counts of this pass's boundaries (all zero while pending). */
  counts: z.record(VerdictSchema, NonNegInt),
});
export type TimelinePass = z.infer<typeof TimelinePassSchema>;

export const SessionErrorSchema = z.object({
  id: NonNegInt,
  /** ISO time. */
  at: z.string(),
  /** What was being done: "open engine", "open bundle", "pass 3 (decode)", "export receipt"... */
  action: z.string(),
  /** The specific message: names the file and the field, the pass and the boundary. */
  message: z.string(),
});
export type SessionError = z.infer<typeof SessionErrorSchema>;

export const BoundaryRefSchema = z.object({ pass: NonNegInt, boundary: z.string() });
export type BoundaryRef = z.infer<typeof BoundaryRefSchema>;

/**
 * What a comparison is judged under, as `trace-inspector compare` takes it from its flags: the
 * contracts file (--contracts), the default contract (--contract bit_exact; everyBoundary is
 * --baseline) and the map file (--map), with what the map did to the opened run.
 */
export const ComparisonInfoSchema = z.object({
  /** Where the rows' contracts come from (null: no bundle open). */
  contracts: z
    .object({
      kind: z.enum(['manifest', 'file', 'default', 'all_bit_exact']),
      file: z.string().nullable(),
      sha256: z.string().nullable(),
      description: z.string(),
    })
    .nullable(),
  contractsFile: z.object({ path: z.string(), name: z.string(), sha256: z.string(), rules: NonNegInt }).nullable(),
  defaultContract: z.object({ contract: z.literal('bit_exact'), everyBoundary: z.boolean() }),
  mapFile: z.object({ path: z.string(), name: z.string(), sha256: z.string(), entries: NonNegInt }).nullable(),
  /** What the map file did to the opened run (null: no map, or no run opened). Nothing it takes out goes unlisted. */
  map: z
    .object({
      mapped: z.array(z.object({ candidate: z.string(), reference: z.string(), transform: z.string().nullable(), passes: NonNegInt })),
      /** Declared unmapped on purpose: never compared, listed here with the file's reason. */
      unmapped: z.array(z.object({ candidate: z.string(), reason: z.string(), passes: NonNegInt })),
      /** Matched by no entry: kept under their own name (inReference: the reference has that name). */
      uncovered: z.array(z.object({ candidate: z.string(), inReference: z.boolean(), passes: NonNegInt })),
      /** Entries that matched no boundary of the run (a typo hides nothing). */
      unusedEntries: z.array(z.string()),
    })
    .nullable(),
});
export type ComparisonInfo = z.infer<typeof ComparisonInfoSchema>;

export const SessionSnapshotSchema = z.object({
  engine: EngineInfoSchema.nullable(),
  bundle: BundleInfoSchema.nullable(),
  /** A previously captured bundle (any kind) opened for comparison instead of a live engine, or null. */
  openedRun: z.string().nullable(),
  /** The kind of the opened run's bundle, or null. */
  openedRunKind: BundleInfoSchema.shape.kind.nullable(),
  comparison: ComparisonInfoSchema,
  oracle: OracleChoiceSchema,
  isolation: IsolationModeSchema,
  teacherForce: z.boolean(),
  /** Engine options set before prefill (knobs, perturbations). */
  engineOptions: z.record(z.string(), z.string()),
  timeline: z.array(TimelinePassSchema),
  /** The next pass Step would run, null when every pass ran or the run ended. */
  nextPass: NonNegInt.nullable(),
  run: z.object({
    status: z.enum(['idle', 'running', 'completed', 'engine_error', 'crashed', 'timeout']),
    message: z.string(),
  }),
  /** Non-null while an operation runs: its name ("prefill", "run to end", "layer isolation"...). */
  busy: z.string().nullable(),
  /** Bumped whenever the boundary rows change; the renderer refetches rows when it moves. */
  rowsVersion: NonNegInt,
  rowCount: NonNegInt,
  counts: z.record(VerdictSchema, NonNegInt),
  /** The first FAIL / REVIEW_REQUIRED in execution order. */
  firstDivergence: BoundaryRefSchema.nullable(),
  errors: z.array(SessionErrorSchema),
  recent: z.object({ engines: z.array(z.string()), bundles: z.array(z.string()) }),
  /** Where native bundles of this session are written. */
  workDir: z.string(),
});
export type SessionSnapshot = z.infer<typeof SessionSnapshotSchema>;

// ---- boundary rows -----------------------------------------------------------------------

export const MismatchClassSchema = z.enum(['value', 'nan_vs_number', 'nan_payload', 'inf_sign', 'signed_zero', 'tie_order', 'padding']);
export type WireMismatchClass = z.infer<typeof MismatchClassSchema>;

export const BoundaryRowSchema = z.object({
  /** `${pass}:${boundary}`, unique in the session. */
  id: z.string(),
  /** Execution order over the whole run (pass, then the engine's catalogue order). */
  order: NonNegInt,
  pass: NonNegInt,
  passKind: PassKindSchema,
  boundary: z.string(),
  stage: z.string(),
  dtype: z.string(),
  shape: z.array(NonNegInt),
  /** "bit_exact" or e.g. "faithful abs 1e-6 rel 1e-5 ulp 2" (with "oracle_rel 1e-3" when set). */
  contract: z.string(),
  contractKind: z.enum(['bit_exact', 'faithful', 'none']),
  verdict: VerdictSchema,
  /** Failure kind (a mismatch class, a structural problem, unreadable) or null. */
  kind: z.string().nullable(),
  /** The gate's one-sentence reason. */
  reason: z.string(),
  /** Null when not compared. */
  maxAbs: WireNumberSchema.nullable(),
  maxUlp: WireNumberSchema.nullable(),
  mismatches: NonNegInt,
  elements: NonNegInt,
  /** Special values present on either side, and a tie-order analysis that found a tie group. */
  badges: z.object({ nan: z.boolean(), inf: z.boolean(), negZero: z.boolean(), tie: z.boolean() }),
  firstDivergence: z.boolean(),
  /**
   * A PCM stream the audio panel can play: the reference records it as one-dimensional F32 in
   * every pass that records it, and marks it as audio (audio bounds in its contract, a `valid`
   * region on axis 0, or a `*.pcm` name). Decided by main/core/audio/pcm-boundary.ts.
   */
  pcm: z.boolean(),
});
export type BoundaryRow = z.infer<typeof BoundaryRowSchema>;

/**
 * A dictionary-coded column of getRows: row i's value is `values[code_i]`, the codes being
 * base64 of little-endian unsigned integers, the narrowest of u8 / u16 / u32 that can index
 * `values` (u8 up to 256 values, u16 up to 65536; row-columns-check.ts codeWidth).
 */
const coded = <T extends z.ZodType>(value: T) => z.object({ values: z.array(value), codes: Base64 });

/**
 * getRows' rows as columns (protocol/rows-columns.ts reads them into BoundaryRows). 50k rows as
 * JSON objects were 22 MiB that took ~1 s to parse, validate and collect in the renderer; as
 * columns they are ~40 B a row and zod checks arrays of primitives (the dictionaries) plus one
 * pass over the codes. A row's `id` is `${pass}:${boundary}` and its `order` is start + i, so
 * neither travels.
 */
export const RowColumnsSchema = z.object({
  pass: coded(NonNegInt),
  passKind: coded(PassKindSchema),
  boundary: coded(z.string()),
  stage: coded(z.string()),
  dtype: coded(z.string()),
  shape: coded(z.array(NonNegInt)),
  contract: coded(z.string()),
  contractKind: coded(BoundaryRowSchema.shape.contractKind),
  verdict: coded(VerdictSchema),
  kind: coded(z.string().nullable()),
  reason: coded(z.string()),
  mismatches: coded(NonNegInt),
  elements: coded(NonNegInt),
  /** Base64 of little-endian float64 per row (NaN and the infinities as themselves); 0 where the row's measured flag is clear (its value is null). */
  maxAbs: Base64,
  maxUlp: Base64,
  /**
   * Base64, one byte per row: 1 badges.nan, 2 badges.inf, 4 badges.negZero, 8 badges.tie,
   * 16 firstDivergence, 32 pcm, 64 maxAbs measured, 128 maxUlp measured (row-columns-check.ts ROW_FLAGS).
   */
  flags: Base64,
});
export type RowColumns = z.infer<typeof RowColumnsSchema>;

export const RowsReplySchema = z
  .object({
    rowsVersion: NonNegInt,
    mode: z.enum(['full', 'append']),
    /** The `order` of the first row sent: 0 for 'full', the number of rows the client holds for 'append'. */
    start: NonNegInt,
    /** Rows sent, in execution order. */
    count: NonNegInt,
    columns: RowColumnsSchema,
  })
  .superRefine((reply, ctx) => {
    // Lengths and codes are checked here so a short column or a code outside its dictionary is
    // refused at the edge (on both ends), never read as a wrong row.
    for (const issue of columnIssues(reply)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
export type RowsReply = z.infer<typeof RowsReplySchema>;

// ---- tensor views ------------------------------------------------------------------------

export const HeatmapMetricSchema = z.enum(['abs_diff', 'ulp', 'reference', 'native']);
export type HeatmapMetric = z.infer<typeof HeatmapMetricSchema>;

/** Rows x cols of the logical tensor: the last dimension is the columns, the others fold into rows. */
const Window = z.object({ row0: NonNegInt, row1: NonNegInt, col0: NonNegInt, col1: NonNegInt });

export const TensorViewRequestSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  metric: HeatmapMetricSchema,
  /** Half-open window of the folded 2-D view; default the whole tensor. */
  window: Window.optional(),
  /** Grid size the pooled view may have at most (the renderer's pixel budget). */
  maxRows: z.number().int().min(1).max(4096),
  maxCols: z.number().int().min(1).max(4096),
});
export type TensorViewRequest = z.infer<typeof TensorViewRequestSchema>;

/** Bytes per cell of each encoding of TensorView.values and TensorView.argmax. */
export const CELL_VALUE_BYTES = { f32: 4, f64: 8 } as const;
export const ARGMAX_BYTES = { u8_offset: 1, u16_offset: 2, u32_offset: 4, f64_index: 8 } as const;

/** Decoded length of canonical (padded) base64, or null when the length cannot be base64. */
function base64ByteLength(base64: string): number | null {
  if (base64.length % 4 !== 0) return null;
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

export const TensorViewSchema = z
  .object({
    pass: NonNegInt,
    boundary: z.string(),
    metric: HeatmapMetricSchema,
    dtype: z.string(),
    shape: z.array(NonNegInt),
    folded: z.object({ rows: NonNegInt, cols: NonNegInt }),
    window: Window,
    /** The pooled grid: each cell covers rowStep x colStep elements of the window. */
    grid: z.object({ rows: NonNegInt, cols: NonNegInt, rowStep: z.number().int().min(1), colStep: z.number().int().min(1) }),
    /**
     * Row-major cells, base64 of little-endian floats (a million cells as JSON numbers were
     * ~30 MB; as float32 they are 5.3 MB of base64). abs_diff / ulp: the max over the cell
     * (max-pooling keeps the worst visible); reference / native: the value of largest magnitude
     * in the cell. NaN: the cell holds a NaN (listed in nanCells too) or nothing. +-Infinity only
     * when the value is infinite.
     *
     * 'f32' unless a finite cell value lies outside float32's range (beyond 3.4e38 it would turn
     * into Infinity; nonzero below 2^-126 it would lose its digits or flush to an "exact" 0; e.g.
     * an f64 tensor's diffs): then the whole grid is 'f64', so a value is never misrepresented.
     * Within range float32 keeps 24 bits (ULP counts above 2^24 round): enough for a colour and a
     * hover; the exact value is one click away in the bit inspector (getElement).
     */
    values: z.object({ format: z.enum(['f32', 'f64']), data: Base64 }),
    /**
     * Where each cell's max is, for the bit inspector: base64 of little-endian unsigned offsets,
     * the narrowest that holds every offset of a rowStep x colStep cell — 'u8_offset' when
     * rowStep * colStep <= 2^8, 'u16_offset' <= 2^16, 'u32_offset' <= 2^32 (always, for tensors of
     * at most 2^32 elements); 'f64_index' beyond that: the flat index itself (exact up to 2^53).
     * An offset o is the element's place in its cell, o = dr * colStep + dc; the flat index
     * (row-major over the tensor) of cell (r, c), r = floor(cell / grid.cols), c = cell % grid.cols, is
     *   (window.row0 + r * rowStep + dr) * folded.cols + window.col0 + c * colStep + dc,
     * with dr = floor(o / colStep), dc = o % colStep (protocol/tensor-view-codec.ts decodes it).
     * A NaN cell points at its first NaN; a cell with nothing pooled at its origin.
     */
    argmax: z.object({ format: z.enum(['u8_offset', 'u16_offset', 'u32_offset', 'f64_index']), data: Base64 }),
    /** Cells holding a NaN on either side / an infinity on either side. */
    nanCells: z.array(NonNegInt),
    infCells: z.array(NonNegInt),
    /** Over the window: the largest finite cell value. */
    max: WireNumberSchema,
  })
  .superRefine((view, ctx) => {
    // Checked here so a short or long buffer is refused at the edge, never misread as cells.
    const cells = view.grid.rows * view.grid.cols;
    const check = (field: 'values' | 'argmax', bytes: number | null, width: number): void => {
      if (bytes !== cells * width)
        ctx.addIssue({ code: 'custom', path: [field, 'data'], message: `expected ${cells} cells of ${width} bytes, got ${bytes ?? 'malformed'} bytes` });
    };
    check('values', base64ByteLength(view.values.data), CELL_VALUE_BYTES[view.values.format]);
    check('argmax', base64ByteLength(view.argmax.data), ARGMAX_BYTES[view.argmax.format]);
    const outside = [...view.nanCells, ...view.infCells].find((cell) => cell >= cells);
    if (outside !== undefined) ctx.addIssue({ code: 'custom', path: ['nanCells'], message: `cell ${outside} is outside the ${cells}-cell grid` });
  });
export type TensorView = z.infer<typeof TensorViewSchema>;

export const SeriesRequestSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  /** Half-open element range of the flattened tensor; default everything. */
  start: NonNegInt.optional(),
  end: NonNegInt.optional(),
  maxPoints: z.number().int().min(2).max(100_000),
});
export type SeriesRequest = z.infer<typeof SeriesRequestSchema>;

/** A 1-D view, min/max pooled per bucket so spikes survive downsampling. */
export const SeriesSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  start: NonNegInt,
  end: NonNegInt,
  /** Elements per bucket (1: raw values). */
  step: z.number().int().min(1),
  reference: z.object({ min: z.array(WireNumberSchema), max: z.array(WireNumberSchema) }),
  native: z.object({ min: z.array(WireNumberSchema), max: z.array(WireNumberSchema) }),
  /** Max |native - reference| per bucket. */
  absDiff: z.array(WireNumberSchema),
});
export type Series = z.infer<typeof SeriesSchema>;

export const ErrorStatsSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  /** Histogram of log10 |native - reference| over finite pairs with a nonzero difference. */
  histogram: z.object({ edges: z.array(z.number()), counts: z.array(NonNegInt) }),
  exactlyEqual: NonNegInt,
  nonFinitePairs: NonNegInt,
  /** Error vs magnitude: |reference| against |diff|, a sample that always keeps the worst elements. */
  scatter: z.object({ magnitude: z.array(WireNumberSchema), absDiff: z.array(WireNumberSchema), flatIndex: z.array(NonNegInt) }),
});
export type ErrorStats = z.infer<typeof ErrorStatsSchema>;

export const ElementBitsSchema = z.object({
  /** The value as text, exact enough to round-trip (integers exactly, floats shortest round-trip). */
  decimal: z.string(),
  /** Raw bits, "0x3f800000". */
  hex: z.string(),
  /** Floats: sign / biased exponent / mantissa fields in binary; null for integer dtypes. */
  fields: z.object({ sign: z.string(), exponent: z.string(), mantissa: z.string(), exponentBias: Int }).nullable(),
  class: z.enum(['zero', 'subnormal', 'normal', 'inf', 'nan', 'integer']),
});
export type ElementBits = z.infer<typeof ElementBitsSchema>;

export const ElementRequestSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  /** Row-major flat index into the logical tensor. */
  flatIndex: NonNegInt,
});

export const ElementSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  dtype: z.string(),
  flatIndex: NonNegInt,
  index: z.array(NonNegInt),
  /** Null when that side has no record of the boundary. */
  reference: ElementBitsSchema.nullable(),
  native: ElementBitsSchema.nullable(),
  absDiff: WireNumberSchema.nullable(),
  /** ULP distance counted on the dtype's own bits (null for integers or a missing side). */
  ulp: WireNumberSchema.nullable(),
});
export type Element = z.infer<typeof ElementSchema>;

export const CensusSchema = z.object({
  nan: NonNegInt,
  posInf: NonNegInt,
  negInf: NonNegInt,
  negZero: NonNegInt,
  subnormal: NonNegInt,
  finite: NonNegInt,
});

export const SpecialsSchema = z.object({
  pass: NonNegInt,
  boundary: z.string(),
  census: z.object({ native: CensusSchema, reference: CensusSchema }),
  byClass: z.record(MismatchClassSchema, NonNegInt),
  /** Classified mismatches in element order, the first `limit`. */
  mismatches: z.array(
    z.object({
      flatIndex: NonNegInt,
      index: z.array(NonNegInt),
      class: MismatchClassSchema,
      reference: z.string(),
      native: z.string(),
      referenceBits: z.string(),
      nativeBits: z.string(),
    }),
  ),
  truncated: z.boolean(),
});
export type Specials = z.infer<typeof SpecialsSchema>;

export const SpecialKindSchema = z.enum(['nan', 'inf']);
export const FirstSpecialSchema = z.object({ pass: NonNegInt, boundary: z.string(), flatIndex: NonNegInt, side: z.enum(['native', 'reference']) }).nullable();
export type FirstSpecial = z.infer<typeof FirstSpecialSchema>;

// ---- layer isolation, audio, provenance, receipts --------------------------------------------

export const ErrorPairSchema = z.object({ maxAbs: WireNumberSchema, rmse: WireNumberSchema });
export const LayerIsolationSchema = z.object({
  /** not_run: ask runLayerIsolation; error: see message. */
  status: z.enum(['not_run', 'ok', 'error']),
  message: z.string(),
  rows: z.array(
    z.object({
      pass: NonNegInt,
      boundary: z.string(),
      stage: z.string(),
      /** What this boundary adds when fed the reference input (isolated run vs reference). */
      local: ErrorPairSchema,
      /** What the normal run carries here (native vs reference). */
      accumulated: ErrorPairSchema,
    }),
  ),
});
export type LayerIsolation = z.infer<typeof LayerIsolationSchema>;

export const AudioMetricsSchema = z.object({
  esr: WireNumberSchema,
  snrDb: WireNumberSchema,
  mrStft: WireNumberSchema,
  nullResidualDbfs: WireNumberSchema,
  /** Sample offset (native relative to reference) that best aligns the two signals. */
  nullOffset: Int,
});
export type AudioMetrics = z.infer<typeof AudioMetricsSchema>;

export const AudioRequestSchema = z.object({ boundary: z.string() });
export const AudioSchema = z.object({
  boundary: z.string(),
  sampleRate: z.number().int().positive(),
  /** The passes whose records were concatenated, in order. */
  passes: z.array(NonNegInt),
  /** float32 little-endian PCM, base64; native is empty when nothing was captured yet. */
  reference: Base64,
  native: Base64,
  /** Null until both sides hold samples. */
  metrics: AudioMetricsSchema.nullable(),
});
export type Audio = z.infer<typeof AudioSchema>;

export const WavRequestSchema = z.object({ boundary: z.string(), side: z.enum(['reference', 'native', 'residual']) });
export const WavFileSchema = z.object({ fileName: z.string(), bytes: Base64 });

export const ProvenanceSchema = z.object({
  bundles: z.array(
    z.object({
      /** The place the bundle holds in this session: the truth, the second oracle, or the run judged against them. */
      role: z.enum(['reference', 'oracle', 'run']),
      /** What the bundle is (its manifest's kind): a native capture may be the reference of an engine-vs-engine session. */
      kind: z.enum(['reference', 'oracle-f64', 'native']),
      dir: z.string(),
      manifestSha256: z.string(),
      /** The manifest's provenance object, as JSON text (shown verbatim). */
      provenanceJson: z.string(),
      files: z.array(z.object({ path: z.string(), bytes: NonNegInt, sha256: z.string() })),
    }),
  ),
  inventory: z.object({
    /** Reference inputs given to the engine and reference records compared. */
    consumed: z.array(z.object({ name: z.string(), what: z.string() })),
    /** Reference records not compared (passes not run yet, boundaries the engine did not emit). */
    notConsumed: z.array(z.object({ name: z.string(), why: z.string() })),
    /** Records that could not be compared: structural mismatch or unreadable evidence. */
    rejected: z.array(z.object({ name: z.string(), why: z.string() })),
  }),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

export const ReceiptExportRequestSchema = z.object({
  /** Ed25519 private key (PEM file path on the core's machine); null: the session's own key. */
  keyPath: z.string().nullable(),
});
export const ReceiptExportSchema = z.object({
  path: z.string(),
  /** The DSSE envelope JSON, for download. */
  envelope: z.string(),
  publicKeyPem: z.string(),
  keyId: z.string(),
  fidelity: z.enum(['OK', 'INCOMPLETE', 'FAIL']),
  overall: z.enum(['PASSED', 'PASSED_WITH_GAPS', 'FAIL']),
  /** The seal lines as the gate prints them. */
  seals: z.array(z.string()),
});
export type ReceiptExport = z.infer<typeof ReceiptExportSchema>;

export const ReceiptVerifyRequestSchema = z.object({
  /** A DSSE envelope JSON text. */
  envelope: z.string().max(64 * 1024 * 1024),
  /** SPKI PEM of the expected signer; null: your per-user default public key (what exportReceipt signs with by default). */
  publicKeyPem: z.string().nullable(),
});
export const ReceiptVerifySchema = z.object({
  ok: z.boolean(),
  /** One line per check (signature, statement type, each subject digest), "ok" or the failure. */
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string() })),
  message: z.string(),
});
export type ReceiptVerify = z.infer<typeof ReceiptVerifySchema>;

// ---- methods -----------------------------------------------------------------------------

const Empty = z.object({}).strict();

/**
 * Every call the renderer can make. Passing an empty object for methods without parameters
 * keeps one calling convention across both transports. Operations that run the engine return
 * the snapshot after them; progress arrives as events meanwhile.
 */
export const INSPECTOR_METHODS = {
  getSession: { request: Empty, response: SessionSnapshotSchema },
  openEngine: { request: z.object({ library: z.string().min(1) }), response: SessionSnapshotSchema },
  openBundle: { request: z.object({ dir: z.string().min(1) }), response: SessionSnapshotSchema },
  /** Open an already captured bundle (any kind, same case) against the open reference bundle (no engine runs). */
  openRun: { request: z.object({ dir: z.string().min(1) }), response: SessionSnapshotSchema },
  /**
   * The contracts file the rows are judged under (compare --contracts); null clears it. Validated
   * when set (and applied to the open bundles): a bad file fails the call, naming the file and
   * the field, and changes nothing.
   */
  setContractsFile: { request: z.object({ file: z.string().min(1).nullable() }).strict(), response: SessionSnapshotSchema },
  /** The contract of boundaries the reference declares none for (compare --contract); everyBoundary: every boundary bit_exact (compare --baseline). */
  setDefaultContract: { request: z.object({ contract: z.literal('bit_exact'), everyBoundary: z.boolean() }).strict(), response: SessionSnapshotSchema },
  /**
   * A second implementation judged beside the open bundle (compare --oracle): any kind, a completed
   * run of the same case and inputs; where the run passes one and fails the other the row is
   * REVIEW_REQUIRED. null: no oracle. Replaces the case's fp64 oracle found beside a reference.
   */
  setOracleBundle: { request: z.object({ dir: z.string().min(1).nullable() }).strict(), response: SessionSnapshotSchema },
  /** The map file an opened run is lined up with (compare --map); null clears it. Validated when set, as setContractsFile. */
  setMapFile: { request: z.object({ file: z.string().min(1).nullable() }).strict(), response: SessionSnapshotSchema },
  /** Open the embedded default: the reference engine and its default case. */
  openDefault: { request: Empty, response: SessionSnapshotSchema },
  setOracle: { request: z.object({ oracle: OracleChoiceSchema }), response: SessionSnapshotSchema },
  setIsolation: { request: z.object({ isolation: IsolationModeSchema }), response: SessionSnapshotSchema },
  setTeacherForce: { request: z.object({ on: z.boolean() }), response: SessionSnapshotSchema },
  setEngineOptions: { request: z.object({ options: z.record(z.string().min(1), z.string()) }), response: SessionSnapshotSchema },
  prefill: { request: Empty, response: SessionSnapshotSchema },
  step: { request: Empty, response: SessionSnapshotSchema },
  runToEnd: { request: Empty, response: SessionSnapshotSchema },
  runToFirstDivergence: { request: Empty, response: SessionSnapshotSchema },
  reset: { request: Empty, response: SessionSnapshotSchema },
  dismissError: { request: z.object({ id: NonNegInt }), response: SessionSnapshotSchema },
  /**
   * since: a rowsVersion the client holds. When every change after it only appended rows (steps),
   * the reply is mode 'append' with just those rows, in execution order (`start`, the first one's
   * `order`, is the number of rows the client holds). Otherwise (no since, an unknown or old version, an
   * oracle switch, reset, open, a re-judged pass) mode 'full' with every row.
   */
  getRows: { request: z.object({ since: NonNegInt.optional() }).strict(), response: RowsReplySchema },
  getTensorView: { request: TensorViewRequestSchema, response: TensorViewSchema },
  getSeries: { request: SeriesRequestSchema, response: SeriesSchema },
  getErrorStats: { request: BoundaryRefSchema, response: ErrorStatsSchema },
  getElement: { request: ElementRequestSchema, response: ElementSchema },
  getSpecials: { request: BoundaryRefSchema.extend({ limit: z.number().int().min(1).max(10_000) }), response: SpecialsSchema },
  findFirstSpecial: { request: z.object({ kind: SpecialKindSchema }), response: FirstSpecialSchema },
  getLayerIsolation: { request: Empty, response: LayerIsolationSchema },
  runLayerIsolation: { request: Empty, response: LayerIsolationSchema },
  getAudio: { request: AudioRequestSchema, response: AudioSchema },
  exportWav: { request: WavRequestSchema, response: WavFileSchema },
  getProvenance: { request: Empty, response: ProvenanceSchema },
  exportReceipt: { request: ReceiptExportRequestSchema, response: ReceiptExportSchema },
  verifyReceipt: { request: ReceiptVerifyRequestSchema, response: ReceiptVerifySchema },
} as const;

export type InspectorMethod = keyof typeof INSPECTOR_METHODS;
export type MethodRequest<M extends InspectorMethod> = z.input<(typeof INSPECTOR_METHODS)[M]['request']>;
export type MethodResponse<M extends InspectorMethod> = z.infer<(typeof INSPECTOR_METHODS)[M]['response']>;

export const InspectorMethodSchema = z.enum(Object.keys(INSPECTOR_METHODS) as [InspectorMethod, ...InspectorMethod[]]);

// ---- events ------------------------------------------------------------------------------

export const InspectorEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('snapshot'), snapshot: SessionSnapshotSchema }),
  /** A pass is running: records announced so far. */
  z.object({ type: z.literal('progress'), pass: NonNegInt, kind: PassKindSchema, records: NonNegInt, lastBoundary: z.string().nullable() }),
]);
export type InspectorEvent = z.infer<typeof InspectorEventSchema>;

// ---- the API both hosts provide -------------------------------------------------------------

/** A failed call: `message` is specific (file, field, pass, boundary); `code` is a stable id. */
export const CallErrorSchema = z.object({ code: z.string(), message: z.string() });
export type CallError = z.infer<typeof CallErrorSchema>;

export class InspectorCallError extends Error {
  override name = 'InspectorCallError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What a host gives the renderer. `call` rejects with InspectorCallError. The preload exposes an
 * object of this shape as `window.traceInspector`; serve mode's client builds one over a WebSocket.
 */
export interface InspectorTransport {
  call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>>;
  /** Returns the unsubscribe function. */
  subscribe(listener: (event: InspectorEvent) => void): () => void;
}

/** The core side: serve mode and the Electron main process both dispatch to one of these. */
export type InspectorHandlers = {
  [M in InspectorMethod]: (request: z.infer<(typeof INSPECTOR_METHODS)[M]['request']>) => Promise<MethodResponse<M>>;
};

// ---- wire envelopes (WebSocket frames; IPC uses the same shapes) ------------------------------

export const CallFrameSchema = z.object({ id: NonNegInt, method: InspectorMethodSchema, request: z.unknown() });
export type CallFrame = z.infer<typeof CallFrameSchema>;
export const ReplyFrameSchema = z.union([
  z.object({ id: NonNegInt, ok: z.literal(true), response: z.unknown() }),
  z.object({ id: NonNegInt, ok: z.literal(false), error: CallErrorSchema }),
]);
export type ReplyFrame = z.infer<typeof ReplyFrameSchema>;
export const EventFrameSchema = z.object({ event: InspectorEventSchema });

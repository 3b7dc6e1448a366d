// The engine's self-description: the JSON ti_describe() returns (engine/include/trace_abi.h),
// parsed by zod at the edge. A library whose catalogue breaks the schema is refused with every
// offending field named (`boundaries[1].dtype`), not just the first.
import { z } from 'zod';
import { DTYPES, type DType } from '../core/bundle/dtype.ts';
import { issuesFromZod } from '../core/bundle/zod-issues.ts';
import { EngineLoadError } from './engine-errors.ts';

/** The ABI version this host speaks (TI_ABI_VERSION). */
export const HOST_ABI_VERSION = 1;

/**
 * A dtype as the catalogue spells it: the ABI's lowercase names ("f32", "bool", "c64"); the
 * bundle spelling ("F32") is accepted too. Parsed into the bundle spelling.
 */
export const CatalogueDTypeSchema = z.string().transform((spelled, ctx): DType => {
  const upper = spelled.toUpperCase();
  const found = DTYPES.find((dtype) => dtype === upper);
  if (found === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown dtype "${spelled}" (expected one of ${DTYPES.map((d) => d.toLowerCase()).join(', ')})`,
    });
    return z.NEVER;
  }
  return found;
});

/**
 * One extent: a fixed size, or a symbol resolved per pass (`T` = positions of the pass; the
 * reference engine's audio stages also use `L16`, `F`, `R`, `P`, explained in its describe()
 * `model.shape_symbols`).
 */
export const ShapeDimSchema = z.union([
  z.number().int().nonnegative(),
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a shape symbol is an identifier such as "T"'),
]);
export type ShapeDim = z.infer<typeof ShapeDimSchema>;

/**
 * On which passes a boundary appears. Generic: every pass (also when the catalogue names none);
 * the prefill; `engine_decides`, passes the engine chooses (the boundary may be absent from any
 * pass: where the reference has it and the run does not, nothing is judged). The reference
 * engine's own words (docs/reference-model*.md): passes whose output mode is text
 * (`text_out`) or audio (`audio_out`); the prefill of a session whose inputs include `pcm_in`
 * (`prefill_audio_in`); passes whose audio frame is decoded (`audio_frame`).
 */
export const EMIT_KINDS = ['every_pass', 'prefill', 'engine_decides', 'text_out', 'audio_out', 'prefill_audio_in', 'audio_frame'] as const;
export type EmitKind = (typeof EMIT_KINDS)[number];

const NameSchema = z.string().min(1, 'a name is a non-empty string');

export const EngineInputSchema = z.object({
  name: NameSchema,
  dtype: CatalogueDTypeSchema,
  shape: z.array(ShapeDimSchema).max(8),
  required: z.boolean(),
  doc: z.string().default(''),
});

export const EngineBoundarySchema = z.object({
  name: NameSchema,
  stage: NameSchema,
  dtype: CatalogueDTypeSchema,
  shape: z.array(ShapeDimSchema).max(8),
  emit: z.enum(EMIT_KINDS).default('every_pass'),
  injectable: z.boolean(),
  doc: z.string().default(''),
});

export const EngineOptionSchema = z.object({
  name: NameSchema,
  type: z.enum(['bool', 'int', 'string']),
  default: z.union([z.boolean(), z.number(), z.string(), z.null()]),
  doc: z.string().default(''),
});

function uniqueNames(items: readonly { name: string }[], what: string, ctx: z.RefinementCtx, path: string): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const first = seen.get(item.name);
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [path, index, 'name'],
        message: `${what} "${item.name}" repeats ${path}[${first}]`,
      });
    } else {
      seen.set(item.name, index);
    }
  });
}

export const EngineDescriptionSchema = z
  .object({
    abi_version: z.literal(HOST_ABI_VERSION),
    engine: z.object({ name: NameSchema, version: z.string(), build_id: z.string() }),
    model: z.record(z.string(), z.unknown()),
    inputs: z.array(EngineInputSchema),
    boundaries: z.array(EngineBoundarySchema).min(1, 'an engine declares at least one boundary'),
    options: z.array(EngineOptionSchema),
  })
  .superRefine((description, ctx) => {
    uniqueNames(description.inputs, 'input', ctx, 'inputs');
    uniqueNames(description.boundaries, 'boundary', ctx, 'boundaries');
    uniqueNames(description.options, 'option', ctx, 'options');
  });

export type EngineDescription = z.infer<typeof EngineDescriptionSchema>;
export type EngineBoundary = z.infer<typeof EngineBoundarySchema>;
export type EngineInput = z.infer<typeof EngineInputSchema>;
export type EngineOption = z.infer<typeof EngineOptionSchema>;

/**
 * Parses ti_describe()'s text. Throws EngineLoadError naming the library and the field(s) at
 * fault; `field` holds the first, the message lists them all.
 */
export function parseEngineDescription(text: string, library: string): EngineDescription {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new EngineLoadError({
      library,
      failure: 'describe_json',
      symbol: 'ti_describe',
      detail: `ti_describe() returned malformed JSON (${reason})`,
    });
  }
  return validateEngineDescription(json, library);
}

/** Validates an already-parsed description (a message from the worker, a cached copy...). */
export function validateEngineDescription(json: unknown, library: string): EngineDescription {
  const parsed = EngineDescriptionSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  // The bundle code is irrelevant here: only the field paths and the wording are used.
  const issues = issuesFromZod(parsed.error, json, 'E_MANIFEST_SCHEMA');
  const first = issues[0] ?? { field: '(root)', message: 'invalid' };
  const listed = issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ');
  throw new EngineLoadError({
    library,
    failure: 'describe_schema',
    symbol: 'ti_describe',
    field: first.field,
    detail: `ti_describe() JSON breaks the catalogue schema at ${listed}`,
  });
}

/** Replaces shape symbols by their values; throws naming the symbol when one is unknown. */
export function resolveShape(shape: readonly ShapeDim[], symbols: Readonly<Record<string, number>>, what: string): number[] {
  return shape.map((dim) => {
    if (typeof dim === 'number') return dim;
    const value = symbols[dim];
    if (value === undefined) throw new Error(`${what}: shape symbol "${dim}" has no value here`);
    return value;
  });
}

/** The output a pass produced, as the session state reports it ("text", "audio", ...). */
export type PassKind = 'prefill' | 'decode';

/** What some emit kinds depend on beyond the pass's kind and output mode. */
export interface PassFacts {
  /** The session's inputs include `pcm_in` (then its prefill emits the `prefill_audio_in` boundaries). */
  pcmIn: boolean;
  /**
   * The pass's audio frame is not decoded, so it emits no `audio_frame` boundary: an end-of-audio
   * frame (code 0 == EOA) or, in the reference model, a frame with EOA in any codebook, which the
   * detokenizer refuses (docs/reference-model-audio.md, `detok.frame_status`).
   */
  endOfAudio: boolean;
}

/**
 * Whether the catalogue says `boundary` appears in a pass of this kind whose output was `mode`,
 * given the facts `prefill_audio_in` and `audio_frame` depend on.
 */
export function isEmittedIn(boundary: EngineBoundary, kind: PassKind, mode: string | null, facts: PassFacts): boolean {
  switch (boundary.emit) {
    case 'every_pass':
      return true;
    case 'prefill':
      return kind === 'prefill';
    case 'engine_decides':
      // May appear in any pass; case-verdicts.ts judges its absence (nothing to judge).
      return true;
    case 'text_out':
      return mode === 'text';
    case 'audio_out':
      return mode === 'audio';
    case 'prefill_audio_in':
      return kind === 'prefill' && facts.pcmIn;
    case 'audio_frame':
      return mode === 'audio' && !facts.endOfAudio;
  }
}

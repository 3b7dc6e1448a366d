// A self-test table supplied by an engine or example (`--self-test --perturbations <file.json>`):
// the cases folder, where each of the engine's deliberate perturbations must first show, and
// optional host-side record perturbations. The reference engine's own table is one of these too
// (engine/perturbations.json, the self-test's default); any engine that declares `perturb.*`
// options brings its own.
//
// Each engine line names the cheapest committed case where the perturbation shows, and the first
// (pass, boundary) in execution order where it must, derived from the engine's option docs, the
// model's spec, the contracts and the cases' pass modes, and verified by running. Never loosen
// one to make it pass: if the gate shows a perturbation elsewhere, find out why.
//
//   { "cases": "bundles",                       <case>/{reference,oracle-f64}, relative to this file
//     "engine": [ { "option": "perturb.x", "value": "1", "case": "c", "pass": 0,
//                   "boundary": "net.l1.z", "kind": "value", "why": "..." } ],
//     "records": [ { "kind": "flip_bit", "case": "c", "pass": 2, "boundary": "net.out" } ] }
//
// Every field is validated with zod; a problem names the file and the field.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { MISMATCH_CLASSES } from '../compare/compare-kernels.ts';
import type { FailureKind } from './gate-types.ts';
import { RECORD_PERTURBATION_KINDS, type RecordPerturbation } from './record-perturbations.ts';

/** Where a deliberate engine perturbation first shows. */
export interface EnginePerturbationExpectation {
  /** The engine option set for the run. */
  option: string;
  /** Its value; default "1". */
  value?: string;
  /** The committed case run with it (fixtures/bundles/<case>). */
  case: string;
  pass: number;
  boundary: string;
  /** The failure kind the gate must give there; omitted: any kind. */
  kind?: FailureKind;
  /** Why it first shows there (docs/reference-model.md and the case's pass modes). */
  why: string;
  /** Run without forcing rounding decisions (the capture's default forces them). */
  freeRounding?: boolean;
}

/** A host-side perturbation of one record of a clean native bundle. */
export interface RecordPerturbationExpectation extends RecordPerturbation {
  /** The committed case whose clean native bundle is copied and perturbed. */
  case: string;
  /** The failure kinds the comparator may rightly give; default EXPECTED_KINDS[kind]. */
  kinds?: readonly FailureKind[];
}

const FAILURE_KINDS = [...MISMATCH_CLASSES, 'missing', 'dtype', 'shape', 'layout', 'audio', 'unreadable', 'other'] as const satisfies readonly FailureKind[];

const Name = z.string().min(1, { error: 'expected a non-empty string' });
const Index = z.number().int().nonnegative();

const EngineEntrySchema = z.strictObject({
  option: Name.regex(/^perturb\./, { error: 'a perturbation option is named perturb.<something> (the self-test lists those)' }),
  value: z.string().min(1).default('1'),
  case: Name,
  pass: Index,
  boundary: Name,
  kind: z.enum(FAILURE_KINDS).optional(),
  why: Name,
  free_rounding: z.boolean().default(false),
});

const RecordEntrySchema = z.strictObject({
  kind: z.enum(RECORD_PERTURBATION_KINDS),
  case: Name,
  pass: Index,
  boundary: Name,
  element: Index.optional(),
  bit: Index.optional(),
  token: z.number().int().optional(),
  kinds: z.array(z.enum(FAILURE_KINDS)).min(1).optional(),
});

export const PerturbationTableSchema = z.strictObject({
  cases: Name,
  engine: z.array(EngineEntrySchema).min(1, { error: 'a table lists at least one engine perturbation' }),
  records: z.array(RecordEntrySchema).default([]),
});

export interface PerturbationTable {
  /** The table file. */
  file: string;
  /** Folder of <case>/{reference,oracle-f64}. */
  bundlesDir: string;
  enginePerturbations: EnginePerturbationExpectation[];
  recordPerturbations: RecordPerturbationExpectation[];
}

/** The table cannot be used (exit 2 at the CLI); the message names the file and the field. */
export class PerturbationTableError extends Error {
  override name = 'PerturbationTableError';
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}${text === '' ? '' : '.'}${String(key)}`), '') || '(root)';
}

/** Reads and validates a perturbation table; every problem is listed, each with its field. */
export async function loadPerturbationTable(file: string): Promise<PerturbationTable> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PerturbationTableError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PerturbationTableError(`${path}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = PerturbationTableSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${fieldPath(issue.path)}: ${issue.message}`);
    throw new PerturbationTableError(`${path}: ${problems.join('; ')}`);
  }
  const table = parsed.data;
  const seen = new Map<string, number>();
  table.engine.forEach((entry, index) => {
    const key = `${entry.option}=${entry.value}`;
    const first = seen.get(key);
    if (first !== undefined) throw new PerturbationTableError(`${path}: engine[${index}]: ${key} repeats engine[${first}]`);
    seen.set(key, index);
  });
  return {
    file: path,
    bundlesDir: resolve(dirname(path), table.cases),
    enginePerturbations: table.engine.map((entry) => ({
      option: entry.option,
      value: entry.value,
      case: entry.case,
      pass: entry.pass,
      boundary: entry.boundary,
      why: entry.why,
      ...(entry.kind !== undefined ? { kind: entry.kind } : {}),
      ...(entry.free_rounding ? { freeRounding: true } : {}),
    })),
    recordPerturbations: table.records.map((entry) => ({
      kind: entry.kind,
      case: entry.case,
      pass: entry.pass,
      boundary: entry.boundary,
      ...(entry.element !== undefined ? { element: entry.element } : {}),
      ...(entry.bit !== undefined ? { bit: entry.bit } : {}),
      ...(entry.token !== undefined ? { token: entry.token } : {}),
      ...(entry.kinds !== undefined ? { kinds: entry.kinds } : {}),
    })),
  };
}

// The map file of `compare --map FILE` (docs/compare.md): how a candidate that names and lays out
// its boundaries differently (a port) lines up with the reference.
//
//   { "schema": "trace-inspector.boundary-map", "schema_version": 1,
//     "map": [ { "candidate": "layers.{i}.out", "reference": "nam.a0.l{i}.out",
//                "permute": [1, 0], "widen_to": "F32" } ],
//     "unmapped": [ { "candidate": "debug.*", "reason": "timing probes the reference has no counterpart of" } ] }
//
// A candidate boundary is, in this order: declared unmapped (the first `unmapped` entry that
// matches: reported, never compared), mapped (the first `map` entry that matches: renamed and,
// when asked, transformed), or neither (kept under its own name, and reported).
import { z } from 'zod';
import { sha256File } from '../bundle/digest.ts';
import { DTypeSchema, type DType } from '../bundle/dtype.ts';
import { formatFieldPath } from '../bundle/errors.ts';
import { readJsonInput } from '../io/json-input-file.ts';
import { checkTemplate, compileNamePattern, fillTemplate, matchName, type NamePattern } from './name-patterns.ts';
import { InputError } from '../io/input-error.ts';

const MapFileSchema = z
  .strictObject({
    schema: z.literal('trace-inspector.boundary-map', { error: 'expected "trace-inspector.boundary-map"' }),
    schema_version: z.literal(1, { error: 'expected 1 (the only version this reader speaks)' }),
    map: z
      .array(
        z.strictObject({
          candidate: z.string().min(1, { error: 'expected a candidate boundary-name pattern' }),
          reference: z.string().min(1, { error: 'expected the reference boundary name (it may use the captures of candidate)' }),
          /** Axis j of the result is axis permute[j] of the candidate tensor (numpy's transpose). */
          permute: z.array(z.int().min(0)).max(8).optional(),
          /** Widen the candidate's values to this dtype (exact: every value is representable). */
          widen_to: DTypeSchema.optional(),
        }),
      )
      .default([]),
    unmapped: z
      .array(
        z.strictObject({
          candidate: z.string().min(1, { error: 'expected a candidate boundary-name pattern' }),
          reason: z.string().min(1, { error: 'say why the boundary has no counterpart in the reference' }),
        }),
      )
      .default([]),
  })
  .refine((file) => file.map.length + file.unmapped.length > 0, { error: 'expected at least one entry in "map" or "unmapped"' });

export interface MapRule {
  index: number;
  pattern: NamePattern;
  reference: string;
  permute: number[] | null;
  widenTo: DType | null;
}

export interface UnmappedRule {
  index: number;
  pattern: NamePattern;
  reason: string;
}

export interface BoundaryMap {
  path: string;
  sha256: string;
  map: MapRule[];
  unmapped: UnmappedRule[];
}

export type Placement =
  | { kind: 'mapped'; reference: string; rule: MapRule }
  | { kind: 'unmapped'; rule: UnmappedRule }
  /** No entry matches: the boundary keeps its own name. */
  | { kind: 'uncovered' };

export async function loadBoundaryMap(path: string): Promise<BoundaryMap> {
  const parsed = await readJsonInput(path, MapFileSchema, 'map file');
  const map: MapRule[] = [];
  for (const [index, entry] of parsed.map.entries()) {
    const pattern = compileNamePattern(entry.candidate);
    if (typeof pattern === 'string') throw InputError.at(path, formatFieldPath(['map', index, 'candidate']), pattern);
    const problem = checkTemplate(entry.reference, pattern);
    if (problem !== null) throw InputError.at(path, formatFieldPath(['map', index, 'reference']), problem);
    if (entry.permute !== undefined) {
      const sorted = [...entry.permute].sort((a, b) => a - b);
      if (sorted.some((axis, at) => axis !== at)) {
        throw InputError.at(
          path,
          formatFieldPath(['map', index, 'permute']),
          `[${entry.permute.join(', ')}] is not a permutation of the axes 0..${entry.permute.length - 1}`,
        );
      }
    }
    map.push({ index, pattern, reference: entry.reference, permute: entry.permute ?? null, widenTo: entry.widen_to ?? null });
  }
  const unmapped: UnmappedRule[] = [];
  for (const [index, entry] of parsed.unmapped.entries()) {
    const pattern = compileNamePattern(entry.candidate);
    if (typeof pattern === 'string') throw InputError.at(path, formatFieldPath(['unmapped', index, 'candidate']), pattern);
    unmapped.push({ index, pattern, reason: entry.reason });
  }
  return { path, sha256: (await sha256File(path)).sha256, map, unmapped };
}

export function placeBoundary(map: BoundaryMap, candidate: string): Placement {
  for (const rule of map.unmapped) if (matchName(rule.pattern, candidate) !== null) return { kind: 'unmapped', rule };
  for (const rule of map.map) {
    const captures = matchName(rule.pattern, candidate);
    if (captures !== null) return { kind: 'mapped', reference: fillTemplate(rule.reference, captures), rule };
  }
  return { kind: 'uncovered' };
}

/** Widenings that keep every value exactly. */
const WIDENINGS: Readonly<Partial<Record<DType, readonly DType[]>>> = {
  F16: ['F32', 'F64'],
  BF16: ['F32', 'F64'],
  F32: ['F64'],
  I8: ['I16', 'I32', 'I64'],
  I16: ['I32', 'I64'],
  I32: ['I64'],
  U8: ['U16', 'U32', 'U64', 'I16', 'I32', 'I64'],
  U16: ['U32', 'U64', 'I32', 'I64'],
  U32: ['U64', 'I64'],
};

export function canWiden(from: DType, to: DType): boolean {
  return from === to || (WIDENINGS[from]?.includes(to) ?? false);
}

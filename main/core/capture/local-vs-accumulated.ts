// Local vs accumulated error, per (pass, boundary): the isolated capture (layer-isolation.ts:
// every injectable boundary fed the reference value, so each record shows what its segment alone
// adds) and the normal capture (what has built up) are each compared with the reference by the
// comparator, under the reference's contract.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { isFloatDType, type DType } from '../bundle/dtype.ts';
import { compareBoundary } from '../compare/compare-boundary.ts';
import type { BoundaryComparison } from '../compare/comparison-types.ts';

/** Error of one side against the reference at one (pass, boundary). */
export interface ErrorStats {
  maxAbs: number;
  rmse: number;
  /** Not outside the reference's contract (compareBoundary's outcome is not 'fail'). */
  passed: boolean;
}

export interface LocalVsAccumulatedRow {
  pass: number;
  boundary: string;
  stage: string;
  dtype: DType;
  /** The boundary is an injection point of the isolated run (its record there is the engine's own value given reference inputs). */
  injected: boolean;
  /** The isolated run against the reference: what this segment alone adds. Null when not comparable. */
  local: ErrorStats | null;
  /** The normal run against the reference: what has built up by this boundary. Null when not comparable. */
  accumulated: ErrorStats | null;
  /** Why a side is null (missing in a bundle, dtype or shape mismatch). */
  note: string;
}

function statsOf(comparison: BoundaryComparison): ErrorStats | null {
  if (comparison.structural !== null) return null;
  // A gap (a contract that needs the absent oracle) is not a failure of the values.
  return { maxAbs: comparison.maxAbs, rmse: comparison.rmse, passed: comparison.outcome !== 'fail' };
}

/** The boundaries the isolated run injected, from its provenance (runtime.layer_isolated_boundaries). */
function injectedBoundaries(isolated: TraceBundle): Set<string> {
  const listed = isolated.manifest.provenance.runtime['layer_isolated_boundaries'];
  return new Set(typeof listed === 'string' && listed.length > 0 ? listed.split(',') : []);
}

/**
 * For every (pass, boundary) of the reference, in execution order: the error of the isolated run
 * (local) and of the normal run (accumulated) against the reference, each from compareBoundary
 * under the reference's contract. `native` is the normal capture, `isolated` the capture made with
 * `isolate` (captureRun's result.isolated.dir), `reference` the reference bundle both ran.
 */
export async function compareLocalVsAccumulated(native: TraceBundle, isolated: TraceBundle, reference: TraceBundle): Promise<LocalVsAccumulatedRow[]> {
  const injected = injectedBoundaries(isolated);
  const rows: LocalVsAccumulatedRow[] = [];
  for (const pass of reference.passes) {
    for (const entry of pass.boundaries) {
      const notes: string[] = [];
      const side = async (bundle: TraceBundle, label: string): Promise<ErrorStats | null> => {
        if (bundle.boundary(pass.index, entry.name) === undefined) {
          notes.push(`missing in the ${label} run`);
          return null;
        }
        const comparison = await compareBoundary({ native: bundle, reference }, pass.index, entry.name);
        if (comparison.structural !== null) notes.push(`${label}: ${comparison.structural.problem} (${comparison.structural.detail})`);
        return statsOf(comparison);
      };
      const local = await side(isolated, 'isolated');
      const accumulated = await side(native, 'normal');
      rows.push({
        pass: pass.index,
        boundary: entry.name,
        stage: entry.stage,
        dtype: entry.dtype,
        injected: injected.has(entry.name),
        local,
        accumulated,
        note: notes.join('; '),
      });
    }
  }
  return rows;
}

export interface LocalVsAccumulatedTableOptions {
  /** Only floating-point boundaries (default true): integer boundaries have no magnitude of error. */
  floatOnly?: boolean;
  /** Only these passes (default all). */
  passes?: readonly number[];
  /** Only rows where either side is outside its contract (default false). */
  onlyOutside?: boolean;
  /** Only the injection points of the isolated run, the ends of the segments (default false). */
  injectedOnly?: boolean;
}

function number(value: number | undefined): string {
  if (value === undefined) return '-';
  if (value === 0) return '0';
  if (!Number.isFinite(value)) return String(value);
  return value.toExponential(2);
}

/**
 * A readable table: per row the local and the accumulated max |error| and RMSE, the share of the
 * accumulated error the segment adds by itself, and a mark where the local error alone is outside
 * the contract ("<- adds error": that segment is wrong on its own, not only downstream of one).
 */
export function formatLocalVsAccumulated(rows: readonly LocalVsAccumulatedRow[], options: LocalVsAccumulatedTableOptions = {}): string {
  const floatOnly = options.floatOnly ?? true;
  const passes = options.passes === undefined ? null : new Set(options.passes);
  const shown = rows.filter(
    (row) =>
      (!floatOnly || isFloatDType(row.dtype)) &&
      (passes === null || passes.has(row.pass)) &&
      (!options.injectedOnly || row.injected) &&
      (!options.onlyOutside || row.local?.passed === false || row.accumulated?.passed === false || row.local === null || row.accumulated === null),
  );
  const header = ['pass', 'boundary', 'local max|err|', 'local rmse', 'accum. max|err|', 'accum. rmse', 'local/accum.', ''];
  const cells = shown.map((row) => {
    const share = row.local && row.accumulated && row.accumulated.maxAbs > 0 ? `${((100 * row.local.maxAbs) / row.accumulated.maxAbs).toFixed(0)}%` : '-';
    const mark = row.local === null || row.accumulated === null ? row.note : row.local.passed ? (row.accumulated.passed ? '' : 'inherited') : '<- adds error';
    return [
      String(row.pass),
      `${row.boundary}${row.injected ? ' *' : ''}`,
      number(row.local?.maxAbs),
      number(row.local?.rmse),
      number(row.accumulated?.maxAbs),
      number(row.accumulated?.rmse),
      share,
      mark,
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => (row[column] as string).length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, column) => (column === 0 || (column >= 2 && column <= 6) ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number)))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    ...cells.map(line),
    '',
    '* injection point of the isolated run. local: the isolated run (every injectable boundary fed the reference value) against the reference;',
    '  accumulated: the normal run against the reference. "<- adds error": the segment alone is outside the contract; "inherited": only the accumulated error is.',
  ].join('\n');
}

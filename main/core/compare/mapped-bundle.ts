// A candidate bundle seen through a map file (boundary-map.ts): boundaries renamed to the
// reference's names, optionally widened and permuted into the reference's layout, and the
// boundaries declared unmapped taken out of the comparison (and reported by mapReport). The
// comparator then judges it like any native bundle. A transformed tensor is read whole (digest-
// checked by the bundle), transformed in memory, and handed out in chunks.
import type { TensorData, TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE, elementCount, type DType } from '../bundle/dtype.ts';
import { formatFieldPath } from '../bundle/errors.ts';
import { contiguousStrides } from '../bundle/layout.ts';
import type { BoundaryEntry, BundleManifest, PassEntry } from '../bundle/manifest-schema.ts';
import { decodeUnits } from './decode-units.ts';
import { canWiden, placeBoundary, type BoundaryMap, type MapRule } from './boundary-map.ts';
import { InputError } from '../io/input-error.ts';

/** What the map did, for the reports and the receipt: nothing is dropped without a line here. */
export interface MapReport {
  file: string;
  sha256: string;
  mapped: { candidate: string; reference: string; rule: number; transform: string | null; passes: number[] }[];
  unmapped: { candidate: string; reason: string; rule: number; passes: number[] }[];
  /** Candidate boundaries no entry matches: kept under their own name. */
  uncovered: { candidate: string; inReference: boolean; passes: number[] }[];
  /** Entries that matched no candidate boundary at all (a typo hides nothing silently). */
  unusedEntries: string[];
}

interface Transform {
  rule: MapRule;
  /** The candidate's own entry. */
  source: BoundaryEntry;
}

function transformText(rule: MapRule): string | null {
  const parts = [rule.widenTo !== null ? `widen to ${rule.widenTo}` : null, rule.permute !== null ? `permute [${rule.permute.join(', ')}]` : null].filter(
    (part): part is string => part !== null,
  );
  return parts.length === 0 ? null : parts.join(', ');
}

function widen(data: Uint8Array, from: DType, to: DType, count: number): Uint8Array {
  if (from === to) return data;
  const aligned = new Uint8Array(data);
  const out = new Uint8Array(count * DTYPE_SIZE[to]);
  const view = new DataView(out.buffer);
  const input = new DataView(aligned.buffer);
  const floats = from === 'F16' || from === 'BF16' || from === 'F32';
  const values = new Float64Array(floats ? count : 0);
  if (floats) decodeUnits(from, aligned, 0, count, values);
  for (let k = 0; k < count; k++) {
    let value: number | bigint;
    if (floats) value = values[k] as number;
    else if (from === 'I8') value = input.getInt8(k);
    else if (from === 'I16') value = input.getInt16(k * 2, true);
    else if (from === 'I32') value = input.getInt32(k * 4, true);
    else if (from === 'U8') value = input.getUint8(k);
    else if (from === 'U16') value = input.getUint16(k * 2, true);
    else value = input.getUint32(k * 4, true);
    switch (to) {
      case 'F32':
        view.setFloat32(k * 4, Number(value), true);
        break;
      case 'F64':
        view.setFloat64(k * 8, Number(value), true);
        break;
      case 'I16':
        view.setInt16(k * 2, Number(value), true);
        break;
      case 'I32':
        view.setInt32(k * 4, Number(value), true);
        break;
      case 'U16':
        view.setUint16(k * 2, Number(value), true);
        break;
      case 'U32':
        view.setUint32(k * 4, Number(value), true);
        break;
      case 'I64':
        view.setBigInt64(k * 8, BigInt(value), true);
        break;
      case 'U64':
        view.setBigUint64(k * 8, BigInt(value), true);
        break;
      default:
        throw new Error(`internal: no widening to ${to}`);
    }
  }
  return out;
}

/** Row-major `data` of `shape` with its axes permuted: axis j of the result is axis permute[j]. */
function permute(data: Uint8Array, shape: readonly number[], order: readonly number[], size: number): Uint8Array {
  const outShape = order.map((axis) => shape[axis] as number);
  const inStrides = contiguousStrides(shape);
  const stepOf = order.map((axis) => inStrides[axis] as number);
  const total = elementCount(shape);
  const out = new Uint8Array(total * size);
  const index = new Array<number>(outShape.length).fill(0);
  let source = 0;
  for (let flat = 0; flat < total; flat++) {
    out.set(data.subarray(source * size, source * size + size), flat * size);
    for (let axis = outShape.length - 1; axis >= 0; axis--) {
      index[axis] = (index[axis] as number) + 1;
      source += stepOf[axis] as number;
      if ((index[axis] as number) < (outShape[axis] as number)) break;
      source -= (stepOf[axis] as number) * (outShape[axis] as number);
      index[axis] = 0;
    }
  }
  return out;
}

class MappedBundle implements TraceBundle {
  readonly manifest: BundleManifest;
  readonly dir: string;
  readonly manifestPath: string;

  constructor(
    private readonly inner: TraceBundle,
    readonly passes: readonly PassEntry[],
    /** (pass, reference name) -> the candidate's name, and the transform when there is one. */
    private readonly sources: ReadonlyMap<string, { name: string; transform: Transform | null }>,
  ) {
    this.manifest = { ...inner.manifest, passes: [...passes] };
    this.dir = inner.dir;
    this.manifestPath = inner.manifestPath;
  }

  private sourceOf(passIndex: number, name: string): { name: string; transform: Transform | null } {
    return this.sources.get(`${passIndex}\u0000${name}`) ?? { name, transform: null };
  }

  boundary(passIndex: number, name: string): BoundaryEntry | undefined {
    return this.passes.find((pass) => pass.index === passIndex)?.boundaries.find((entry) => entry.name === name);
  }

  async readBoundary(passIndex: number, name: string): Promise<TensorData> {
    const source = this.sourceOf(passIndex, name);
    const tensor = await this.inner.readBoundary(passIndex, source.name);
    if (source.transform === null) return tensor;
    const entry = this.boundary(passIndex, name) as BoundaryEntry;
    const { rule } = source.transform;
    let data = widen(tensor.data, tensor.dtype, rule.widenTo ?? tensor.dtype, elementCount(tensor.shape));
    if (rule.permute !== null) data = permute(data, tensor.shape, rule.permute, DTYPE_SIZE[entry.dtype]);
    return { dtype: entry.dtype, shape: entry.shape, strides: entry.strides, data };
  }

  async *readBoundaryChunks(passIndex: number, name: string, chunkBytes = 8 * 1024 * 1024): AsyncGenerator<Uint8Array, void, undefined> {
    const source = this.sourceOf(passIndex, name);
    if (source.transform === null) {
      yield* this.inner.readBoundaryChunks(passIndex, source.name, chunkBytes);
      return;
    }
    const { data } = await this.readBoundary(passIndex, name);
    for (let at = 0; at < data.length; at += chunkBytes) yield data.subarray(at, Math.min(data.length, at + chunkBytes));
  }

  async readBoundaryRange(passIndex: number, name: string, begin: number, end: number): Promise<Uint8Array> {
    const source = this.sourceOf(passIndex, name);
    // Untransformed: the candidate's own (chunk-verified) range; a transformed layout has no
    // byte range of its own, so the whole tensor is read (verified) and transformed first.
    if (source.transform === null) return this.inner.readBoundaryRange(passIndex, source.name, begin, end);
    const { data } = await this.readBoundary(passIndex, name);
    return data.subarray(begin, end);
  }

  input(name: string): ReturnType<TraceBundle['input']> {
    return this.inner.input(name);
  }

  readInput(name: string): ReturnType<TraceBundle['readInput']> {
    return this.inner.readInput(name);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

function transformedEntry(entry: BoundaryEntry, rule: MapRule, name: string, map: BoundaryMap, passIndex: number): BoundaryEntry {
  const dtype = rule.widenTo ?? entry.dtype;
  if (!canWiden(entry.dtype, dtype)) {
    throw InputError.at(
      map.path,
      formatFieldPath(['map', rule.index, 'widen_to']),
      `${entry.dtype} -> ${dtype} is not a widening (candidate boundary ${entry.name}, pass ${passIndex}); a widening keeps every value exactly`,
    );
  }
  let shape = [...entry.shape];
  let valid = entry.valid;
  if (rule.permute !== null) {
    if (rule.permute.length !== entry.shape.length) {
      throw InputError.at(
        map.path,
        formatFieldPath(['map', rule.index, 'permute']),
        `has ${rule.permute.length} axes, candidate boundary ${entry.name} has ${entry.shape.length} ([${entry.shape.join(', ')}], pass ${passIndex})`,
      );
    }
    shape = rule.permute.map((axis) => entry.shape[axis] as number);
    if (valid !== null) valid = { ...valid, axis: rule.permute.indexOf(valid.axis) };
  }
  return { ...entry, name, dtype, shape, strides: contiguousStrides(shape), layout: 'row-major', byte_length: elementCount(shape) * DTYPE_SIZE[dtype], valid };
}

/** `candidate` through `map` (renamed, transformed, declared-unmapped boundaries left out), and what the map did. */
export function applyBoundaryMap(candidate: TraceBundle, map: BoundaryMap, reference: TraceBundle): { bundle: TraceBundle; report: MapReport } {
  const sources = new Map<string, { name: string; transform: Transform | null }>();
  const passes: PassEntry[] = [];
  const mapped = new Map<string, MapReport['mapped'][number]>();
  const unmapped = new Map<string, MapReport['unmapped'][number]>();
  const uncovered = new Map<string, MapReport['uncovered'][number]>();
  const used = new Set<string>();
  for (const pass of candidate.passes) {
    const boundaries: BoundaryEntry[] = [];
    const takenBy = new Map<string, string>();
    for (const entry of pass.boundaries) {
      const placement = placeBoundary(map, entry.name);
      if (placement.kind === 'unmapped') {
        used.add(`unmapped[${placement.rule.index}]`);
        const row = unmapped.get(entry.name) ?? { candidate: entry.name, reason: placement.rule.reason, rule: placement.rule.index, passes: [] };
        row.passes.push(pass.index);
        unmapped.set(entry.name, row);
        continue;
      }
      const name = placement.kind === 'mapped' ? placement.reference : entry.name;
      const earlier = takenBy.get(name);
      if (earlier !== undefined) {
        const field = placement.kind === 'mapped' ? formatFieldPath(['map', placement.rule.index, 'reference']) : 'map';
        throw InputError.at(
          map.path,
          field,
          `candidate boundaries ${earlier} and ${entry.name} both become reference boundary ${name} in pass ${pass.index}; each reference boundary is compared with one candidate boundary`,
        );
      }
      takenBy.set(name, entry.name);
      if (placement.kind === 'mapped') {
        used.add(`map[${placement.rule.index}]`);
        const { rule } = placement;
        const transform = rule.permute !== null || (rule.widenTo !== null && rule.widenTo !== entry.dtype) ? { rule, source: entry } : null;
        boundaries.push(transform === null ? { ...entry, name } : transformedEntry(entry, rule, name, map, pass.index));
        sources.set(`${pass.index}\u0000${name}`, { name: entry.name, transform });
        const row = mapped.get(entry.name) ?? { candidate: entry.name, reference: name, rule: rule.index, transform: transformText(rule), passes: [] };
        row.passes.push(pass.index);
        mapped.set(entry.name, row);
      } else {
        boundaries.push(entry);
        const row = uncovered.get(entry.name) ?? { candidate: entry.name, inReference: false, passes: [] };
        row.passes.push(pass.index);
        row.inReference ||= reference.boundary(pass.index, entry.name) !== undefined;
        uncovered.set(entry.name, row);
      }
    }
    passes.push({ ...pass, boundaries });
  }
  const unusedEntries = [
    ...map.map
      .filter((rule) => !used.has(`map[${rule.index}]`))
      .map((rule) => `${map.path}: map[${rule.index}] ("${rule.pattern.source}") matches no candidate boundary`),
    ...map.unmapped
      .filter((rule) => !used.has(`unmapped[${rule.index}]`))
      .map((rule) => `${map.path}: unmapped[${rule.index}] ("${rule.pattern.source}") matches no candidate boundary`),
  ];
  return {
    bundle: new MappedBundle(candidate, passes, sources),
    report: {
      file: map.path,
      sha256: map.sha256,
      mapped: [...mapped.values()],
      unmapped: [...unmapped.values()],
      uncovered: [...uncovered.values()],
      unusedEntries,
    },
  };
}

// A reference (or oracle) bundle seen with the contracts of a ContractSource (contracts-file.ts)
// in place of, or in addition to, the ones its manifest declares. The comparator reads a
// boundary's contract from its entry, so this view is all it takes to judge against a bundle
// that declares none (a native capture): nothing else about the bundle changes, and every tensor
// is still read, and digest-checked, by the bundle itself.
import type { BoundaryWindows, TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE } from '../bundle/dtype.ts';
import { formatFieldPath } from '../bundle/errors.ts';
import type { BoundaryEntry, BundleManifest, Contract, PassEntry } from '../bundle/manifest-schema.ts';
import { decodeScratch, decodeUnits } from './decode-units.ts';
import { bitExactContract, faithfulFromK, ruleFor, type ContractSource } from './contracts-file.ts';
import { InputError } from '../io/input-error.ts';

/** RMS of the finite values of one float boundary (the scale of the gamma(K) rule). */
async function finiteRms(bundle: TraceBundle, pass: number, entry: BoundaryEntry): Promise<number> {
  const unit = entry.dtype === 'C64' ? 4 : DTYPE_SIZE[entry.dtype];
  let sum = 0;
  let count = 0;
  let carry = new Uint8Array(0);
  for await (const chunk of bundle.readBoundaryChunks(pass, entry.name)) {
    const joined = new Uint8Array(carry.length + chunk.length);
    joined.set(carry, 0);
    joined.set(chunk, carry.length);
    const units = Math.floor(joined.length / unit);
    // The thread's decode scratch, decoded and summed before the next await.
    const values = decodeScratch(0);
    for (let from = 0; from < units; from += values.length) {
      const n = Math.min(values.length, units - from);
      decodeUnits(entry.dtype, joined, from, n, values);
      for (let k = 0; k < n; k++) {
        const value = values[k] as number;
        if (Number.isFinite(value)) {
          sum += value * value;
          count += 1;
        }
      }
    }
    carry = joined.slice(units * unit);
  }
  return count === 0 ? 0 : Math.sqrt(sum / count);
}

/** The contract each (pass, boundary) is judged under; a bad rule is an InputError naming the file and rule. */
async function contractsOf(bundle: TraceBundle, source: ContractSource): Promise<PassEntry[]> {
  const passes: PassEntry[] = [];
  for (const pass of bundle.passes) {
    const boundaries: BoundaryEntry[] = [];
    for (const entry of pass.boundaries) {
      let contract: Contract | null = entry.contract;
      if (source.kind === 'all_bit_exact') {
        contract = bitExactContract(source.why);
      } else if (source.kind === 'default') {
        contract ??= bitExactContract(source.why);
      } else {
        const rule = ruleFor(source, entry.name);
        if (rule !== undefined && rule.contract.form === 'contract') contract = rule.contract.contract;
        if (rule !== undefined && rule.contract.form === 'faithful_from_k') {
          const rms =
            rule.contract.rule.scale === undefined && entry.dtype in { F32: 1, F64: 1, F16: 1, BF16: 1, C64: 1 }
              ? await finiteRms(bundle, pass.index, entry)
              : 0;
          const made = faithfulFromK(rule.contract.rule, entry, rms);
          if (typeof made === 'string') throw InputError.at(source.path, formatFieldPath(['rules', rule.index, 'contract']), `pass ${pass.index}: ${made}`);
          contract = made;
        }
      }
      boundaries.push({ ...entry, contract });
    }
    passes.push({ ...pass, boundaries });
  }
  return passes;
}

class ContractedBundle implements TraceBundle {
  readonly manifest: BundleManifest;
  readonly dir: string;
  readonly manifestPath: string;
  readonly passes: readonly PassEntry[];

  constructor(
    private readonly inner: TraceBundle,
    passes: PassEntry[],
  ) {
    this.manifest = { ...inner.manifest, passes };
    this.dir = inner.dir;
    this.manifestPath = inner.manifestPath;
    this.passes = passes;
  }

  boundary(passIndex: number, name: string): BoundaryEntry | undefined {
    return this.passes.find((pass) => pass.index === passIndex)?.boundaries.find((entry) => entry.name === name);
  }

  readBoundary(passIndex: number, name: string): ReturnType<TraceBundle['readBoundary']> {
    return this.inner.readBoundary(passIndex, name);
  }

  readBoundaryChunks(passIndex: number, name: string, chunkBytes?: number): ReturnType<TraceBundle['readBoundaryChunks']> {
    return this.inner.readBoundaryChunks(passIndex, name, chunkBytes);
  }

  readBoundaryRange(passIndex: number, name: string, begin: number, end: number): ReturnType<TraceBundle['readBoundaryRange']> {
    return this.inner.readBoundaryRange(passIndex, name, begin, end);
  }

  // Contracts change no bytes: a verified boundary is read straight into the comparison's windows.
  async boundaryWindows(passIndex: number, name: string): Promise<BoundaryWindows | null> {
    return (await this.inner.boundaryWindows?.(passIndex, name)) ?? null;
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

/** `bundle` with the contracts of `source`; closing the view closes the bundle. */
export async function withContracts(bundle: TraceBundle, source: ContractSource | null): Promise<TraceBundle> {
  if (source === null) return bundle;
  return new ContractedBundle(bundle, await contractsOf(bundle, source));
}

// The fuzz tests' shared pieces: the seed (printed, reproducible), a seeded generator, the JSON
// and byte mutations, and a snapshot of a folder tree to prove nothing was written outside the
// target.
//
//   TI_FUZZ_SEED=<n>       run with that seed (the default is fixed, so the suite is repeatable)
//   TI_FUZZ_SEED=random    a fresh seed, printed
//   TI_FUZZ_SCALE=<k>      k times as many iterations (time bounds scale too)
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { xorshift32 } from '../helpers/random.ts';

export const DEFAULT_SEED = 20261202;

export function fuzzSeed(label: string): number {
  const given = process.env['TI_FUZZ_SEED'];
  const seed = given === undefined || given === '' ? DEFAULT_SEED : given === 'random' ? (Date.now() ^ process.pid) >>> 0 : Number(given) >>> 0;
  process.stdout.write(`fuzz ${label}: seed ${seed} (reproduce with TI_FUZZ_SEED=${seed})\n`);
  return seed;
}

export function fuzzScale(): number {
  const scale = Number(process.env['TI_FUZZ_SCALE'] ?? '1');
  return Number.isFinite(scale) && scale > 0 ? scale : 1;
}

export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = xorshift32(seed);
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return this.next() % Math.max(1, n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() / 2 ** 32 < p;
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Values a hostile producer would put anywhere. */
function hostileValue(rng: Rng): Json {
  return rng.pick<() => Json>([
    () => null,
    () => -1,
    () => 2 ** 64,
    () => 1e308,
    () => -0,
    () => 0.5,
    () => '',
    () => '../../../etc/passwd',
    () => '/etc/passwd',
    () => 'a\u0000b',
    () => '\uD800',
    () => 'x'.repeat(5000),
    () => [],
    () => [[[[[[[[[[[]]]]]]]]]]],
    () => ({}),
    () => ({ __proto__: { polluted: true } }) as unknown as Json,
    () => true,
    () => 'F32',
    () => [2 ** 31, 2 ** 31, 2 ** 31],
    () => Array.from({ length: 2000 }, () => 1),
  ])();
}

/** Every (container, key) pair of a JSON tree, so a mutation can land anywhere in it. */
function slots(root: Json): { parent: Json[] | { [key: string]: Json }; key: string | number }[] {
  const found: { parent: Json[] | { [key: string]: Json }; key: string | number }[] = [];
  const walk = (node: Json): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => {
        found.push({ parent: node, key: i });
        walk(child);
      });
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        found.push({ parent: node, key });
        walk(child);
      }
    }
  };
  walk(root);
  return found;
}

/** 1 to 3 structural mutations of a JSON document: replace, delete, duplicate, swap types, add keys. */
export function mutateJson(root: Json, rng: Rng): { json: Json; what: string[] } {
  const what: string[] = [];
  const count = 1 + rng.int(3);
  for (let m = 0; m < count; m++) {
    const all = slots(root);
    if (all.length === 0) break;
    const { parent, key } = rng.pick(all);
    const kind = rng.int(6);
    const here = Array.isArray(parent) ? `[${key}]` : `.${key}`;
    if (kind === 0) {
      const value = hostileValue(rng);
      (parent as Record<string | number, Json>)[key] = value;
      what.push(`${here} = ${JSON.stringify(value)?.slice(0, 40)}`);
    } else if (kind === 1) {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key as string];
      what.push(`delete ${here}`);
    } else if (kind === 2 && Array.isArray(parent)) {
      parent.push(structuredClone(parent[Number(key)] as Json));
      what.push(`duplicate ${here}`);
    } else if (kind === 3) {
      const value = (parent as Record<string | number, Json>)[key] ?? null;
      const swapped: Json =
        typeof value === 'number'
          ? String(value)
          : typeof value === 'string'
            ? Number(value) || value.length
            : Array.isArray(value)
              ? {}
              : value === null
                ? 0
                : [value];
      (parent as Record<string | number, Json>)[key] = swapped;
      what.push(`retype ${here}`);
    } else if (kind === 4 && !Array.isArray(parent)) {
      parent[`unknown_${rng.int(100)}`] = hostileValue(rng);
      what.push(`add a key beside ${here}`);
    } else {
      const value = (parent as Record<string | number, Json>)[key];
      if (typeof value === 'number') {
        const next = rng.pick([value + 1, value - 1, -value, value * 1024, Number.MAX_SAFE_INTEGER + 2]);
        (parent as Record<string | number, Json>)[key] = next;
        what.push(`${here} ${value} -> ${next}`);
      } else if (typeof value === 'string' && value.length > 0) {
        const i = rng.int(value.length);
        const next = `${value.slice(0, i)}${String.fromCharCode(32 + rng.int(95))}${value.slice(i + 1)}`;
        (parent as Record<string | number, Json>)[key] = next;
        what.push(`edit a character of ${here}`);
      }
    }
  }
  return { json: root, what };
}

/** Byte mutations: flips in the first `span` bytes, a truncation, or a grown length prefix. */
export function mutateBytes(bytes: Buffer, rng: Rng, span = bytes.length): { bytes: Buffer; what: string } {
  const copy = Buffer.from(bytes);
  const kind = rng.int(4);
  if (kind === 0) {
    const flips = 1 + rng.int(8);
    for (let i = 0; i < flips; i++) {
      const at = rng.int(Math.min(span, copy.length));
      copy[at] = (copy[at] ?? 0) ^ (1 << rng.int(8));
    }
    return { bytes: copy, what: `${flips} bit flips in the first ${span} bytes` };
  }
  if (kind === 1) {
    const at = rng.int(copy.length);
    return { bytes: copy.subarray(0, at), what: `truncated to ${at} bytes` };
  }
  if (kind === 2 && copy.length >= 8) {
    const length = copy.readBigUInt64LE(0);
    const next = rng.pick([length + 1n, length - 1n, 0n, 2n ** 63n, 2n ** 64n - 1n, BigInt(copy.length)]);
    copy.writeBigUInt64LE(next & (2n ** 64n - 1n), 0);
    return { bytes: copy, what: `header length ${length} -> ${next}` };
  }
  const at = rng.int(Math.min(span, copy.length));
  copy[at] = rng.pick([0x00, 0x22, 0x5c, 0x7b, 0x7d, 0xff]);
  return { bytes: copy, what: `byte ${at} = 0x${(copy[at] ?? 0).toString(16)}` };
}

/** Every file under `root` with its size and mtime: what a run may not touch outside its target. */
export function snapshotTree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const info = statSync(path);
        files.set(path, `${info.size}:${info.mtimeMs}`);
      }
    }
  };
  walk(root);
  return files;
}

/** Paths added or changed in `after` that are not under one of `allowed`. */
export function changedOutside(before: Map<string, string>, after: Map<string, string>, allowed: readonly string[]): string[] {
  return [...after.entries()]
    .filter(([path, stamp]) => before.get(path) !== stamp)
    .map(([path]) => path)
    .filter((path) => !allowed.some((dir) => path === dir || path.startsWith(`${dir}/`)));
}

export const STACK_FRAME = /^\s{2,}at .+[(:]\d+/m;
export const INTERNAL_ERROR = /internal error/i;

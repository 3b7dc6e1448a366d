// Contracts for a reference that declares none (a native capture, a stored baseline), or that the
// user replaces on purpose: a contracts file (`--contracts FILE`) maps boundary-name patterns to
// contracts, first matching rule wins; `--contract bit_exact` fills every boundary that has none.
//
//   { "schema": "trace-inspector.contracts", "schema_version": 1,
//     "rules": [ { "boundaries": "nam.a0.l*.out", "contract": { "faithful_from_k": 48 } },
//                { "boundaries": "*",             "contract": "bit_exact" } ] }
//
// A rule's contract is "bit_exact", {"faithful_from_k": K, ...} (the gamma(K) rule of
// docs/choosing-k.md, evaluated on the reference's own values), or a full contract as a reference
// manifest spells it (docs/bundle-format.md#contracts).
import { z } from 'zod';
import { sha256File } from '../bundle/digest.ts';
import type { DType } from '../bundle/dtype.ts';
import { formatFieldPath } from '../bundle/errors.ts';
import { ContractSchema, NanPolicySchema, SignedZeroPolicySchema, type BoundaryEntry, type Contract } from '../bundle/manifest-schema.ts';
import { issuesFromZod } from '../bundle/zod-issues.ts';
import { readJsonInput } from '../io/json-input-file.ts';
import { compileNamePattern, matchName, type NamePattern } from './name-patterns.ts';
import { InputError } from '../io/input-error.ts';

const ContractsFileSchema = z.strictObject({
  schema: z.literal('trace-inspector.contracts', { error: 'expected "trace-inspector.contracts"' }),
  schema_version: z.literal(1, { error: 'expected 1 (the only version this reader speaks)' }),
  rules: z
    .array(
      z.strictObject({
        boundaries: z.string().min(1, { error: 'expected a boundary-name pattern' }),
        contract: z.unknown(),
      }),
    )
    .min(1, { error: 'expected at least one rule' }),
});

const FaithfulFromKSchema = z.strictObject({
  /** K: the longest accumulation path to the boundary (docs/choosing-k.md#counting-k). */
  faithful_from_k: z.int().min(0),
  /** The magnitude abs is relative to, when not rms(reference) (a reference that is zero). */
  scale: z.number().positive().refine(Number.isFinite, { error: 'expected a finite number' }).optional(),
  /** The dtype the value was computed in (default: F32 for BF16/F16 storage, else the boundary's dtype). */
  accumulation_dtype: z.enum(['F32', 'F64']).optional(),
  reduction_order: z.string().min(1).default('unspecified'),
  nan_policy: NanPolicySchema.default('positions'),
  signed_zero: SignedZeroPolicySchema.default('ignore'),
  oracle_rel: z.number().min(0).refine(Number.isFinite, { error: 'expected a finite number' }).nullable().default(null),
});
type FaithfulFromK = z.infer<typeof FaithfulFromKSchema>;

/** What a rule gives: a contract as it is, or the gamma(K) rule to evaluate per boundary. */
export type RuleContract = { form: 'contract'; contract: Contract } | { form: 'faithful_from_k'; rule: FaithfulFromK };

export interface ContractRule {
  index: number;
  pattern: NamePattern;
  contract: RuleContract;
}

/** Where the contracts of a comparison come from. */
export type ContractSource =
  | { kind: 'file'; path: string; sha256: string; rules: ContractRule[] }
  /** --contract bit_exact: every boundary without a contract is judged bit for bit. */
  | { kind: 'default'; contract: 'bit_exact'; why: string }
  /** Regression mode (--baseline): every boundary bit for bit, whatever the baseline declares. */
  | { kind: 'all_bit_exact'; why: string };

export function bitExactContract(reason: string): Contract {
  return { kind: 'bit_exact', nan_policy: 'positions', signed_zero: 'must_match', reason };
}

export async function loadContractsFile(path: string): Promise<ContractSource & { kind: 'file' }> {
  const parsed = await readJsonInput(path, ContractsFileSchema, 'contracts file');
  const rules: ContractRule[] = [];
  for (const [index, rule] of parsed.rules.entries()) {
    const pattern = compileNamePattern(rule.boundaries);
    if (typeof pattern === 'string') throw InputError.at(path, formatFieldPath(['rules', index, 'boundaries']), pattern);
    rules.push({ index, pattern, contract: parseRuleContract(path, index, rule.contract) });
  }
  return { kind: 'file', path, sha256: (await sha256File(path)).sha256, rules };
}

function parseRuleContract(path: string, index: number, value: unknown): RuleContract {
  const at = ['rules', index, 'contract'];
  if (value === 'bit_exact') return { form: 'contract', contract: bitExactContract(`bit_exact by rule rules[${index}] of the contracts file ${path}`) };
  if (typeof value === 'string' || value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw InputError.at(
      path,
      formatFieldPath(at),
      `expected "bit_exact", {"faithful_from_k": K} or a full contract ({"kind": "bit_exact" | "faithful", ...}), got ${JSON.stringify(value) ?? 'nothing'}`,
    );
  }
  const isFromK = 'faithful_from_k' in value;
  const parsed = isFromK ? FaithfulFromKSchema.safeParse(value) : ContractSchema.safeParse(value);
  if (!parsed.success) {
    const issue = issuesFromZod(parsed.error, value, 'E_CONTRACT', at)[0];
    throw InputError.at(path, issue?.field ?? formatFieldPath(at), issue?.message ?? 'invalid contract');
  }
  return isFromK ? { form: 'faithful_from_k', rule: parsed.data as FaithfulFromK } : { form: 'contract', contract: parsed.data as Contract };
}

/** The first rule whose pattern matches `name`, if any. */
export function ruleFor(source: ContractSource & { kind: 'file' }, name: string): ContractRule | undefined {
  return source.rules.find((rule) => matchName(rule.pattern, name) !== null);
}

/** Unit roundoff per float dtype (docs/choosing-k.md). */
const UNIT_ROUNDOFF: Partial<Record<DType, number>> = { F64: 2 ** -53, F32: 2 ** -24, C64: 2 ** -24, F16: 2 ** -11, BF16: 2 ** -8 };

const fmt = (value: number): string => Number(value.toPrecision(9)).toString();

/**
 * The gamma(K) rule on one boundary (docs/choosing-k.md): rel = 2*gamma(K) (+ 2*u_storage when it
 * is stored narrower than computed), abs = rel * scale, scale = rms(reference) unless given. A
 * string result says why the rule cannot apply (an integer boundary, a zero reference).
 */
export function faithfulFromK(rule: FaithfulFromK, entry: BoundaryEntry, referenceRms: number): Contract | string {
  const storage = UNIT_ROUNDOFF[entry.dtype];
  if (storage === undefined)
    return `matches boundary ${entry.name} (${entry.dtype}): faithful_from_k applies to floating-point boundaries; give exact values a "bit_exact" rule before this one`;
  const accumulation: DType =
    rule.accumulation_dtype ?? (entry.dtype === 'BF16' || entry.dtype === 'F16' ? 'F32' : entry.dtype === 'C64' ? 'F32' : entry.dtype);
  const unit = UNIT_ROUNDOFF[accumulation] as number;
  const K = rule.faithful_from_k;
  if (K * unit >= 1) return `K = ${K} is too long for ${accumulation} (K*u >= 1: gamma(K) is unbounded)`;
  const gamma = (K * unit) / (1 - K * unit);
  let rel = 2 * gamma;
  let extra = '';
  if (storage > unit) {
    rel += 2 * storage;
    extra = ` + 2*u_storage (u_storage = ${storage.toPrecision(3)}, one rounding to ${entry.dtype} per side)`;
  }
  let scale = referenceRms;
  let scaleText = 'rms(ref)';
  if (rule.scale !== undefined) {
    scale = rule.scale;
    scaleText = `scale ${fmt(scale)} (magnitude of the reduction's inputs)`;
  } else if (referenceRms === 0 && K > 0) {
    return `rms(reference) of ${entry.name} is 0, so abs would be 0 and any legal reordering of a reduction that cancels to zero would fail; give "scale" (the RMS of the values flowing into the reduction)`;
  }
  const abs = rel * scale;
  return {
    kind: 'faithful',
    abs,
    rel,
    max_ulp: null,
    oracle_rel: rule.oracle_rel,
    nan_policy: rule.nan_policy,
    signed_zero: rule.signed_zero,
    derivation: {
      storage_dtype: entry.dtype,
      accumulation_dtype: accumulation,
      accumulation_length: K,
      reduction_order: rule.reduction_order,
      formula: `rel = 2*gamma(K)${extra} = ${fmt(rel)}, abs = rel*${scaleText} = ${fmt(abs)}; gamma(K) = K*u/(1-K*u), K = ${K}, u = ${fmt(unit)}`,
      allowed_differences: `rounding of ${accumulation} operations in any order along a path of at most ${K} operations`,
    },
  };
}

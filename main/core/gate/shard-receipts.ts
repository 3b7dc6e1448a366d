// The signatures of a sharded run: `merge` signs one receipt over the shards' results, so it
// must first know each result is what its shard signed. Every shard result comes with the
// receipt its gate wrote (`--gate --shard K/N --receipt <file>`); the receipt's Ed25519
// signature is checked with the key merge is given (as `verify` checks one), and the signed
// statement must be exactly the one that shard result makes — the same subjects (engine,
// reference and oracle manifests, weights: the evidence it judged) and the same predicate (its
// share, seals, verdicts). A result with no receipt, a receipt that does not verify, or one that
// signs other evidence or another result is a FAIL naming the shard; nothing is merged or signed.
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { buildStatement, statementPayload } from '../receipt/in-toto.ts';
import { parseEnvelope, verifyEnvelopeBytes, type ReadEnvelope } from '../receipt/receipt.ts';
import { ReceiptError } from '../receipt/errors.ts';
import { gateReceiptPredicate, gateReceiptSubjects } from './gate-receipt.ts';
import type { LoadedShard } from './gate-merge.ts';

export interface LoadedShardReceipt {
  readonly file: string;
  readonly read: ReadEnvelope;
  /** The shard the receipt says it is of (read before its signature is checked: only to pair it). */
  readonly claims: { index: number; count: number; plan: string } | null;
}

const ClaimSchema = z.looseObject({ predicate: z.looseObject({ shard: z.looseObject({ index: z.number(), count: z.number(), plan: z.string() }) }) });

/** Whether `bytes` hold a DSSE envelope (a receipt) rather than a gate result. */
export function looksLikeReceipt(bytes: Buffer): boolean {
  try {
    const json: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof json === 'object' && json !== null && 'payloadType' in json && 'signatures' in json;
  } catch {
    return false;
  }
}

/** Reads a shard's receipt; ReceiptError when it is not a receipt at all. */
export async function loadShardReceipt(file: string): Promise<LoadedShardReceipt> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new ReceiptError('E_RECEIPT_READ', file, `cannot read the receipt (${(error as Error).message})`);
  }
  const read = parseEnvelope(bytes, file);
  let claims: LoadedShardReceipt['claims'] = null;
  try {
    const parsed = ClaimSchema.safeParse(JSON.parse(Buffer.from(read.envelope.payload, 'base64').toString('utf8')));
    if (parsed.success) claims = { index: parsed.data.predicate.shard.index, count: parsed.data.predicate.shard.count, plan: parsed.data.predicate.shard.plan };
  } catch {
    claims = null;
  }
  return { file, read, claims };
}

const label = (shard: LoadedShard): string => `shard ${shard.shard.index}/${shard.shard.count} (${shard.file})`;

/** Why the shards' receipts do not vouch for their results, one line each (empty: they do). */
export async function shardReceiptProblems(shards: readonly LoadedShard[], receipts: readonly LoadedShardReceipt[], publicKey: KeyObject): Promise<string[]> {
  const problems: string[] = [];
  const used = new Set<LoadedShardReceipt>();
  for (const shard of shards) {
    const own = receipts.filter(
      (receipt) =>
        receipt.claims !== null &&
        receipt.claims.index === shard.shard.index &&
        receipt.claims.count === shard.shard.count &&
        receipt.claims.plan === shard.shard.plan,
    );
    own.forEach((receipt) => used.add(receipt));
    if (own.length === 0) {
      problems.push(`unsigned ${label(shard)}: no receipt of this shard was given (give the receipt its gate wrote, --receipt, beside its result)`);
      continue;
    }
    if (own.length > 1) {
      problems.push(`${label(shard)}: ${own.length} receipts claim to be its (${own.map((receipt) => receipt.file).join(', ')}); give exactly one`);
      continue;
    }
    const receipt = own[0] as LoadedShardReceipt;
    const verification = await verifyEnvelopeBytes(receipt.read, { publicKey });
    if (!verification.ok || verification.statement === null) {
      problems.push(
        `bad signature on ${label(shard)}: its receipt ${receipt.file} does not verify with key ${verification.keyid}: ${verification.reasons.join('; ')}`,
      );
      continue;
    }
    const subjects = gateReceiptSubjects(shard.result);
    const signed = verification.statement.subject;
    const subjectText = (list: readonly { name: string; digest: { sha256: string } }[]): string =>
      list.map((subject) => `${subject.name}@${subject.digest.sha256}`).join(', ');
    if (subjectText(subjects) !== subjectText(signed)) {
      const differing = [
        ...subjects.filter((subject) => !signed.some((other) => other.name === subject.name && other.digest.sha256 === subject.digest.sha256)),
        ...signed.filter((subject) => !subjects.some((other) => other.name === subject.name && other.digest.sha256 === subject.digest.sha256)),
      ];
      problems.push(
        `${label(shard)}: its receipt ${receipt.file} signs other evidence than the result judged (subjects differ: ${differing.map((subject) => `${subject.name} ${subject.digest.sha256.slice(0, 12)}`).join(', ')})`,
      );
      continue;
    }
    const expected = statementPayload(buildStatement(subjects, gateReceiptPredicate(shard.result)));
    if (!expected.equals(Buffer.from(receipt.read.envelope.payload, 'base64'))) {
      problems.push(
        `${label(shard)}: its receipt ${receipt.file} signs another result (the result's verdicts, seals or share differ from what was signed: edited after it was signed?)`,
      );
    }
  }
  for (const receipt of receipts) {
    if (!used.has(receipt)) {
      const claim =
        receipt.claims === null
          ? 'not the receipt of a shard'
          : `the receipt of shard ${receipt.claims.index}/${receipt.claims.count} of plan ${receipt.claims.plan.slice(0, 12)}`;
      problems.push(`receipt ${receipt.file} (${claim}) belongs to none of the shard results given`);
    }
  }
  return problems;
}

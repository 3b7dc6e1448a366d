// `trace-inspector merge <shard result and receipt>...`: one report, one set of seals and one
// signed receipt from the results of `--gate --shard K/N --json <file> --receipt <file>`
// (gate-merge.ts). A shard missing, given twice or from another run, or whose receipt is
// missing, does not verify or signs something else (shard-receipts.ts) is a FAIL, each named;
// then nothing is signed. Exit 0/1 as the merged seals say, 1 for an incomplete, mixed or
// unsigned shard set, 2 for bad usage or unreadable input.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { writeGateReceipt } from '../../core/gate/gate-receipt.ts';
import { loadShardResult, mergeShardResults, shardSetProblems, type LoadedShard } from '../../core/gate/gate-merge.ts';
import { ReceiptError } from '../../core/receipt/errors.ts';
import { defaultUserKey, defaultUserKeyPaths, loadPrivateKey, loadPublicKey } from '../../core/receipt/keys.ts';
import { loadShardReceipt, looksLikeReceipt, shardReceiptProblems, type LoadedShardReceipt } from '../../core/gate/shard-receipts.ts';
import { formatHumanReport } from '../../core/report/human-report.ts';
import { EXIT_FAILURE, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';
import { writeRunOutputs } from '../run-outputs.ts';
import { InputError } from '../../core/io/input-error.ts';

export const MERGE_USAGE = `usage: trace-inspector merge <shard result and receipt>... [--receipt <file>] [--json <file>]
                             [--junit <file>] [--key <pem>] [--pubkey <pem>]

Combines the results of one sharded gate run (each written by \`--gate --shard K/N --json <file>
--receipt <file>\`) into one report, one set of seals and one signed receipt (--receipt, default
merged.receipt.dsse.json), the merged result as JSON (--json) and JUnit XML (--junit), and under
GitHub Actions the annotations and step summary of the merged run. Give every shard's result and
its receipt, in any order. Each receipt's signature is checked with --pubkey (default: the public
half of --key, else your per-user public key, as verify does) and must sign exactly the result it
accompanies. The shards must be exactly 1..N of one run: a missing, duplicated or foreign shard
(other cases, references, engine, options, N or split), or one without a valid receipt, is a FAIL
naming it, and nothing is signed. Shards of --shard-by passes must judge every pass of every case
exactly once: a missing or overlapping range is a FAIL naming the case and the passes. Exit 0 or 1 as the merged seals say, 1 for a bad shard set, 2 for bad
usage or unreadable input. See docs/ci.md.
`;

const MergeArgsSchema = z.object({
  receipt: z.string().min(1, { error: '--receipt: expected a file' }).optional(),
  json: z.string().min(1, { error: '--json: expected a file' }).optional(),
  junit: z.string().min(1, { error: '--junit: expected a file' }).optional(),
  key: z.string().min(1, { error: '--key: expected a PEM private key file' }).optional(),
  pubkey: z.string().min(1, { error: '--pubkey: expected the path of a PEM public key' }).optional(),
  positionals: z.array(z.string().min(1)).min(1, { error: 'expected at least one shard result file' }),
});

export async function runMergeCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseCommandArgs('merge', argv, MergeArgsSchema, { positionals: 'positionals' });
  const receipt = resolve(io.cwd, args.receipt ?? 'merged.receipt.dsse.json');
  const json = args.json === undefined ? null : resolve(io.cwd, args.json);
  const junit = args.junit === undefined ? null : resolve(io.cwd, args.junit);
  for (const [flag, path] of [
    ['--receipt', receipt],
    ['--json', json],
    ['--junit', junit],
  ] as const) {
    if (path !== null && existsSync(path)) throw new InputError(`${flag} ${path} already exists; merge never overwrites its outputs`);
  }
  let privateKey: KeyObject;
  let publicKey: KeyObject;
  try {
    privateKey = args.key !== undefined ? loadPrivateKey(resolve(io.cwd, args.key)) : defaultUserKey(io.env).privateKey;
    // The shards' receipts are checked as verify checks one: the key given, else ours.
    publicKey =
      args.pubkey !== undefined
        ? loadPublicKey(resolve(io.cwd, args.pubkey))
        : args.key !== undefined
          ? createPublicKey(privateKey)
          : loadPublicKey(defaultUserKeyPaths(io.env).publicKeyPath);
  } catch (error) {
    if (error instanceof ReceiptError) throw new InputError(`merge: ${error.message}`);
    throw error;
  }
  const shards: LoadedShard[] = [];
  const receipts: LoadedShardReceipt[] = [];
  for (const given of args.positionals) {
    const file = resolve(io.cwd, given);
    try {
      if (isReceiptFile(file)) receipts.push(await loadShardReceipt(file));
      else shards.push(await loadShardResult(file));
    } catch (error) {
      if (error instanceof InputError) throw error.within('merge');
      if (error instanceof ReceiptError) throw new InputError(`merge: ${error.message}`);
      throw error;
    }
  }
  const problems = shardSetProblems(shards);
  if (problems.length === 0) problems.push(...(await shardReceiptProblems(shards, receipts, publicKey)));
  if (problems.length > 0) {
    for (const problem of problems) io.stdout(`SHARD: ${problem}\n`);
    io.stdout('FIDELITY: FAIL\nOVERALL: FAIL reason=shard_set\n');
    io.stderr('merge: the shard results are not one complete, signed run: nothing was merged or signed (exit 1)\n');
    return EXIT_FAILURE;
  }
  const result = mergeShardResults(shards);
  // The merged run's outputs are the gate's (run-outputs.ts): --json, --junit, the receipt, and
  // under GitHub Actions the annotations and the step summary, so it reads as one run.
  const written = await writeRunOutputs(io, 'merge', result, {
    json: json ?? undefined,
    junit: junit ?? undefined,
    receipt,
    writeReceipt: (path) => writeGateReceipt(result, path, privateKey),
  });
  if (written.writeFailed) return EXIT_FAILURE;
  io.stdout(`merged ${shards.length} shard(s): ${shards.map((item) => `${item.shard.index}/${item.shard.count} ${item.file}`).join(', ')}\n`);
  io.stdout(formatHumanReport(result, { files: written.files }));
  return result.seals.exitCode;
}

/** A receipt (a DSSE envelope) rather than a shard result; unreadable files are left to the loaders to name. */
function isReceiptFile(file: string): boolean {
  try {
    // A receipt is at most a few MiB; a larger file is a result (or neither, which its loader names).
    if (statSync(file).size > 64 * 1024 * 1024) return false;
    return looksLikeReceipt(readFileSync(file));
  } catch {
    return false;
  }
}

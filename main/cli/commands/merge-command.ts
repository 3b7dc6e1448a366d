// `trace-inspector merge <shard result>...`: one report, one set of seals and one signed receipt
// from the results of `--gate --shard K/N --json <file>` (gate-merge.ts). A shard missing, given
// twice or from another run is a FAIL, each named; then nothing is signed. Exit 0/1 as the
// merged seals say, 1 for an incomplete or mixed shard set, 2 for bad usage or unreadable input.
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { writeGateReceipt } from '../../core/gate/gate-receipt.ts';
import { loadShardResult, mergeShardResults, shardSetProblems, type LoadedShard } from '../../core/gate/gate-merge.ts';
import { ReceiptError } from '../../core/receipt/errors.ts';
import { defaultUserKey, loadPrivateKey } from '../../core/receipt/keys.ts';
import { formatHumanReport } from '../../core/report/human-report.ts';
import { serializeGateResult } from '../../core/report/json-report.ts';
import { writeNewFileAtomically } from '../../core/report/new-file.ts';
import { EXIT_FAILURE, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const MERGE_USAGE = `usage: trace-inspector merge <shard result>... [--receipt <file>] [--json <file>] [--key <pem>]

Combines the results of one sharded gate run (each written by \`--gate --shard K/N --json <file>\`)
into one report, one set of seals and one signed receipt (--receipt, default merged.receipt.dsse.json),
and the merged result as JSON (--json). The shards must be exactly 1..N of one run: a missing,
duplicated or foreign shard (other cases, references, engine, options or N) is a FAIL naming it,
and nothing is signed. Exit 0 or 1 as the merged seals say, 1 for a bad shard set, 2 for bad
usage or unreadable input. See docs/ci.md.
`;

const MergeArgsSchema = z.object({
  receipt: z.string().min(1, { error: '--receipt: expected a file' }).optional(),
  json: z.string().min(1, { error: '--json: expected a file' }).optional(),
  key: z.string().min(1, { error: '--key: expected a PEM private key file' }).optional(),
  positionals: z.array(z.string().min(1)).min(1, { error: 'expected at least one shard result file' }),
});

export async function runMergeCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseCommandArgs('merge', argv, MergeArgsSchema, { positionals: 'positionals' });
  const receipt = resolve(io.cwd, args.receipt ?? 'merged.receipt.dsse.json');
  const json = args.json === undefined ? null : resolve(io.cwd, args.json);
  for (const [flag, path] of [['--receipt', receipt], ['--json', json]] as const) {
    if (path !== null && existsSync(path)) throw new InputError(`${flag} ${path} already exists; merge never overwrites its outputs`);
  }
  let privateKey;
  try {
    privateKey = args.key !== undefined ? loadPrivateKey(resolve(io.cwd, args.key)) : defaultUserKey(io.env).privateKey;
  } catch (error) {
    if (error instanceof ReceiptError) throw new InputError(`merge: ${error.message}`);
    throw error;
  }
  const shards: LoadedShard[] = [];
  for (const file of args.positionals) {
    try {
      shards.push(await loadShardResult(resolve(io.cwd, file)));
    } catch (error) {
      if (error instanceof InputError) throw error.within('merge');
      throw error;
    }
  }
  const problems = shardSetProblems(shards);
  if (problems.length > 0) {
    for (const problem of problems) io.stdout(`SHARD: ${problem}\n`);
    io.stdout('FIDELITY: FAIL\nOVERALL: FAIL reason=shard_set\n');
    io.stderr('merge: the shard results are not one complete run: nothing was merged or signed (exit 1)\n');
    return EXIT_FAILURE;
  }
  const result = mergeShardResults(shards);
  const files: { label: string; path: string }[] = [];
  try {
    if (json !== null) {
      await writeNewFileAtomically(json, serializeGateResult(result));
      files.push({ label: 'json', path: json });
    }
    await writeGateReceipt(result, receipt, privateKey);
    files.push({ label: 'receipt', path: receipt });
  } catch (error) {
    io.stderr(`merge: cannot write the merged outputs: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
  io.stdout(`merged ${shards.length} shard(s): ${shards.map((item) => `${item.shard.index}/${item.shard.count} ${item.file}`).join(', ')}\n`);
  io.stdout(formatHumanReport(result, { files }));
  return result.seals.exitCode;
}

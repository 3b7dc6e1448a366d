// `trace-inspector compare <reference bundle> <candidate bundle>`: judges one existing bundle
// against another (no engine runs) with the gate's verdicts, reports and seals, writes a signed
// receipt whose subjects are both bundles, and exits 0 (pass), 1 (fail) or 2 (bad usage or
// invalid input). `--baseline <bundle> <candidate>` is the regression mode: bit for bit against a
// stored capture of the last release. See docs/compare.md.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { COMPARE_RECEIPT_FILE_NAME, writeCompareReceipt } from '../../core/compare/compare-receipt.ts';
import { compareEvidenceChanged } from '../../core/compare/compare-recheck.ts';
import { compareHeader } from '../../core/compare/compare-report.ts';
import { runCompare, type CompareResult } from '../../core/compare/compare-run.ts';
import { formatHumanReport } from '../../core/report/human-report.ts';
import { humanChannel, outputPath, STDOUT, writeRunOutputs } from '../run-outputs.ts';
import { EXIT_FAILURE, EXIT_USAGE, type CliIO } from '../cli-io.ts';
import { signingKey } from './gate-command.ts';
import { jsonOutputArg, parseCommandArgs } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const COMPARE_USAGE = `usage: trace-inspector compare <reference bundle> <candidate bundle> [--oracle <bundle>]
                               [--contracts <file> | --contract bit_exact] [--map <file>]
                               [--strict] [--receipt <file>] [--json <file|->] [--junit <file>]
                               [--key <pem>] [--ledger <file>]
       trace-inspector compare --baseline <bundle> <candidate bundle> [same options]

Judges the candidate bundle against the reference bundle, boundary by boundary, pass by pass,
without running any engine: either may be a reference, an oracle-f64 or a native capture. Prints
the gate's verdicts and seals (last lines), writes a signed receipt whose subjects are both
bundles (default runs/compare-<time>/${COMPARE_RECEIPT_FILE_NAME}), and exits 0 (PASSED or
PASSED_WITH_GAPS), 1 (OVERALL: FAIL) or 2 (bad usage or invalid input).
Contracts: the reference's own; --contracts FILE (boundary-name patterns -> "bit_exact",
{"faithful_from_k": K} or a full contract) replaces them where a rule matches; a reference that
declares none (a native capture) is judged bit_exact (--contract bit_exact, the default).
--map FILE renames (and may permute or widen) candidate boundaries to the reference's names and
declares the ones that have no counterpart. --oracle names a second implementation: where the
candidate passes one and fails the other the row is REVIEW_REQUIRED. --baseline gates the
candidate bit for bit against a stored bundle of the last release. --json - writes the JSON
result to stdout (the human report then goes to stderr). See docs/compare.md.
`;

const CompareArgsSchema = z.object({
  baseline: z.string().min(1, { error: '--baseline: expected a bundle folder' }).optional(),
  oracle: z.string().min(1, { error: '--oracle: expected a bundle folder' }).optional(),
  contracts: z.string().min(1, { error: '--contracts: expected a file' }).optional(),
  contract: z.enum(['bit_exact'], { error: '--contract: expected "bit_exact" (other contracts go in a --contracts file)' }).optional(),
  map: z.string().min(1, { error: '--map: expected a file' }).optional(),
  strict: z.boolean().default(false),
  receipt: z.string().min(1, { error: '--receipt: expected a file' }).optional(),
  junit: z.string().min(1, { error: '--junit: expected a file' }).optional(),
  json: jsonOutputArg,
  key: z.string().min(1, { error: '--key: expected a PEM private key file' }).optional(),
  ledger: z.string().min(1, { error: '--ledger: expected a file' }).optional(),
  bundles: z.array(z.string().min(1, { error: 'expected a bundle folder' })),
});

function parseCompareArgs(argv: readonly string[]): { args: Omit<z.infer<typeof CompareArgsSchema>, 'bundles'>; reference: string; candidate: string } {
  const { bundles: positionals, ...args } = parseCommandArgs('compare', argv, CompareArgsSchema, { positionals: 'bundles' });
  if (args.contracts !== undefined && args.contract !== undefined) throw new InputError('compare: give --contracts FILE or --contract bit_exact, not both');
  const wanted = args.baseline !== undefined ? 1 : 2;
  if (positionals.length !== wanted) {
    throw new InputError(
      args.baseline !== undefined
        ? `compare: --baseline <bundle> takes one more bundle, the candidate; got ${positionals.length}`
        : `compare: expected two bundles, the reference and the candidate; got ${positionals.length}`,
    );
  }
  const reference = args.baseline ?? (positionals[0] as string);
  const candidate = positionals[wanted - 1] as string;
  return { args, reference, candidate };
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

export async function runCompareCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { args, reference, candidate } = parseCompareArgs(argv);
  const receipt = resolve(io.cwd, args.receipt ?? join('runs', `compare-${timestamp()}`, COMPARE_RECEIPT_FILE_NAME));
  const outputs = [
    ['--receipt', receipt],
    ...(args.json !== undefined && args.json !== STDOUT ? [['--json', resolve(io.cwd, args.json)]] : []),
    ...(args.junit !== undefined ? [['--junit', resolve(io.cwd, args.junit)]] : []),
  ] as [string, string][];
  for (const [flag, path] of outputs) {
    if (existsSync(path))
      throw new InputError(`compare: ${flag} ${path} already exists; compare never overwrites its outputs (choose another path or move it away)`);
  }
  for (const [index, [flag, path]] of outputs.entries()) {
    const clash = outputs.findIndex(([, other]) => other === path);
    if (clash !== index) throw new InputError(`compare: ${outputs[clash]?.[0]} and ${flag} name the same file ${path}`);
  }
  const key = signingKey(args, io, 'compare');

  let result: CompareResult;
  try {
    result = await runCompare({
      referenceDir: resolve(io.cwd, reference),
      candidateDir: resolve(io.cwd, candidate),
      oracleDir: args.oracle === undefined ? null : resolve(io.cwd, args.oracle),
      contractsFile: args.contracts === undefined ? null : resolve(io.cwd, args.contracts),
      defaultContract: args.contract ?? 'bit_exact',
      mapFile: args.map === undefined ? null : resolve(io.cwd, args.map),
      baseline: args.baseline !== undefined,
      strict: args.strict,
      ledgerFile: args.ledger === undefined ? null : resolve(io.cwd, args.ledger),
    });
  } catch (error) {
    if (error instanceof InputError) throw error.within('compare');
    throw error;
  }
  for (const warning of result.warnings) io.stderr(`compare: warning: ${warning}\n`);
  const changed = await compareEvidenceChanged(result);
  if (changed !== null) {
    io.stderr(`compare: ${changed}\ncompare: the evidence is not what was judged: no receipt or report was written (exit 2)\n`);
    return EXIT_USAGE;
  }

  const { files, writeFailed } = await writeRunOutputs(io, 'compare', result, {
    json: args.json === undefined ? undefined : outputPath(io.cwd, args.json),
    junit: args.junit === undefined ? undefined : resolve(io.cwd, args.junit),
    receipt,
    writeReceipt: (path) => writeCompareReceipt(result, path, key.privateKey),
    notices: (result.comparison.map?.unmapped ?? []).map(
      (row) => `::notice title=trace-inspector compare: unmapped on purpose::${row.candidate}: ${row.reason}`,
    ),
  });
  humanChannel(io, args.json)(formatHumanReport(result, { files, header: compareHeader(result) }));
  if (writeFailed) {
    io.stderr('compare: an output could not be written: exit 1 whatever the seals say (a comparison without its evidence does not pass)\n');
    return EXIT_FAILURE;
  }
  return result.seals.exitCode;
}

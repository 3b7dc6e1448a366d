// `trace-inspector check <bundle>...`: validates bundles with every rule a reader applies and
// reports every problem at once (main/core/bundle/bundle-check.ts). Exit 0 when all are sound,
// 2 when any problem was found. The Python kit runs it when a writer closes.
import { resolve } from 'node:path';
import { z } from 'zod';
import { checkBundle, type BundleCheckReport } from '../../core/bundle/bundle-check.ts';
import { writeFileSync } from 'node:fs';
import { EXIT_OK, EXIT_USAGE, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const CHECK_USAGE = `usage: trace-inspector check [--reference <dir>] [--json <file|->] <bundle>...

Validates each bundle as every reader does — manifest schema and rules, each listed file
(inside the bundle, regular, size, sha256), each safetensors header against the manifest, each
tensor's sha256 — and reports every problem at once, naming the file and the field. With
--reference, also checks that the bundle (an oracle, or another reference of the same case)
has the reference's passes and stores every boundary in the reference's dtype and shape.
--json writes the report as JSON (- for stdout). Exit 0: no problem; 2: problems found.
See docs/bundle-format.md.
`;

const CheckArgsSchema = z.object({
  reference: z.string().min(1, { error: '--reference: expected a bundle folder' }).optional(),
  json: z.string().min(1, { error: '--json: expected a file or -' }).optional(),
  bundles: z.array(z.string().min(1)).min(1, { error: 'expected at least one bundle folder' }),
});

function parseCheckArgs(argv: readonly string[]): z.infer<typeof CheckArgsSchema> {
  return parseCommandArgs('check', argv, CheckArgsSchema, { positionals: 'bundles' });
}

function describeReport(report: BundleCheckReport): string {
  if (report.problems.length === 0) {
    const mib = (report.fileBytes / (1024 * 1024)).toFixed(1);
    return `OK       ${report.dir}: ${report.kind} bundle of case "${report.caseId}", ${report.passes} passes, ${report.boundaries} boundaries, ${mib} MiB verified\n`;
  }
  const lines = report.problems.map((problem) => `  ${problem.code}  ${problem.file}: ${problem.field}: ${problem.message}\n`);
  return `PROBLEMS ${report.dir}: ${report.problems.length}\n${lines.join('')}`;
}

export async function runCheckCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseCheckArgs(argv);
  const reference = args.reference === undefined ? undefined : resolve(io.cwd, args.reference);
  const reports: BundleCheckReport[] = [];
  for (const given of args.bundles) {
    reports.push(await checkBundle(resolve(io.cwd, given), reference === undefined ? {} : { reference }));
  }
  const ok = reports.every((report) => report.problems.length === 0);
  const json = `${JSON.stringify({ ok, bundles: reports, problems: reports.flatMap((report) => report.problems) }, null, 2)}\n`;
  if (args.json === '-') io.stdout(json);
  else {
    for (const report of reports) io.stdout(describeReport(report));
    if (args.json !== undefined) {
      const out = resolve(io.cwd, args.json);
      try {
        writeFileSync(out, json, { flag: 'wx' });
      } catch (error) {
        throw new InputError(
          `check: --json ${out}: ${(error as NodeJS.ErrnoException).code === 'EEXIST' ? 'exists already (reports are never overwritten)' : (error as Error).message}`,
        );
      }
    }
  }
  return ok ? EXIT_OK : EXIT_USAGE;
}

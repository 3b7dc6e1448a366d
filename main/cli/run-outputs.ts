// The outputs a judged run leaves (--gate and compare): --json, --junit and the signed receipt,
// each written all or nothing; and under GitHub Actions the annotations and the step summary.
// A report or receipt that cannot be written fails the run: a verdict without its evidence
// does not pass.
import { appendFile } from 'node:fs/promises';
import type { GateResult } from '../core/gate/gate-types.ts';
import { formatAnnotations, formatStepSummary } from '../core/report/github-actions.ts';
import { serializeGateResult } from '../core/report/json-report.ts';
import { formatJunit } from '../core/report/junit-report.ts';
import { writeNewFileAtomically } from '../core/report/new-file.ts';
import type { CliIO } from './cli-io.ts';

export interface RunOutputs {
  /** Resolved paths, or undefined when not asked for. */
  json: string | undefined;
  junit: string | undefined;
  receipt: string;
  writeReceipt: (path: string) => Promise<unknown>;
  /** Extra GitHub Actions lines (after the annotations). */
  notices?: readonly string[];
}

export interface WrittenOutputs {
  files: { label: string; path: string }[];
  /** Some output could not be written (each said on stderr, prefixed by the command). */
  writeFailed: boolean;
}

export async function writeRunOutputs(io: CliIO, command: string, result: GateResult, outputs: RunOutputs): Promise<WrittenOutputs> {
  const written: WrittenOutputs = { files: [], writeFailed: false };
  const attempt = async (label: string, path: string, write: () => Promise<unknown>): Promise<void> => {
    try {
      await write();
      written.files.push({ label, path });
    } catch (error) {
      written.writeFailed = true;
      io.stderr(`${command}: cannot write the ${label} ${path}: ${(error as Error).message}\n`);
    }
  };
  const { json, junit, receipt } = outputs;
  if (json !== undefined) await attempt('json', json, () => writeNewFileAtomically(json, serializeGateResult(result)));
  if (junit !== undefined) await attempt('junit', junit, () => writeNewFileAtomically(junit, formatJunit(result)));
  await attempt('receipt', receipt, () => outputs.writeReceipt(receipt));

  if (io.env['GITHUB_ACTIONS'] === 'true') {
    const workspace = io.env['GITHUB_WORKSPACE'] ?? io.cwd;
    for (const line of formatAnnotations(result, { workspace })) io.stdout(`${line}\n`);
    for (const line of outputs.notices ?? []) io.stdout(`${line}\n`);
    const summaryFile = io.env['GITHUB_STEP_SUMMARY'];
    if (summaryFile) {
      try {
        await appendFile(summaryFile, formatStepSummary(result), 'utf8');
      } catch (error) {
        io.stderr(`${command}: cannot append the step summary to ${summaryFile}: ${(error as Error).message}\n`);
      }
    }
  }
  return written;
}

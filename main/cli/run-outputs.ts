// The outputs a judged run leaves (--gate and compare): --json, --junit and the signed receipt,
// each written all or nothing; and under GitHub Actions the annotations and the step summary.
// A report or receipt that cannot be written fails the run: a verdict without its evidence
// does not pass. `--json -` writes the JSON to stdout, so a script can pipe it; everything meant
// for people (the human report, the annotations) then goes to stderr and stdout holds one JSON
// document.
import { appendFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { GateResult } from '../core/gate/gate-types.ts';
import { formatAnnotations, formatStepSummary } from '../core/report/github-actions.ts';
import { serializeGateResult } from '../core/report/json-report.ts';
import { formatJunit } from '../core/report/junit-report.ts';
import { writeNewFileAtomically } from '../core/report/new-file.ts';
import type { CliIO } from './cli-io.ts';

/** The --json value that means stdout. */
export const STDOUT = '-';

/** A --json/--junit/--receipt value resolved against the working folder; '-' stays stdout. */
export function outputPath(cwd: string, given: string): string {
  return given === STDOUT ? STDOUT : resolve(cwd, given);
}

/** Where the human report goes: stdout, or stderr when stdout carries the JSON. */
export function humanChannel(io: CliIO, json: string | undefined): (text: string) => void {
  return json === STDOUT ? (text) => io.stderr(text) : (text) => io.stdout(text);
}

export interface RunOutputs {
  /** Resolved paths ('-' for the JSON: stdout), or undefined when not asked for. */
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
  if (json === STDOUT) io.stdout(serializeGateResult(result));
  else if (json !== undefined) await attempt('json', json, () => writeNewFileAtomically(json, serializeGateResult(result)));
  if (junit !== undefined) await attempt('junit', junit, () => writeNewFileAtomically(junit, formatJunit(result)));
  await attempt('receipt', receipt, () => outputs.writeReceipt(receipt));

  if (io.env['GITHUB_ACTIONS'] === 'true') {
    const workspace = io.env['GITHUB_WORKSPACE'] ?? io.cwd;
    // The runner reads workflow commands from stdout and stderr alike.
    const human = humanChannel(io, json);
    for (const line of formatAnnotations(result, { workspace })) human(`${line}\n`);
    for (const line of outputs.notices ?? []) human(`${line}\n`);
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

// The receipt of a two-bundle session (an opened run, no engine): exporting runs the real
// comparison (runCompare) on the session's two bundles with the session's contracts file,
// default contract and map file, and signs its receipt (writeCompareReceipt), so an app receipt
// is exactly what `trace-inspector compare` would have written — its subjects both bundles'
// manifests (and the oracle's), the contracts file and the map file with their digests.
import { mkdtemp } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { ReceiptExport } from '../../protocol/inspector-api.ts';
import { COMPARE_RECEIPT_FILE_NAME, writeCompareReceipt } from '../core/compare/compare-receipt.ts';
import { runCompare, type CompareResult } from '../core/compare/compare-run.ts';
import { createOutputFolder } from '../core/io/output-folder.ts';
import type { ComparisonSettings } from './session-comparison.ts';
import { DEFAULT_CONTRACT } from './session-comparison.ts';
import { CALL_CODES, callError } from './session-errors.ts';
import { exportedReceipt, signingKey } from './session-receipt.ts';

export interface ComparisonReceiptInput {
  referenceDir: string;
  candidateDir: string;
  oracleDir: string | null;
  settings: ComparisonSettings;
  /** The session's work folder; the receipt goes to a new `receipt-*` folder in it. */
  workDir: string;
  /** An Ed25519 private key (PKCS#8 PEM); null: the per-user default key. */
  keyPath: string | null;
}

/** A file set in the session must be the file the receipt names: a changed one is refused, never signed over. */
function requireUnchanged(what: string, path: string, expected: string, actual: string | null): void {
  if (actual !== expected) {
    throw callError(
      CALL_CODES.state,
      `${path}: the ${what} changed since it was set (sha256 ${expected} then, ${actual ?? 'unreadable'} now): set it again to judge and sign what it says now`,
    );
  }
}

function subjectFiles(result: CompareResult): [string, string][] {
  const { comparison } = result;
  const files: [string, string][] = [
    [comparison.reference.subjectName, comparison.reference.manifestPath],
    [comparison.candidate.subjectName, comparison.candidate.manifestPath],
  ];
  if (comparison.oracle !== null) files.push([comparison.oracle.subjectName, comparison.oracle.manifestPath]);
  if (comparison.contracts.file !== null) files.push([basename(comparison.contracts.file), comparison.contracts.file]);
  if (comparison.map !== null) files.push([basename(comparison.map.file), comparison.map.file]);
  return files;
}

export async function exportComparisonReceipt(input: ComparisonReceiptInput): Promise<ReceiptExport> {
  // The key first: a key that cannot be read must not cost a whole comparison.
  const privateKey = signingKey(input.keyPath);
  const { settings } = input;
  await createOutputFolder(input.workDir, 'the work folder');
  const dir = await mkdtemp(join(resolve(input.workDir), 'receipt-'));
  const result = await runCompare({
    referenceDir: input.referenceDir,
    candidateDir: input.candidateDir,
    oracleDir: input.oracleDir,
    contractsFile: settings.contractsFile?.path ?? null,
    defaultContract: DEFAULT_CONTRACT,
    mapFile: settings.map?.path ?? null,
    baseline: settings.everyBoundary,
    strict: false,
    ledgerFile: null,
  });
  if (settings.contractsFile !== null)
    requireUnchanged('contracts file', settings.contractsFile.path, settings.contractsFile.sha256, result.comparison.contracts.sha256);
  if (settings.map !== null) requireUnchanged('map file', settings.map.path, settings.map.sha256, result.comparison.map?.sha256 ?? null);
  const file = join(dir, COMPARE_RECEIPT_FILE_NAME);
  const written = await writeCompareReceipt(result, file, privateKey);
  return exportedReceipt(file, written.keyid, privateKey, result, subjectFiles(result));
}

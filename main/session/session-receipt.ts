// Receipts from the app. Exporting runs the real gate (runGate) on the session's one case —
// the same engine, options, teacher forcing and isolation — into a new folder under the work
// folder and signs its receipt (writeGateReceipt), so an app receipt is exactly what
// `trace-inspector --gate` would have written for that case, never a summary of the session's
// own rows. Verifying a receipt text lives in session-receipt-verify.ts.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { ReceiptExport } from '../../protocol/inspector-api.ts';
import { GATE_RECEIPT_FILE_NAME, writeGateReceipt } from '../core/gate/gate-receipt.ts';
import { runGate } from '../core/gate/gate-run.ts';
import type { GateResult } from '../core/gate/gate-types.ts';
import { defaultUserKey, loadPrivateKey } from '../core/receipt/keys.ts';
import { rememberSubjectFiles } from './session-subject-files.ts';
import { createOutputFolder } from '../core/io/output-folder.ts';
import type { SuppliedContracts } from '../core/compare/reference-contracts.ts';

export { verifyReceiptText } from './session-receipt-verify.ts';

export interface ReceiptExportInput {
  library: string;
  referenceDir: string;
  oracleDir: string | null;
  engineOptions: Record<string, string>;
  teacherForce: boolean;
  isolation: 'process' | 'thread';
  /** The session's work folder; the gate's run and the receipt go to a new `receipt-*` folder in it. */
  workDir: string;
  /** An Ed25519 private key (PKCS#8 PEM); null: the per-user default key (created on first use). */
  keyPath: string | null;
  /** Contracts the session judges the reference under (its contracts file or default contract), or null: the manifest's own. */
  referenceContracts?: SuppliedContracts | null;
}

/** The gate's per-call watchdog (its CLI default, --timeout 60). */
const PASS_TIMEOUT_MS = 60_000;

export function signingKey(keyPath: string | null): KeyObject {
  // TRACE_INSPECTOR_CONFIG_DIR (keys.ts) moves the default key, so tests never touch ~/.config.
  return keyPath === null ? defaultUserKey(process.env).privateKey : loadPrivateKey(resolve(keyPath));
}

/** Every subject's file as the gate hashed it, so verifying the text later re-hashes the same files. */
function subjectFiles(result: GateResult): [string, string][] {
  const files: [string, string][] = [[result.engine.subjectName, result.engine.library]];
  for (const item of result.cases) {
    files.push([item.reference.subjectName, item.reference.manifestPath]);
    if (item.weights !== null) files.push([item.weights.subjectName, item.weights.path]);
    if (item.oracle !== null) files.push([item.oracle.subjectName, item.oracle.manifestPath]);
  }
  const supplied = result.options.referenceContracts;
  if (supplied?.file != null) files.push([basename(supplied.file), supplied.file]);
  return files;
}

export async function exportSessionReceipt(input: ReceiptExportInput): Promise<ReceiptExport> {
  // The key first: a key that cannot be read must not cost a whole gate run.
  const privateKey = signingKey(input.keyPath);
  await createOutputFolder(input.workDir, 'the work folder');
  const dir = await mkdtemp(join(resolve(input.workDir), 'receipt-'));
  const result = await runGate({
    library: input.library,
    cases: [{ referenceDir: input.referenceDir, oracleDir: input.oracleDir }],
    strict: false,
    isolation: input.isolation,
    passTimeoutMs: PASS_TIMEOUT_MS,
    engineOptions: { ...input.engineOptions },
    teacherForce: input.teacherForce,
    isolate: false,
    workDir: join(dir, 'gate'),
    ledgerFile: null,
    referenceContracts: input.referenceContracts ?? null,
    command: 'trace-inspector app: export receipt',
  });
  const file = join(dir, GATE_RECEIPT_FILE_NAME);
  const written = await writeGateReceipt(result, file, privateKey);
  return exportedReceipt(file, written.keyid, privateKey, result, subjectFiles(result));
}

/** What the app shows of a receipt just written (the gate's or compare's), its subject files remembered for verifying it. */
export async function exportedReceipt(
  file: string,
  keyId: string,
  privateKey: KeyObject,
  result: GateResult,
  subjects: [string, string][],
): Promise<ReceiptExport> {
  rememberSubjectFiles(subjects);
  return {
    path: file,
    envelope: await readFile(file, 'utf8'),
    publicKeyPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
    keyId,
    fidelity: result.seals.fidelity,
    overall: result.seals.overall,
    seals: result.seals.lines,
  };
}

// How the session fails a call, and the list of errors the user sees in the snapshot.
//
// A rejected call carries a stable code (hosts and the renderer switch on it) and a specific
// message (the file and the field, the pass and the boundary). Errors that concern the user's
// evidence or engine — not a mistaken call — are also kept in the snapshot's `errors` until
// dismissed, so a failure in a long run stays visible after the call that caused it returned.
import { EngineCallError, EngineHostDeadError, EngineHostError, EngineLoadError } from '../engine-host/engine-errors.ts';
import { InspectorCallError, type SessionError } from '../../protocol/inspector-api.ts';
import { BundleError } from '../core/bundle/errors.ts';
import { LedgerError } from '../core/gate/ledger.ts';
import { PathConfinementError } from '../core/bundle/path-confinement.ts';
import { GuardedReadError } from '../core/io/guarded-read.ts';
import { OutputFolderError } from '../core/io/output-folder.ts';
import { JudgeFailure } from './judge-pool.ts';
import { ReceiptError } from '../core/receipt/errors.ts';
import { InputError } from '../core/io/input-error.ts';

export const CALL_CODES = {
  /** The request does not match the method's schema, or names something that does not exist. */
  request: 'E_REQUEST',
  /** Another engine operation is running. */
  busy: 'E_BUSY',
  /** The call does not fit the session's state (no engine open, the run ended...). */
  state: 'E_STATE',
  /** The engine library cannot be loaded, or refused what it was given. */
  engine: 'E_ENGINE',
  /** A bundle (or its ledger, or a contracts or map file) failed validation or could not be read. */
  bundle: 'E_BUNDLE',
  /** The core produced a response its own schema rejects (a bug, reported rather than sent). */
  response: 'E_RESPONSE',
  /** Anything else: an unexpected failure inside the core. */
  internal: 'E_INTERNAL',
} as const;
export type CallCode = (typeof CALL_CODES)[keyof typeof CALL_CODES];

export function callError(code: CallCode, message: string): InspectorCallError {
  return new InspectorCallError(code, message);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The code a failure maps to; messages are kept verbatim (they already name file, field, pass). */
export function codeOf(error: unknown): string {
  if (error instanceof InspectorCallError) return error.code;
  // A judging worker that failed or died: the evidence could not be read or judged.
  if (error instanceof BundleError || error instanceof LedgerError || error instanceof PathConfinementError || error instanceof JudgeFailure)
    return CALL_CODES.bundle;
  // A key, receipt or other file named in the request that is missing, special or too large.
  if (error instanceof ReceiptError || error instanceof GuardedReadError) return CALL_CODES.request;
  if (error instanceof OutputFolderError) return CALL_CODES.state;
  if (error instanceof EngineLoadError || error instanceof EngineCallError) return CALL_CODES.engine;
  // Bad input met by a core call: an option or input the engine refused is the engine's answer; a
  // file that failed validation (a contracts or map file: compare's evidence inputs, named with
  // the field) is like a bundle that did; anything else (a teacher-forced boundary with nothing
  // to force) is a request for what cannot be done.
  if (error instanceof InputError) {
    if (error.cause instanceof EngineCallError) return CALL_CODES.engine;
    return error.file !== null ? CALL_CODES.bundle : CALL_CODES.request;
  }
  if (error instanceof EngineHostDeadError || error instanceof EngineHostError) return CALL_CODES.engine;
  return CALL_CODES.internal;
}

/** Any failure as the InspectorCallError a host sends back. */
export function asCallError(error: unknown): InspectorCallError {
  if (error instanceof InspectorCallError) return error;
  return new InspectorCallError(codeOf(error), messageOf(error));
}

/** Errors shown in the snapshot; the newest last, at most `limit` kept. */
export class SessionErrorLog {
  private readonly entries: SessionError[] = [];
  private nextId = 1;

  constructor(private readonly limit = 50) {}

  add(action: string, message: string): SessionError {
    const entry: SessionError = { id: this.nextId++, at: new Date().toISOString(), action, message };
    this.entries.push(entry);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    return entry;
  }

  /** False when no error has that id (already dismissed, or never was). */
  dismiss(id: number): boolean {
    const at = this.entries.findIndex((entry) => entry.id === id);
    if (at === -1) return false;
    this.entries.splice(at, 1);
    return true;
  }

  list(): SessionError[] {
    return this.entries.map((entry) => ({ ...entry }));
  }
}

// The session: snapshots from calls and events, the rows that follow rowsVersion, and the
// commands that drive the engine. The core keeps the session, so a reload or a reconnect only
// has to ask for it again.
import type { InspectorMethod, MethodRequest, OracleChoice, SessionSnapshot } from '../../../../protocol/inspector-api.ts';
import { mergeRows } from '../../../../protocol/rows-merge.ts';
import { api } from '../../api/inspector-client.ts';
import { getState, setState, type InspectorState } from '../inspector-store.ts';
import { attempt } from './attempt.ts';
import { errorMessage, pushLocalError } from './error-actions.ts';

/** Methods whose response is the session snapshot after them. */
type SnapshotMethod = Extract<
  InspectorMethod,
  | 'getSession'
  | 'openEngine'
  | 'openBundle'
  | 'openRun'
  | 'openDefault'
  | 'setOracle'
  | 'setIsolation'
  | 'setTeacherForce'
  | 'setEngineOptions'
  | 'setContractsFile'
  | 'setDefaultContract'
  | 'setMapFile'
  | 'setOracleBundle'
  | 'prefill'
  | 'step'
  | 'runToEnd'
  | 'runToFirstDivergence'
  | 'reset'
  | 'dismissError'
>;

function applySnapshot(snapshot: SessionSnapshot): void {
  setState((state) => ({ snapshot, progress: snapshot.busy === null ? null : state.progress }));
  if (snapshot.rowsVersion !== getState().rowsVersion) void refreshRows();
}

let rowsFetch: Promise<void> | null = null;

/** The rows at the store's version, or null when they must be fetched whole. */
async function fetchRows(): Promise<{ rows: InspectorState['rows']; rowsVersion: number } | null> {
  const held = getState();
  // Ask only for what was appended since the version held (a step's rows, not the whole run).
  const reply = await attempt('load boundary rows', 'getRows', held.rowsVersion >= 0 ? { since: held.rowsVersion } : {});
  if (reply === null) return null;
  const merged = mergeRows(held.rows, reply);
  if (merged !== null) return { rows: merged, rowsVersion: reply.rowsVersion };
  // The append did not continue the rows held: take them all rather than show a spliced list.
  const full = await attempt('load boundary rows', 'getRows', {});
  const rows = full === null ? null : mergeRows(held.rows, full);
  return full === null || rows === null ? null : { rows, rowsVersion: full.rowsVersion };
}

/** One fetch at a time; when it lands and the snapshot has moved on again, fetch once more. */
export function refreshRows(): Promise<void> {
  if (rowsFetch !== null) return rowsFetch;
  rowsFetch = (async () => {
    try {
      for (let round = 0; round < 4; round += 1) {
        const next = await fetchRows();
        if (next === null) return;
        // The app bench's "rows arrived" mark: replies parsed, validated and merged; not yet drawn.
        document.body.dataset.rowsArrivedAt = String(performance.now());
        setState(next);
        const wanted = getState().snapshot?.rowsVersion;
        if (wanted === undefined || wanted === next.rowsVersion) return;
      }
    } finally {
      rowsFetch = null;
    }
  })();
  return rowsFetch;
}

async function runSnapshotCommand<M extends SnapshotMethod>(label: string, method: M, request: MethodRequest<M>): Promise<boolean> {
  setState({ pendingCommand: label });
  try {
    const snapshot = await api.call(method, request);
    applySnapshot(snapshot as SessionSnapshot);
    return true;
  } catch (error) {
    const message = errorMessage(error);
    // The core records most failures of session commands in snapshot.errors too; fetch the
    // snapshot and show the failure once, as the core's (dismissable for every window).
    const latest = await api.call('getSession', {}).catch(() => null);
    if (latest !== null) applySnapshot(latest);
    const recorded = (latest ?? getState().snapshot)?.errors.some((entry) => message.includes(entry.message) || entry.message.includes(message)) ?? false;
    if (!recorded) pushLocalError(label, message);
    return false;
  } finally {
    if (getState().pendingCommand === label) setState({ pendingCommand: null });
  }
}

function isBusy(): boolean {
  const state = getState();
  return state.pendingCommand !== null || (state.snapshot?.busy ?? null) !== null;
}

const loadSession = (): Promise<boolean> => runSnapshotCommand('load session', 'getSession', {});
export const openDefault = (): Promise<boolean> => runSnapshotCommand('open default', 'openDefault', {});
export const openEngine = (library: string): Promise<boolean> => runSnapshotCommand('open engine', 'openEngine', { library });
export const openBundle = (dir: string): Promise<boolean> => runSnapshotCommand('open bundle', 'openBundle', { dir });
export const openRun = (dir: string): Promise<boolean> => runSnapshotCommand('open run', 'openRun', { dir });
export const setOracle = (oracle: OracleChoice): Promise<boolean> => runSnapshotCommand('set oracle', 'setOracle', { oracle });
export const setIsolation = (isolation: 'process' | 'thread'): Promise<boolean> => runSnapshotCommand('set isolation', 'setIsolation', { isolation });
export const setTeacherForce = (on: boolean): Promise<boolean> => runSnapshotCommand('set teacher forcing', 'setTeacherForce', { on });
export const setEngineOptions = (options: Record<string, string>): Promise<boolean> =>
  runSnapshotCommand('set engine options', 'setEngineOptions', { options });
export const setContractsFile = (file: string | null): Promise<boolean> =>
  runSnapshotCommand(file === null ? 'clear contracts file' : 'set contracts file', 'setContractsFile', { file });
export const setEveryBoundaryBitExact = (everyBoundary: boolean): Promise<boolean> =>
  runSnapshotCommand('set default contract', 'setDefaultContract', { contract: 'bit_exact', everyBoundary });
export const setMapFile = (file: string | null): Promise<boolean> =>
  runSnapshotCommand(file === null ? 'clear map file' : 'set map file', 'setMapFile', { file });
export const setOracleBundle = (dir: string | null): Promise<boolean> =>
  runSnapshotCommand(dir === null ? 'clear oracle' : 'set oracle bundle', 'setOracleBundle', { dir });
export const dismissCoreError = (id: number): Promise<boolean> => runSnapshotCommand('dismiss error', 'dismissError', { id });

// Engine-driving commands are refused while something runs: the core would queue or reject
// them, and a double key press should not silently run two passes.
function engineCommand<M extends SnapshotMethod>(label: string, method: M): () => Promise<boolean> {
  return async () => {
    if (isBusy()) return false;
    return runSnapshotCommand(label, method, {} as MethodRequest<M>);
  };
}

export const prefill = engineCommand('prefill', 'prefill');
export const step = engineCommand('step', 'step');
export const runToEnd = engineCommand('run to end', 'runToEnd');
export const runToFirstDivergence = engineCommand('run to first divergence', 'runToFirstDivergence');
export const resetSession = engineCommand('reset', 'reset');

let started = false;

/** Wire the client to the store once: events, protocol errors, and (re)loading on connect. */
export function startSession(): void {
  if (started) return;
  started = true;
  api.onProtocolError((message) => pushLocalError('core message', message));
  api.subscribe((event) => {
    if (event.type === 'snapshot') applySnapshot(event.snapshot);
    else setState({ progress: { pass: event.pass, kind: event.kind, records: event.records, lastBoundary: event.lastBoundary } });
  });
  api.onConnection((state, detail) => {
    // A version held from before a reconnect may belong to another core (a restarted server):
    // the first rows after connecting are fetched whole.
    if (state === 'connected') setState({ connection: { state, detail }, rowsVersion: -1 });
    else setState({ connection: { state, detail } });
    if (state === 'connected') {
      void loadSession().then((ok) => {
        if (ok) void refreshRows();
      });
    }
  });
}

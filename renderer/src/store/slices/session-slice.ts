// The core's session as last reported, the connection to it, and the live progress of a pass.
import type { SessionSnapshot } from '../../../../protocol/inspector-api.ts';
import type { ConnectionState } from '../../api/connection-state.ts';

export interface PassProgress {
  pass: number;
  kind: 'prefill' | 'decode';
  records: number;
  lastBoundary: string | null;
}

export interface SessionSlice {
  snapshot: SessionSnapshot | null;
  connection: { state: ConnectionState; detail: string };
  /** The latest progress event; cleared when a snapshot says nothing is busy. */
  progress: PassProgress | null;
  /** Commands this renderer sent and is awaiting (buttons disable at once, before the core's busy flag arrives). */
  pendingCommand: string | null;
}

export const initialSessionSlice: SessionSlice = {
  snapshot: null,
  connection: { state: 'connecting', detail: '' },
  progress: null,
  pendingCommand: null,
};

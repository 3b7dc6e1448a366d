// Serve mode's host: the inspector API over one WebSocket to the core that served this page.
// Calls are CallFrames answered by ReplyFrames with the same id; EventFrames carry snapshots and
// progress. The socket reconnects with backoff; the core keeps the session, so a reconnect only
// has to fetch the snapshot again (the bootstrap does that on "connected").
import {
  EventFrameSchema,
  InspectorCallError,
  ReplyFrameSchema,
  type CallFrame,
  type InspectorEvent,
  type InspectorMethod,
  type InspectorTransport,
  type MethodRequest,
  type MethodResponse,
} from '../../../protocol/inspector-api.ts';
import type { ConnectionListener, ConnectionState } from './connection-state.ts';

interface PendingCall {
  readonly frame: CallFrame;
  resolve(response: unknown): void;
  reject(error: Error): void;
  /** Sent on the current socket: if it drops, the call's outcome is unknown and it is rejected. */
  sent: boolean;
}

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 5000;

export class WebSocketTransport implements InspectorTransport {
  private socket: WebSocket | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, PendingCall>();
  private readonly eventListeners = new Set<(event: InspectorEvent) => void>();
  private readonly connectionListeners = new Set<ConnectionListener>();
  private backoffMs = BACKOFF_FIRST_MS;
  private state: ConnectionState = 'connecting';

  constructor(private readonly url: string) {
    this.open();
  }

  call<M extends InspectorMethod>(method: M, request: MethodRequest<M>): Promise<MethodResponse<M>> {
    return new Promise<MethodResponse<M>>((resolve, reject) => {
      const id = this.nextId++;
      const entry: PendingCall = {
        frame: { id, method, request },
        // The validating layer above checks the shape; this layer only matches replies to calls.
        resolve: (response) => resolve(response as MethodResponse<M>),
        reject,
        sent: false,
      };
      this.pending.set(id, entry);
      this.send(entry);
    });
  }

  subscribe(listener: (event: InspectorEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onConnection(listener: ConnectionListener): () => void {
    this.connectionListeners.add(listener);
    listener(this.state, '');
    return () => this.connectionListeners.delete(listener);
  }

  private setState(state: ConnectionState, detail: string): void {
    this.state = state;
    for (const listener of this.connectionListeners) listener(state, detail);
  }

  private open(): void {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.backoffMs = BACKOFF_FIRST_MS;
      this.setState('connected', '');
      // Calls made while the socket was down were queued; send them now.
      for (const entry of this.pending.values()) if (!entry.sent) this.send(entry);
    });
    socket.addEventListener('message', (message) => this.receive(message.data));
    socket.addEventListener('close', (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      for (const [id, entry] of this.pending) {
        if (!entry.sent) continue;
        this.pending.delete(id);
        entry.reject(
          new InspectorCallError('disconnected', `${entry.frame.method}: the connection to the core closed before it answered (code ${close.code})`),
        );
      }
      this.setState('reconnecting', `connection closed (code ${close.code}); retrying in ${Math.round(this.backoffMs)} ms`);
      const delay = this.backoffMs;
      this.backoffMs = Math.min(BACKOFF_MAX_MS, this.backoffMs * 2);
      window.setTimeout(() => this.open(), delay);
    });
  }

  private send(entry: PendingCall): void {
    const socket = this.socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify(entry.frame));
    entry.sent = true;
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      this.emitTransportError(`a frame from the core is not JSON (${data.slice(0, 80)})`);
      return;
    }
    if (typeof parsed === 'object' && parsed !== null && 'id' in parsed) {
      const reply = ReplyFrameSchema.safeParse(parsed);
      if (!reply.success) {
        this.emitTransportError(`a reply frame from the core is malformed: ${reply.error.issues[0]?.message ?? 'unknown'}`);
        return;
      }
      const entry = this.pending.get(reply.data.id);
      if (entry === undefined) return;
      this.pending.delete(reply.data.id);
      if (reply.data.ok) entry.resolve(reply.data.response);
      else entry.reject(new InspectorCallError(reply.data.error.code, reply.data.error.message));
      return;
    }
    const frame = EventFrameSchema.safeParse(parsed);
    if (!frame.success) {
      this.emitTransportError(`an event frame from the core is malformed: ${frame.error.issues[0]?.message ?? 'unknown'}`);
      return;
    }
    for (const listener of this.eventListeners) listener(frame.data.event);
  }

  private transportErrorListener: ((message: string) => void) | null = null;

  /** Malformed frames are not any call's failure; they are reported to whoever listens here. */
  onTransportError(listener: (message: string) => void): void {
    this.transportErrorListener = listener;
  }

  private emitTransportError(message: string): void {
    this.transportErrorListener?.(message);
  }
}

/** ws://<this page's host>/api?token=<the page URL's token>: the core that served the page. */
export function serveModeUrl(): string {
  const token = new URLSearchParams(window.location.search).get('token') ?? '';
  const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${window.location.host}/api?token=${encodeURIComponent(token)}`;
}

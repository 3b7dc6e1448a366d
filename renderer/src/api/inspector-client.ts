// The renderer's one API client. It picks the host once: the Electron preload when it exposed
// `window.traceInspector`, otherwise serve mode's WebSocket. Everything above this file sees the
// same validated InspectorTransport (each reply validated once, by whichever host received it)
// and cannot tell which host it has.
import type { InspectorTransport } from '../../../protocol/inspector-api.ts';
import type { ConnectionListener } from './connection-state.ts';
import { preloadTransport } from './preload-transport.ts';
import { requestCheckingTransport, validatingTransport } from './validating-transport.ts';
import { WebSocketTransport, serveModeUrl } from './websocket-transport.ts';

export interface InspectorClient extends InspectorTransport {
  /** Connection changes; the preload host reports "connected" once. */
  onConnection(listener: ConnectionListener): () => void;
  /** Frames or events that failed validation (not tied to any call). */
  onProtocolError(listener: (message: string) => void): void;
}

function createClient(): InspectorClient {
  let protocolErrorListener: ((message: string) => void) | null = null;
  const reportProtocolError = (message: string): void => protocolErrorListener?.(message);
  const preload = window.traceInspector;
  if (preload !== undefined) {
    // The preload parsed every reply and event with the API's schemas as it entered the renderer.
    const checked = requestCheckingTransport(preloadTransport(preload));
    return {
      call: checked.call,
      subscribe: checked.subscribe,
      onConnection(listener) {
        listener('connected', '');
        return () => undefined;
      },
      onProtocolError(listener) {
        protocolErrorListener = listener;
      },
    };
  }
  const socket = new WebSocketTransport(serveModeUrl());
  socket.onTransportError(reportProtocolError);
  const validated = validatingTransport(socket, reportProtocolError);
  return {
    call: validated.call,
    subscribe: validated.subscribe,
    onConnection: (listener) => socket.onConnection(listener),
    onProtocolError(listener) {
      protocolErrorListener = listener;
    },
  };
}

export const api: InspectorClient = createClient();
